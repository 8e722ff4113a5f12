import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { AppError, notFound } from '../../platform/errors.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import { MONTH_PATTERN } from '../../platform/instants.ts';
import { londonDate, londonMidnight } from '../../platform/london-calendar.ts';
import { fromPence } from '../../platform/money.ts';
import { asTenant, findCompanyByReference } from '../companies/index.ts';
import { listCappedRenewals, type RenewalPriceRecord } from '../rating/index.ts';
import type { ReportDeps } from './report-routes.ts';
import { csvLine } from '../../platform/csv.ts';

/** At most two years of months in one report. */
export const MAX_RENEWAL_CAP_MONTHS = 24;

// Years 1000–9999, as every month the API takes: the bounds become instants (platform/instants.ts).
const month = (description: string) =>
  Type.String({ pattern: MONTH_PATTERN, description, examples: ['2026-06'] });

const QuerySchema = Type.Object(
  {
    company_reference: Type.String({ minLength: 1, maxLength: 100 }),
    environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')]),
    from: month('The first Europe/London month, included (`YYYY-MM`).'),
    to: month(`The last Europe/London month, included; at most ${String(MAX_RENEWAL_CAP_MONTHS)} months.`),
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('csv')], {
        default: 'json',
        description: '`json` (months and products, each with its renewals) or `csv` (a row per renewal).',
      }),
    ),
  },
  { additionalProperties: false },
);

const pounds = (description: string) =>
  Type.Union([Type.Number(), Type.Null()], { description: `${description} (pounds).` });

const CappedRenewalSchema = Type.Object(
  {
    policy_reference: Type.String(),
    start_date: Type.String({ format: 'date', description: 'The renewal’s first London day.' }),
    renewal_yearly_premium_estimate: pounds('The renewal price, at the cap'),
    new_business_yearly_premium_estimate: pounds('The equivalent new-business price'),
    last_year_yearly_premium_estimate: pounds('Last year’s price'),
    capped: Type.Array(Type.String(), { description: '`fixed`, `per_unit`: the parts held down.' }),
    rate_book_reference: Type.Union([Type.String(), Type.Null()]),
    version_number: Type.Union([Type.Integer(), Type.Null()]),
  },
  { additionalProperties: false },
);
type CappedRenewal = Static<typeof CappedRenewalSchema>;

const GroupSchema = Type.Object(
  {
    month: Type.String({ description: 'The Europe/London month the renewals start in (`YYYY-MM`).' }),
    product_reference: Type.String(),
    count: Type.Integer({ description: 'Renewals of the product starting that month priced at the cap.' }),
    renewals: Type.Array(CappedRenewalSchema),
  },
  { additionalProperties: false },
);
type Group = Static<typeof GroupSchema>;

const ReportSchema = Type.Object(
  {
    company_reference: Type.String(),
    environment: Type.String(),
    from: Type.String(),
    to: Type.String(),
    generated_at: Type.String({ format: 'date-time' }),
    total: Type.Integer(),
    groups: Type.Array(GroupSchema, { description: 'By month, then product reference.' }),
  },
  { additionalProperties: false },
);

const CSV_COLUMNS = [
  'month',
  'product_reference',
  'policy_reference',
  'start_date',
  'renewal_yearly_premium_estimate',
  'new_business_yearly_premium_estimate',
  'last_year_yearly_premium_estimate',
  'capped',
  'rate_book_reference',
  'version_number',
] as const;

const monthsBetween = (from: string, to: string): number =>
  (Number(to.slice(0, 4)) - Number(from.slice(0, 4))) * 12 + Number(to.slice(5)) - Number(from.slice(5)) + 1;

const nextMonth = (value: string): string => {
  const year = Number(value.slice(0, 4));
  const m = Number(value.slice(5));
  return m === 12 ? `${String(year + 1)}-01` : `${String(year)}-${String(m + 1).padStart(2, '0')}`;
};

const money = (pence: number | null): number | null => (pence === null ? null : fromPence(pence));

