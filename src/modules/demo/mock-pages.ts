import type {
  FastifyInstance,
  FastifyRequest,
  onRequestAsyncHookHandler,
  preHandlerAsyncHookHandler,
  RouteOptions,
} from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import { AppError, notFound, type FieldError } from '../../platform/errors.ts';
import {
  demoAccount,
  demoBudget,
  demoCard,
  demoDevice,
  demoPayments,
  type DemoAccount,
} from './mock-billing.ts';
import { MOCK_POLICY_REFERENCE } from './mock-data.ts';
import type { DemoJourney } from './mock-journeys.ts';
import { isMockRequest } from './mock-environment.ts';

/*
 * The policyholder app's pages in the `mock` environment. One root preHandler hook answers the read
 * routes of journeys, statements, payments, the mileage budget, devices and claims from the demo account
 * (mock-billing.ts) before the route's own authentication runs, so no module's route needs a mock
 * branch and no mock request reaches a service, the database or a tenant. It runs after the route's
 * validation: a bad query, path or body still answers the route's 4xx problem. The answer goes out
 * through the route's own response schema. Writes answer as they would succeed and store nothing.
 * Routes not listed here refuse `environment: mock` as before (422).
 *
 * Routes authenticate in onRequest, before the body is read. On the routes listed here a mock request's
 * authentication waits instead until the mock answer has had its turn (a preHandler placed after this
 * one): the answer needs the validated body, and a request it does not answer (CREATE_PAYMENT_INTENT)
 * still meets the route's authentication, which refuses the mock environment.
 */

type Fields = Record<string, unknown>;
interface MockRequest {
  readonly query: Fields;
  readonly params: Fields;
  readonly body: Fields;
  readonly now: Date;
}
type MockAnswer = (request: MockRequest) => unknown;

const text = (fields: Fields, name: string): string | undefined =>
  typeof fields[name] === 'string' ? fields[name] : undefined;

/** The demo account of the policy asked for: only the demo policy exists (another answers 404). */
function accountOf(reference: string | undefined, now: Date): DemoAccount {
  if (reference !== undefined && reference !== MOCK_POLICY_REFERENCE) throw notFound('policy');
  return demoAccount(MOCK_POLICY_REFERENCE, now);
}

/** The same 422 as POST /payments for a type's missing fields. */
function need(body: Fields, fields: readonly string[]): void {
  const type = String(body['type']);
  const errors: FieldError[] = fields
    .filter((f) => body[f] === undefined)
    .map((f) => ({ path: `/body/${f}`, message: `is required for ${type}` }));
  if (errors.length > 0)
    throw new AppError('VALIDATION_FAILED', `${type} needs ${fields.join(', ')}`, { errors });
}

/** A page of journeys as GET /journeys pages them: oldest first, `after` the last one shown. */
function journeyPage(journeys: readonly DemoJourney[], query: Fields) {
  const from = typeof query['from'] === 'number' ? query['from'] : -Infinity;
  const to = typeof query['to'] === 'number' ? query['to'] : Infinity;
  const limit = typeof query['limit'] === 'number' ? query['limit'] : 100;
  let shown = journeys.filter((j) => j.start_at >= from && j.start_at <= to);
  const after = text(query, 'after');
  if (after !== undefined) {
    const index = shown.findIndex((j) => j.journey_reference === after);
    if (index < 0)
      throw new AppError('VALIDATION_FAILED', 'The cursor is not valid', {
        errors: [{ path: '/querystring/after', message: 'is not a cursor of this list' }],
      });
    shown = shown.slice(index + 1);
  }
  const page = shown.slice(0, limit);
  return {
    journeys: page,
    next_cursor: shown.length > limit ? (page.at(-1)?.journey_reference ?? null) : null,
  };
}

