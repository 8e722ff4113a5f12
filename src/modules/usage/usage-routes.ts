import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import { problemResponses } from '../../platform/http/problem.ts';
import { ClientHeadersSchema, tenantOf } from '../companies/index.ts';
import { MileageBudgetInputSchema, MileageBudgetParamsSchema, MileageBudgetSchema } from './usage-schemas.ts';
import type { BudgetReader, UsageService } from './usage-service.ts';

const tags = ['usage'];
const security = [{ clientId: [], clientSecret: [] }, { policyholderToken: [] }];
const readersNote =
  'Client credentials, or a policyholder’s access token (`Authorization: Bearer …` and no `client_secret`) for their own policies only; another company’s or policyholder’s policy answers 404.';

/** Who the request acts for: after `authenticate`, a policyholder's token sets `request.policyholder`. */
const readerOf = (request: FastifyRequest): BudgetReader =>
  request.policyholder === null
    ? { kind: 'client' }
    : { kind: 'policyholder', userId: request.policyholder.userId };

/** PUT and GET /policys/:policy_reference/mileage-budget. */
export function usageRoutes(deps: {
  usage: UsageService;
  /** Client credentials or a policyholder's token (the auth module's `clientOrPolicyholder`). */
  authenticate: onRequestAsyncHookHandler;
}): FastifyPluginAsyncTypebox {
  const { usage, authenticate } = deps;
  return async (app) => {
    app.addSchema(MileageBudgetSchema);

    app.put(
      '/policys/:policy_reference/mileage-budget',
      {
        onRequest: authenticate,
        schema: {
          operationId: 'usage.setMileageBudget',
          tags,
          summary: 'Set a monthly mileage budget',
          description: `Sets or replaces the policy’s monthly mileage budget: \`distance_per_month\` (> 0) in the \`usage_unit\` of the policy’s product, or miles when the policy names no registered product. When the policy’s journeys in a Europe/London calendar month first pass it, a \`usage.budget_exceeded\` event is sent and the policyholder is emailed, once a month (unless the product’s \`mileage_budget_alerts\` is false). A budget never changes what is billed. ${readersNote}`,
          security,
          headers: ClientHeadersSchema,
          params: MileageBudgetParamsSchema,
          body: MileageBudgetInputSchema,
          response: { 200: Type.Ref('MileageBudget'), ...problemResponses(401, 404, 422) },
        },
      },
      async (request) =>
        usage.setBudget(tenantOf(request), readerOf(request), request.params.policy_reference, request.body),
    );

    app.get(
      '/policys/:policy_reference/mileage-budget',
      {
        onRequest: authenticate,
        schema: {
          operationId: 'usage.getMileageBudget',
          tags,
          summary: 'Read the monthly mileage budget',
          description: `The budget with this Europe/London month’s distance against it. 404 \`NOT_FOUND\` when the policy has no budget. ${readersNote}`,
          security,
          headers: ClientHeadersSchema,
          params: MileageBudgetParamsSchema,
          response: { 200: Type.Ref('MileageBudget'), ...problemResponses(401, 404, 422) },
        },
      },
      async (request) =>
        usage.getBudget(tenantOf(request), readerOf(request), request.params.policy_reference),
    );
  };
}
