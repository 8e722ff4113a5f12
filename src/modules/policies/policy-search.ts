import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { preHandlerAsyncHookHandler } from 'fastify';
import { sql } from 'kysely';
import { Type, type Static } from 'typebox';
import type { Executor } from '../../schema.ts';
import { problemResponses } from '../../platform/http/problem.ts';

export const PolicySearchQuerySchema = Type.Object(
  {
    q: Type.String({
      minLength: 2,
      maxLength: 100,
      description:
        'Part of a policy reference, the policyholder’s names or email, a vehicle registration or a postcode (either case; spaces in a registration or postcode optional).',
      examples: ['sw1a'],
    }),
    environment: Type.Optional(Type.Union([Type.Literal('sandbox'), Type.Literal('production')])),
    company_reference: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
  },
  { additionalProperties: false },
);

const nullableText = Type.Union([Type.String(), Type.Null()]);

export const PolicySearchResultSchema = Type.Object({
  data: Type.Array(
    Type.Object({
      policy_reference: Type.String(),
      company_reference: Type.String(),
      company_name: Type.String(),
      client_id: Type.String(),
      environment: Type.String(),
      status: Type.String(),
      user_reference: nullableText,
      policyholder_name: nullableText,
      email: nullableText,
      vehicle_reg: nullableText,
      postcode: nullableText,
      start_date: Type.String({ format: 'date-time' }),
      end_date: Type.String({ format: 'date-time' }),
    }),
  ),
});

/** `100%_off` matched literally: LIKE's wildcards in what was typed are escaped. */
const likePattern = (text: string): string => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * Policies whose search text (migration 0027) contains `q` or, for a registration or postcode typed
 * with spaces, `q` without them: partial and case-insensitive, through the trigram index on
 * PostgreSQL. Exact reference matches first, then the most recently created.
 */
export async function searchPolicies(db: Executor, query: Static<typeof PolicySearchQuerySchema>) {
  const text = query.q.trim();
  const squeezed = text.replace(/\s+/g, '');
  // The matches are limited first and only they are joined to their latest version: a common
  // surname can match thousands of policies.
  let matches = db
    .selectFrom('policies as p')
    .innerJoin('companies as c', 'c.id', 'p.company_id')
    .select(['p.id', 'p.created_at', sql<boolean>`p.policy_reference = ${text}`.as('exact')])
    .where((eb) =>
      eb.or([
        eb('p.search_text', 'like', likePattern(text)),
        ...(squeezed !== text ? [eb('p.search_text', 'like', likePattern(squeezed))] : []),
      ]),
    )
    .orderBy('exact', 'desc')
    .orderBy('p.created_at', 'desc')
    .limit(query.limit ?? 25);
  if (query.environment !== undefined) matches = matches.where('p.environment', '=', query.environment);
  if (query.company_reference !== undefined)
    matches = matches.where('c.company_reference', '=', query.company_reference);
  const select = db
    .with('matched', () => matches)
    .selectFrom('matched as m')
    .innerJoin('policies as p', 'p.id', 'm.id')
    .innerJoin('companies as c', 'c.id', 'p.company_id')
    .leftJoin('users as u', 'u.id', 'p.user_id')
    .innerJoinLateral(
      (eb) =>
        eb
          .selectFrom('policy_versions as v')
          .select('v.snapshot')
          .whereRef('v.policy_id', '=', 'p.id')
          .where('v.snapshot', 'is not', null)
          .orderBy('v.sequence', 'desc')
          .limit(1)
          .as('latest'),
      (join) => join.onTrue(),
    )
    .select([
      'p.policy_reference',
      'c.company_reference',
      'c.name as company_name',
      'c.client_id',
      'p.environment',
      'p.status',
      'u.user_reference',
      'p.current_start_at',
      'p.current_end_at',
      sql<
        string | null
      >`concat_ws(' ', latest.snapshot #>> '{proposer,first_names}', latest.snapshot #>> '{proposer,last_names}')`.as(
        'policyholder_name',
      ),
      sql<string | null>`latest.snapshot #>> '{proposer,email}'`.as('email'),
      sql<string | null>`latest.snapshot #>> '{vehicle,reg}'`.as('vehicle_reg'),
      sql<string | null>`latest.snapshot #>> '{policy,address,postcode}'`.as('postcode'),
    ])
    .orderBy('m.exact', 'desc')
    .orderBy('m.created_at', 'desc');
  const rows = await select.execute();
  return rows.map((r) => ({
    policy_reference: r.policy_reference,
    company_reference: r.company_reference,
    company_name: r.company_name,
    client_id: r.client_id,
    environment: r.environment,
    status: r.status,
    user_reference: r.user_reference ?? null,
    policyholder_name: r.policyholder_name === '' ? null : r.policyholder_name,
    email: r.email,
    vehicle_reg: r.vehicle_reg,
    postcode: r.postcode,
    start_date: r.current_start_at.toISOString(),
    end_date: r.current_end_at.toISOString(),
  }));
}

/** `GET /admin/policies`: the console's search box. */
export function policySearchRoutes(deps: {
  db: Executor;
  adminAuth: preHandlerAsyncHookHandler;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/admin/policies',
      {
        preHandler: deps.adminAuth,
        schema: {
          operationId: 'policies.search',
          tags: ['admin'],
          summary: 'Find policies across companies',
          description:
            'By part of a policy reference, the policyholder’s names or email, a vehicle registration or a postcode, in either case. At most `limit` policies: an exact reference first, then the newest.',
          security: [{ adminKey: [] }],
          querystring: PolicySearchQuerySchema,
          response: { 200: PolicySearchResultSchema, ...problemResponses(401, 403, 422) },
        },
      },
      async (request) => ({ data: await searchPolicies(deps.db, request.query) }),
    );
  };
}
