import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import { problemResponses } from '../../platform/http/problem.ts';
import { ClientHeadersSchema, tenantOf } from '../companies/index.ts';
import { PolicyScoresSchema, ScoresParamsSchema, ScoresQuerySchema } from './score-schemas.ts';
import type { ScoreReader, ScoreService } from './score-service.ts';

const readerOf = (request: FastifyRequest): ScoreReader =>
  request.policyholder === null
    ? { kind: 'client' }
    : { kind: 'policyholder', userId: request.policyholder.userId };

/** GET /policys/:policy_reference/scores. */
export function scoreRoutes(deps: {
  scores: ScoreService;
  /** Client credentials or a policyholder's token (the auth module's `clientOrPolicyholder`). */
  authenticate: onRequestAsyncHookHandler;
}): FastifyPluginAsyncTypebox {
  const { scores, authenticate } = deps;
  return async (app) => {
    app.addSchema(PolicyScoresSchema);
    app.get(
      '/policys/:policy_reference/scores',
      {
        onRequest: authenticate,
        schema: {
          operationId: 'scores.listMonths',
          tags: ['scores'],
          summary: 'Driving scores by month',
          description:
            'Each Europe/London month from `from` to `to` with its driving score: the distance-weighted mean of the scores of the trips cut from the policy’s devices (docs/api.md, "Driving scores", gives the formula, the weights and a worked example). A month is provisional until it is over and 50 miles of scored trips are in it. Client credentials, or a policyholder’s access token for their own policies only; another company’s or policyholder’s policy answers 404.',
          security: [{ clientId: [], clientSecret: [] }, { policyholderToken: [] }],
          headers: ClientHeadersSchema,
          params: ScoresParamsSchema,
          querystring: ScoresQuerySchema,
          response: { 200: Type.Ref('PolicyScores'), ...problemResponses(401, 404, 422) },
        },
      },
      async (request) =>
        scores.listMonths(
          tenantOf(request),
          readerOf(request),
          request.params.policy_reference,
          request.query,
        ),
    );
  };
}
