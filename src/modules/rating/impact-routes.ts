import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import { streamWithProgress, wantsEventStream } from '../../platform/http/event-stream.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import type { CompanyService } from '../companies/index.ts';
import { ImpactReportSchema, ImpactRequestSchema } from './impact-schemas.ts';
import type { ImpactService } from './impact-service.ts';
import { VersionParamsSchema } from './rate-book-schemas.ts';

/** POST /admin/rate-books/:ref/versions/:n/impact: a version re-rating the book in force. */
export function impactRoutes(deps: {
  impact: ImpactService;
  companies: CompanyService;
  adminAuth: onRequestAsyncHookHandler;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(ImpactReportSchema);
    app.post(
      '/admin/rate-books/:rate_book_reference/versions/:version_number/impact',
      {
        onRequest: deps.adminAuth,
        // Nothing is written: the request itself is the record (who tested which version, when).
        config: { auditRows: false },
        schema: {
          operationId: 'rateBooks.impact',
          tags: ['admin', 'rate books'],
          summary: 'Impact test: re-rate the policies in force on a version',
          description:
            'Re-rates every policy of the rate book’s product in force now on the version (a draft, typically) and compares, per policy, the fixed premium for its term incl. IPT (`pricing.base_premium`) and the rate per unit incl. IPT (`pricing.usage_rate`) with what the version gives, rating on the day the term started. Answers the count and premiums in seven bands of change of the fixed premium, the totals, the 20 largest movers, and the policies the version declines or cannot rate, with reasons. Another company’s rate book: 404. With `Accept: text/event-stream` the answer is a stream of server-sent events: `progress` (the counts so far, after each batch of policies), then `done` (the report) or `error`.',
          security: [{ adminKey: [] }],
          params: VersionParamsSchema,
          body: ImpactRequestSchema,
          response: { 200: Type.Ref('RateBookImpact'), ...problemResponses(401, 403, 404, 422) },
        },
      },
      async (request, reply) => {
        const { company_reference: company, environment } = request.body;
        const tenant = await deps.companies.tenantOf(company, environment);
        const { rate_book_reference: reference, version_number: number } = request.params;
        if (!wantsEventStream(request)) return deps.impact.run(tenant, reference, Number(number));
        return streamWithProgress(
          request,
          reply,
          (onProgress) => deps.impact.run(tenant, reference, Number(number), onProgress),
          'The impact test stopped; it changes nothing, so it can be run again',
        );
      },
    );
  };
}
