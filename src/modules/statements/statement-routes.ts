import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import { AppError, notFound } from '../../platform/errors.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import { streamWithProgress, wantsEventStream } from '../../platform/http/event-stream.ts';
import { dateTimeSchema } from '../../platform/instants.ts';
import { toPence } from '../../platform/money.ts';
import { ClientHeadersSchema, tenantOf, type ClientAuth, type CompanyService } from '../companies/index.ts';
import { isBillingDateString } from './rules/statement-rules.ts';
import { StatementSchema } from './statement-schemas.ts';
import type { PolicyholderAccess } from '../payments/index.ts';
import type { StatementService } from './statement-service.ts';

const security = [{ clientId: [], clientSecret: [] }];

type TypedApp = Parameters<FastifyPluginAsyncTypebox>[0];

interface StatementRouteDeps {
  statements: StatementService;
  companies: CompanyService;
  clientAuth: ClientAuth;
  adminAuth: onRequestAsyncHookHandler;
  policyholders?: PolicyholderAccess;
}

/** POST /statements, GET /statements and GET /statements/:policy_version_reference. */
function registerStatementRoutes(app: TypedApp, deps: StatementRouteDeps): void {
  const { statements, clientAuth, policyholders } = deps;
  const readers = policyholders?.authenticate ?? clientAuth();
  const checkOwner = async (request: FastifyRequest, reference: string): Promise<void> => {
    if (request.policyholder === null || policyholders === undefined) return;
    if (
      !(await policyholders.ownsPolicy(request.policyholder.tenant, request.policyholder.userId, reference))
    ) {
      throw notFound('statement');
    }
  };
  app.post(
    '/statements',
    {
      onRequest: clientAuth(),
      schema: {
        operationId: 'statements.create',
        tags: ['statements'],
        summary: 'Issue a statement now',
        description:
          'Bills every unbilled journey that started by `effective_date` (default now; late uploads land in the next statement), the subscription installments that fell due in the period and credits from the ledger, writes an `st` version, then charges `billed_premium` to the default card. A failed charge still returns the statement, with `payment: {payment_amount: null, error_message}`. An `effective_date` not after the previous statement’s end answers 409.',
        security,
        headers: ClientHeadersSchema,
        body: Type.Object(
          {
            policy_reference: Type.String({ minLength: 1, maxLength: 100 }),
            effective_date: Type.Optional(
              Type.Integer({
                minimum: 0,
                maximum: 4_102_444_800,
                description: 'UNIX seconds: the end of the period (inclusive).',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 201: StatementSchema, ...problemResponses(401, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const { policy_reference: reference, effective_date: effective } = request.body;
      const statement = await statements.create(
        tenantOf(request),
        reference,
        effective === undefined ? undefined : new Date(effective * 1000),
      );
      return reply
        .code(201)
        .header('location', `/statements/${encodeURIComponent(statement.policy_version_reference)}`)
        .send(statement);
    },
  );

  app.get(
    '/statements',
    {
      onRequest: readers,
      schema: {
        operationId: 'statements.list',
        tags: ['statements'],
        summary: 'Statements of a policy',
        description: 'Newest first. Page with `before` = the previous page’s `next_cursor`.',
        security: [...security, { policyholderToken: [] }],
        headers: ClientHeadersSchema,
        querystring: Type.Object(
          {
            policy_reference: Type.String({ minLength: 1, maxLength: 100 }),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
            before: Type.Optional(dateTimeSchema()),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            statements: Type.Array(StatementSchema),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
          ...problemResponses(401, 404, 422),
        },
      },
    },
    async (request) => {
      await checkOwner(request, request.query.policy_reference);
      return statements.list(tenantOf(request), request.query.policy_reference, {
        limit: request.query.limit ?? 20,
        before: request.query.before === undefined ? undefined : new Date(request.query.before),
      });
    },
  );

  app.get(
    '/statements/:policy_version_reference',
    {
      onRequest: readers,
      schema: {
        operationId: 'statements.get',
        tags: ['statements'],
        summary: 'Read a statement',
        security: [...security, { policyholderToken: [] }],
        headers: ClientHeadersSchema,
        params: Type.Object({ policy_version_reference: Type.String({ format: 'uuid' }) }),
        response: { 200: StatementSchema, ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => {
      const statement = await statements.get(tenantOf(request), request.params.policy_version_reference);
      await checkOwner(request, statement.policy_reference);
      return statement;
    },
  );
}

/** POST and GET /admin/credits: goodwill credits and a policy's ledger. */
function registerCreditRoutes(admin: TypedApp, deps: StatementRouteDeps): void {
  const { statements } = deps;
  admin.post(
    '/admin/credits',
    {
      schema: {
        operationId: 'statements.grantCredit',
        tags: ['admin'],
        summary: 'Grant a goodwill credit',
        description:
          'Adds a credit to the policy’s ledger; the next statements use it before charging the card.',
        security: [{ adminKey: [] }],
        body: Type.Object(
          {
            company_reference: Type.String({ minLength: 1, maxLength: 100 }),
            environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')]),
            policy_reference: Type.String({ minLength: 1, maxLength: 100 }),
            amount: Type.Number({
              exclusiveMinimum: 0,
              maximum: 100_000,
              description: 'Pounds, at most 2 decimals.',
            }),
            reason: Type.String({ minLength: 1, maxLength: 500 }),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({ policy_reference: Type.String(), balance: Type.Number() }),
          ...problemResponses(401, 404, 422),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      let pence: number;
      try {
        pence = toPence(body.amount);
      } catch {
        throw new AppError('VALIDATION_FAILED', 'amount has more than 2 decimal places', {
          errors: [{ path: '/body/amount', message: 'must have at most 2 decimal places' }],
        });
      }
      const tenant = await deps.companies.tenantOf(body.company_reference, body.environment);
      // The credit shows on the policy's statements (it is used by the next one).
      return reply
        .code(201)
        .header('location', `/statements?policy_reference=${encodeURIComponent(body.policy_reference)}`)
        .send(await statements.grantCredit(tenant, body.policy_reference, pence, body.reason));
    },
  );
  admin.get(
    '/admin/credits',
    {
      schema: {
        operationId: 'statements.credits',
        tags: ['admin'],
        summary: 'A policy’s credit ledger',
        description:
          'Goodwill credits, voided journeys’ credits and amounts carried forward (positive), and what statements and refunds used of them (negative), newest first, with the balance the next statement uses.',
        security: [{ adminKey: [] }],
        querystring: Type.Object(
          {
            company_reference: Type.String({ minLength: 1, maxLength: 100 }),
            environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')]),
            policy_reference: Type.String({ minLength: 1, maxLength: 100 }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            policy_reference: Type.String(),
            balance: Type.Number({ description: 'Pounds.' }),
            credits: Type.Array(
              Type.Object({
                amount: Type.Number({ description: 'Pounds: positive a credit, negative its use.' }),
                source: Type.String(),
                reference: Type.String(),
                reason: Type.Union([Type.String(), Type.Null()]),
                created_at: Type.String({ format: 'date-time' }),
              }),
            ),
          }),
          ...problemResponses(401, 403, 404, 422),
        },
      },
    },
    async (request) => {
      const { company_reference: company, environment, policy_reference: reference } = request.query;
      return statements.credits(await deps.companies.tenantOf(company, environment), reference);
    },
  );
}

/** POST /admin/billing-runs: a billing day now, answered at the end or streamed as it goes. */
function registerBillingRunRoutes(admin: TypedApp, deps: StatementRouteDeps): void {
  const { statements } = deps;
  admin.post(
    '/admin/billing-runs',
    {
      // The statements a run writes are the system's billing, not the admin's edits: one record of the run.
      config: { auditRows: false },
      schema: {
        operationId: 'statements.billingRun',
        tags: ['admin'],
        summary: 'Run a billing day now',
        description:
          'Bills every live policy whose billing date is `date` (Europe/London; billing days 29–31 fall on the last day of shorter months), each with a statement ending at the end of the day before. Running a day again bills nobody twice: those are counted as `already_billed`. With `Accept: text/event-stream` the answer is a stream of server-sent events: `progress` (the counts so far, after each chunk of policies), then `done` (the result) or `error`.',
        security: [{ adminKey: [] }],
        body: Type.Object(
          { date: Type.String({ pattern: '^[1-9]\\d{3}-\\d{2}-\\d{2}$', examples: ['2025-07-01'] }) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            date: Type.String(),
            due: Type.Integer(),
            billed: Type.Integer(),
            already_billed: Type.Integer(),
            failed: Type.Integer(),
            failures: Type.Array(Type.Object({ policy_reference: Type.String(), reason: Type.String() }), {
              description: 'The policies counted as failed, and why.',
            }),
          }),
          ...problemResponses(401, 403, 422),
        },
      },
    },
    async (request, reply) => {
      if (!isBillingDateString(request.body.date)) {
        throw new AppError('VALIDATION_FAILED', 'date is not a calendar date', {
          errors: [{ path: '/body/date', message: 'must be a date that exists' }],
        });
      }
      if (!wantsEventStream(request)) return statements.runBillingDay(request.body.date);
      return streamWithProgress(
        request,
        reply,
        (onProgress) => statements.runBillingDay(request.body.date, onProgress),
        'The billing run stopped; running the day again bills nobody twice',
      );
    },
  );
}

/** POST /statements, GET /statements, GET /statements/:policy_version_reference; admin credits and billing runs. */
export function statementRoutes(deps: StatementRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    registerStatementRoutes(app, deps);
    await app.register(async (scope) => {
      const admin = scope.withTypeProvider<TypeBoxTypeProvider>();
      admin.addHook('onRequest', deps.adminAuth);
      registerCreditRoutes(admin, deps);
      registerBillingRunRoutes(admin, deps);
    });
  };
}
