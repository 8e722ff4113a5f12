import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestAsyncHookHandler } from 'fastify';
import { sql, type SelectQueryBuilder } from 'kysely';
import { Type, type Static } from 'typebox';
import type { Database, Executor } from '../../schema.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import { userReferences } from '../accounts/index.ts';
import { companyIdOfReference, companyLabels } from '../companies/index.ts';

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
  const limit = query.limit ?? 25;
  const company = query.company_reference;
  // Both filters narrow `policies` itself (the company by a subquery evaluated once), so that the
  // planner can read a tenant's policies in order of creation from policies_tenant_idx.
  const scoped = <Q extends SelectQueryBuilder<Database, 'policies', object>>(q: Q): Q => {
    let out = q;
    if (query.environment !== undefined) out = out.where('policies.environment', '=', query.environment) as Q;
    if (company !== undefined)
      out = out.where('policies.company_id', '=', companyIdOfReference(db, company)) as Q;
    return out;
  };
  // NOTE: the exact reference is looked up apart from the partial matches, and those are ordered by
  // creation alone, so that a term matching a large share of the policies (an email domain, a common
  // surname, "SW1A") can be read newest first from an index on created_at (policies_created_idx) and
  // stop at `limit`: sorting every match costs 30 ms for "smith" and 250–350 ms for "exam" at a
  // million policies, against 3 ms and 1 ms read newest first (bench/search.ts). A rare term still
  // goes through the trigram index: the planner weighs the two by the estimated matches.
  const exact = scoped(
    db
      .selectFrom('policies')
      .select(['policies.id', 'policies.created_at', sql<boolean>`true`.as('exact')])
      .where('policies.policy_reference', '=', text),
  );
  const partial = scoped(
    db
      .selectFrom('policies')
      .select(['policies.id', 'policies.created_at', sql<boolean>`false`.as('exact')])
      .where((eb) =>
        eb.or([
          eb('policies.search_text', 'like', likePattern(text)),
          ...(squeezed !== text ? [eb('policies.search_text', 'like', likePattern(squeezed))] : []),
        ]),
      )
      .where('policies.policy_reference', '<>', text)
      .orderBy('policies.created_at', 'desc')
      .limit(limit),
  );
  // The matches are limited first and only they are joined to their latest version: a common
  // surname can match thousands of policies.
  const matches = db
    .selectFrom(exact.unionAll(db.selectFrom(partial.as('partial')).selectAll()).as('found'))
    .selectAll()
    .orderBy('exact', 'desc')
    .orderBy('created_at', 'desc')
    .limit(limit);
  const select = db
    .with('matched', () => matches)
    .selectFrom('matched as m')
    .innerJoin('policies as p', 'p.id', 'm.id')
    .innerJoin(companyLabels(db).as('c'), 'c.id', 'p.company_id')
    .leftJoin(userReferences(db).as('u'), 'u.id', 'p.user_id')
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
  adminAuth: onRequestAsyncHookHandler;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/admin/policies',
      {
        onRequest: deps.adminAuth,
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
