import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { findCompanyByReference } from '../companies/index.ts';
import { Type } from 'typebox';
import { AppError, notFound } from '../../platform/errors.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import { asTenant } from '../companies/index.ts';
import { openCashReport } from './cash-report.ts';
import { CashReportQuerySchema, CashReportSchema } from './cash-schemas.ts';
import type { ReportDeps } from './report-routes.ts';
import { cashRange, MAX_CASH_REPORT_DAYS } from './rules/cash-summary.ts';

const RANGE_ERRORS = {
  FROM_NOT_A_DATE: { path: '/querystring/from', message: 'is not a calendar date' },
  TO_NOT_A_DATE: { path: '/querystring/to', message: 'is not a calendar date' },
  TO_BEFORE_FROM: { path: '/querystring/to', message: 'is before from' },
  SPAN_TOO_LONG: {
    path: '/querystring/to',
    message: `is more than ${String(MAX_CASH_REPORT_DAYS)} days from from (inclusive)`,
  },
} as const;

/** `GET /admin/reports/cash`: every payment and refund of a range, and what they add up to per day. */
export function cashRoutes(deps: ReportDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/admin/reports/cash',
      {
        onRequest: deps.adminAuth,
        config: { auditReads: true },
        schema: {
          operationId: 'reports.cash',
          tags: ['admin'],
          summary: 'Cash report: payments, refunds and what was collected per day',
          description: [
            'Every card payment and refund of the company in the environment created on the London days `from` to `to` (both included, at most 366), in created order, with the processor’s references and the policy version each settles (`version_type` nb, mta, cn, rn or st, and a statement’s period). Intents that never bound a policy are left out, as GET /payments leaves them out.',
            'Then a summary per day (the day a payment was asked for; statuses as at `generated_at`): `billed` = `charged` + `pending` + `outstanding`; `collected` = `charged` − `refunded`; `in_dunning` is the part of `outstanding` that dunning will try again. `totals` are the sums of the days, and the days the sums of the payments, to the penny.',
            'JSON holds both (or one, with `part`). CSV holds one table: `part=payments` (the default) or `part=summary` (a row per day, every day of the range, then a row whose `day` is `total`). The answer is streamed; the admin key, or a staff session of operations or admin.',
          ].join('\n\n'),
          security: [{ adminKey: [] }],
          querystring: CashReportQuerySchema,
          response: {
            200: {
              description: 'The report.',
              content: {
                'application/json': { schema: CashReportSchema },
                'text/csv': {
                  schema: Type.String({ description: 'RFC 4180, CRLF line ends, a header row.' }),
                },
              },
            },
            ...problemResponses(401, 403, 404, 422),
          },
        },
      },
      async (request, reply) => {
        const query = request.query;
        const range = cashRange(query.from, query.to);
        if (!range.ok) {
          const error = RANGE_ERRORS[range.reason];
          throw new AppError(
            'VALIDATION_FAILED',
            `${error.path.slice('/querystring/'.length)} ${error.message}`,
            {
              errors: [error],
            },
          );
        }
        const companyId = (await findCompanyByReference(deps.db, query.company_reference))?.id;
        if (companyId === undefined) throw notFound('company');
        const format = query.format ?? 'json';
        const part = query.part ?? (format === 'csv' ? 'payments' : 'all');
        const chunks = await openCashReport(deps.db, {
          tenant: asTenant(companyId, query.environment),
          companyReference: query.company_reference,
          environment: query.environment,
          fromOn: range.fromOn,
          toOn: range.toOn,
          format,
          part,
          generatedAt: deps.clock.now(),
        });
        const name = `cash-${query.company_reference}-${query.environment}-${range.fromOn}-${range.toOn}${part === 'summary' ? '-summary' : ''}`;
        void reply
          .header('cache-control', 'no-store')
          .header('content-disposition', `attachment; filename="${name}.${format}"`)
          .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8');
        // The typed reply knows the JSON and CSV bodies, not a stream of them: Fastify pipes a stream as is.
        return reply.send(Readable.from(chunks) as never);
      },
    );
  };
}