function renewalOf(record: RenewalPriceRecord): CappedRenewal {
  return {
    policy_reference: record.policyReference,
    start_date: londonDate(record.startAt),
    renewal_yearly_premium_estimate: money(record.renewalYearlyPence),
    new_business_yearly_premium_estimate: money(record.newBusinessYearlyPence),
    last_year_yearly_premium_estimate: money(record.lastYearYearlyPence),
    capped: [...record.capped],
    rate_book_reference: record.rateBookReference,
    version_number: record.versionNumber,
  };
}

/** The renewals grouped by London month of their start, then product. */
function grouped(records: readonly RenewalPriceRecord[]): Group[] {
  const groups = new Map<string, Group>();
  for (const record of records) {
    const renewal = renewalOf(record);
    const key = `${renewal.start_date.slice(0, 7)} ${record.productReference}`;
    const group = groups.get(key) ?? {
      month: renewal.start_date.slice(0, 7),
      product_reference: record.productReference,
      count: 0,
      renewals: [],
    };
    group.count++;
    group.renewals.push(renewal);
    groups.set(key, group);
  }
  return [...groups.values()].sort(
    (a, b) => a.month.localeCompare(b.month) || a.product_reference.localeCompare(b.product_reference),
  );
}

/** `GET /admin/reports/renewals-at-cap`: renewals priced at the equivalent new-business price. */
export function renewalCapRoutes(deps: ReportDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/admin/reports/renewals-at-cap',
      {
        onRequest: deps.adminAuth,
        config: { auditReads: true },
        schema: {
          operationId: 'reports.renewalsAtCap',
          tags: ['admin'],
          summary: 'Renewals priced at the cap: per product and month',
          description: [
            'The automatic renewals of policies rated by Milepost whose price was held down to the equivalent new-business price (FCA ICOBS 6B.2.1R/6B.2.2R: a renewal may not cost more than the same risk quoted as new business through the same channel), for renewals starting in the Europe/London months `from` to `to` (both included, at most 24).',
            'JSON: per month and product, the count and each renewal (its price, the new-business price, last year’s price, the parts capped, the rate book version). CSV: a row per renewal with its month and product. The admin key, or a staff session of operations or admin.',
          ].join('\n\n'),
          security: [{ adminKey: [] }],
          querystring: QuerySchema,
          response: {
            200: {
              description: 'The report.',
              content: {
                'application/json': { schema: ReportSchema },
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
        const span = monthsBetween(query.from, query.to);
        if (span < 1 || span > MAX_RENEWAL_CAP_MONTHS) {
          const message =
            span < 1 ? 'is before from' : `is more than ${String(MAX_RENEWAL_CAP_MONTHS)} months from from`;
          throw new AppError('VALIDATION_FAILED', `to ${message}`, {
            errors: [{ path: '/querystring/to', message }],
          });
        }
        const company = await findCompanyByReference(deps.db, query.company_reference);
        if (company === undefined) throw notFound('company');
        const records = await listCappedRenewals(deps.db, asTenant(company.id, query.environment), {
          fromAt: londonMidnight(`${query.from}-01`),
          toAt: londonMidnight(`${nextMonth(query.to)}-01`),
        });
        const groups = grouped(records);
        const format = query.format ?? 'json';
        const name = `renewals-at-cap-${query.company_reference}-${query.environment}-${query.from}-${query.to}`;
        void reply
          .header('cache-control', 'no-store')
          .header('content-disposition', `attachment; filename="${name}.${format}"`);
        if (format === 'csv') {
          const lines = [csvLine(CSV_COLUMNS)];
          for (const group of groups)
            for (const r of group.renewals)
              lines.push(
                csvLine([
                  group.month,
                  group.product_reference,
                  r.policy_reference,
                  r.start_date,
                  r.renewal_yearly_premium_estimate?.toFixed(2),
                  r.new_business_yearly_premium_estimate?.toFixed(2),
                  r.last_year_yearly_premium_estimate?.toFixed(2),
                  r.capped.join(' '),
                  r.rate_book_reference,
                  r.version_number,
                ]),
              );
          return reply.type('text/csv; charset=utf-8').send(lines.join(''));
        }
        return reply.type('application/json; charset=utf-8').send({
          company_reference: query.company_reference,
          environment: query.environment,
          from: query.from,
          to: query.to,
          generated_at: deps.clock.now().toISOString(),
          total: records.length,
          groups,
        });
      },
    );
  };
}
