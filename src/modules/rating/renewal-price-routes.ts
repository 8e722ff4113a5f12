import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { notFound } from '../../platform/errors.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import type { Executor } from '../../schema.ts';
import { ClientHeadersSchema, tenantOf, type ClientAuth } from '../companies/index.ts';
import { findPolicy } from '../policies/index.ts';
import { listPolicyRenewalPrices } from './renewal-price-repository.ts';
import { RenewalPriceSchema, renewalPriceView } from './renewal-price-views.ts';

/** `GET /policys/:policy_reference/renewal-prices`: how a rated policy's automatic renewals were priced. */
export function renewalPriceRoutes(deps: {
  db: Executor;
  clientAuth: ClientAuth;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(RenewalPriceSchema);
    app.get(
      '/policys/:policy_reference/renewal-prices',
      {
        onRequest: deps.clientAuth(),
        schema: {
          operationId: 'policies.renewalPrices',
          tags: ['rate books'],
          summary: 'How the policy’s automatic renewals were priced',
          description:
            'For a policy rated by Milepost (its pricing’s `quote_model_reference` names a rate book version of the company): each pricing of an automatic renewal, newest first — for its notice and when it was made — with the renewal price, the equivalent new-business price it may not exceed (FCA ICOBS 6B.2.1R/6B.2.2R), last year’s price, whether the cap applied and the rate book version used; or why the version would not renew it. Empty for any other policy. Another company’s policy: 404.',
          security: [{ clientId: [], clientSecret: [] }],
          headers: ClientHeadersSchema,
          params: Type.Object({ policy_reference: Type.String({ minLength: 1, maxLength: 100 }) }),
          response: {
            200: Type.Object(
              {
                policy_reference: Type.String(),
                renewal_prices: Type.Array(Type.Ref('RenewalPrice')),
              },
              { additionalProperties: false },
            ),
            ...problemResponses(401, 404, 422),
          },
        },
      },
      async (request) => {
        const tenant = tenantOf(request);
        const reference = request.params.policy_reference;
        const policy = await findPolicy(deps.db, tenant, reference);
        if (policy === undefined) throw notFound('policy');
        const prices = await listPolicyRenewalPrices(deps.db, tenant, policy.id);
        return { policy_reference: reference, renewal_prices: prices.map(renewalPriceView) };
      },
    );
  };
}