/** `METHOD /route/:param` → the demo answer. */
const ANSWERS: Readonly<Record<string, MockAnswer>> = {
  'GET /journeys': ({ query, now }) =>
    journeyPage(accountOf(text(query, 'policy_reference'), now).journeys, query),

  'GET /journeys/:journey_reference': ({ params, now }) => {
    const found = accountOf(undefined, now).journeys.find(
      (j) => j.journey_reference === params['journey_reference'],
    );
    if (found === undefined) throw notFound('journey');
    return found;
  },

  'GET /statements': ({ query, now }) => {
    const newestFirst = accountOf(text(query, 'policy_reference'), now).statements.toReversed();
    const before = text(query, 'before');
    const limit = typeof query['limit'] === 'number' ? query['limit'] : 20;
    const shown = newestFirst.filter(
      (s) => before === undefined || s.end * 1000 < new Date(before).getTime(),
    );
    const page = shown.slice(0, limit);
    return {
      statements: page.map((s) => s.view),
      next_cursor: shown.length > limit ? (page.at(-1)?.view.statement_end_date ?? null) : null,
    };
  },

  'GET /statements/:policy_version_reference': ({ params, now }) => {
    const found = accountOf(undefined, now).statements.find(
      (s) => s.view.policy_version_reference === params['policy_version_reference'],
    );
    if (found === undefined) throw notFound('statement');
    return found.view;
  },

  'GET /payments': ({ query, now }) => ({
    payments: demoPayments(accountOf(text(query, 'policy_reference'), now)),
  }),

  'POST /payments': ({ body, now }) => {
    switch (body['type']) {
      case 'GET_PAYMENT_METHOD':
        need(body, ['policy_reference']);
        accountOf(text(body, 'policy_reference'), now);
        return demoCard(now);
      case 'ADD_NEW_PAYMENT_METHOD':
        need(body, ['policy_reference', 'payment_method_id']);
        accountOf(text(body, 'policy_reference'), now);
        return { type: body['type'], payment_method_id: body['payment_method_id'] };
      case 'RETRY_PAYMENT': {
        need(body, ['policy_reference', 'policy_version_reference']);
        const statement = accountOf(text(body, 'policy_reference'), now).statements.find(
          (s) => s.view.policy_version_reference === body['policy_version_reference'],
        );
        if (statement === undefined) throw notFound('payment');
        if (statement.paid) throw new AppError('ALREADY_PAID', 'That policy version is already paid');
        return {
          type: body['type'],
          payment_amount: statement.view.billed_premium,
          payment_reference: `pay_mock_retry_${statement.view.policy_version_reference.slice(0, 8)}`,
          status: 'succeeded',
        };
      }
      default:
        // CREATE_PAYMENT_INTENT goes on to the route, which refuses the mock environment.
        return undefined;
    }
  },

  'GET /policys/:policy_reference/mileage-budget': ({ params, now }) =>
    demoBudget(accountOf(text(params, 'policy_reference'), now), now),

  'PUT /policys/:policy_reference/mileage-budget': ({ params, body, now }) =>
    demoBudget(
      accountOf(text(params, 'policy_reference'), now),
      now,
      typeof body['distance_per_month'] === 'number' ? body['distance_per_month'] : undefined,
    ),

  'GET /devices': ({ query, now }) => {
    const device = demoDevice(accountOf(text(query, 'policy_reference'), now), now);
    const after = text(query, 'after');
    return { devices: after !== undefined && after >= device.device_id ? [] : [device], next_cursor: null };
  },

  // The demo policy has had no accident: its claims page is empty and no crash banner shows.
  'GET /policys/:policy_reference/claims': ({ params, now }) => {
    accountOf(text(params, 'policy_reference'), now);
    return { claims: [] };
  },

  'GET /devices/:device_id': ({ params, now }) => {
    const device = demoDevice(accountOf(undefined, now), now);
    if (params['device_id'] !== device.device_id) throw notFound('device');
    return device;
  },
};

/** The mocked routes, as `METHOD /path` (documentation and tests). */
export const MOCKED_ROUTES: readonly string[] = Object.keys(ANSWERS);

const fields = (value: unknown): Fields =>
  typeof value === 'object' && value !== null ? (value as Fields) : {};

/**
 * On a mocked route, each of the route's onRequest hooks (its authentication) skips a mock request and
 * runs for it as the route's first preHandler instead, after the root preHandler that answers it.
 */
function deferAuthenticationOfMockRequests(route: RouteOptions): void {
  const methods = [route.method].flat();
  if (!methods.some((method) => ANSWERS[`${method} ${route.url}`] !== undefined)) return;
  // Every onRequest hook of a route is async (the auth hooks): `done` is never needed.
  const hooks = [route.onRequest ?? []].flat() as onRequestAsyncHookHandler[];
  if (hooks.length === 0) return;
  const mock = (request: FastifyRequest) => isMockRequest(request, true);
  route.onRequest = hooks.map(
    (hook): onRequestAsyncHookHandler =>
      async function unlessMock(request, reply) {
        if (!mock(request)) await hook.call(this, request, reply);
      },
  );
  const deferred = hooks.map(
    (hook): preHandlerAsyncHookHandler =>
      async function ifMock(request, reply) {
        if (mock(request)) await hook.call(this, request, reply);
      },
  );
  route.preHandler = [...deferred, ...([route.preHandler ?? []].flat() as preHandlerAsyncHookHandler[])];
}

/**
 * Answers the routes above from the demo account for `environment: mock` (when MOCK_ENVIRONMENT is on).
 * Installed on the root instance before the route plugins, so that it runs before their preHandlers and
 * sees each route as it is added.
 */
export function installMockPages(app: FastifyInstance, deps: { mockEnabled: boolean; clock: Clock }): void {
  if (!deps.mockEnabled) return;
  app.addHook('onRoute', deferAuthenticationOfMockRequests);
  app.addHook('preHandler', async (request: FastifyRequest, reply) => {
    if (!isMockRequest(request, true)) return;
    const answer = ANSWERS[`${request.method} ${request.routeOptions.url ?? ''}`];
    if (answer === undefined) return;
    const body = answer({
      query: fields(request.query),
      params: fields(request.params),
      body: fields(request.body),
      now: deps.clock.now(),
    });
    if (body === undefined) return;
    request.environment = 'mock';
    request.tenant = null;
    request.policyholder = null;
    return reply.code(200).send(body);
  });
}
