import { timingSafeEqual } from 'node:crypto';
import '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import { withAuditActor, type AuditActor } from '../../platform/db/audit-context.ts';
import { AppError } from '../../platform/errors.ts';
import '../../platform/http/actor.ts';
import { findAuditedPolicy } from '../policies/index.ts';
import { staffMay } from './rules/roles.ts';
import { hasAuditRecords, insertAuditRecord, type AuditOutcome } from './staff-repository.ts';
import type { StaffService, StaffSession } from './staff-service.ts';

/** The session cookie: httpOnly, SameSite=Strict, Secure over https. */
export const SESSION_COOKIE = 'milepost_staff';
/** The header state-changing staff requests echo the session's CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Body fields that name what an action is about, for routes without path parameters. */
const RESOURCE_FIELDS = ['policy_reference', 'company_reference', 'email', 'date'];

export const isReadMethod = (method: string): boolean => READ_METHODS.has(method);

const presentHeader = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first.trim() === '' ? undefined : first;
};

/** The CSRF token of a state-changing request, compared in constant time. */
export function requireCsrf(request: FastifyRequest, session: StaffSession): void {
  const sent = Buffer.from(presentHeader(request, CSRF_HEADER) ?? '');
  const expected = Buffer.from(session.csrfToken);
  if (sent.length !== expected.length || !timingSafeEqual(sent, expected))
    throw new AppError(
      'CSRF_TOKEN_INVALID',
      `A state-changing request of a staff session must send the session's csrf_token in the ${CSRF_HEADER} header`,
    );
}

/** What the route's OpenAPI security says a staff session may stand in for. */
function scopeOf(route: RouteOptions): 'admin' | 'client' | undefined {
  const security =
    (route.schema as { security?: Array<Record<string, unknown>> } | undefined)?.security ?? [];
  // A route open to a client id alone (the policyholders' login) is anyone's: a staff member signing
  // in to the policyholders' app in the same browser is not acting as staff there.
  if (security.some((s) => 'clientId' in s && !('clientSecret' in s))) return undefined;
  if (security.some((s) => 'adminKey' in s)) return 'admin';
  if (security.some((s) => 'clientSecret' in s)) return 'client';
  return undefined;
}

/** `journey_reference:J-1`: the first path parameter, else the first naming field of the body. */
function resourceOf(request: FastifyRequest): string | null {
  const params = (request.params ?? {}) as Record<string, unknown>;
  const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<
    string,
    unknown
  >;
  for (const [name, value] of Object.entries(params))
    if (typeof value === 'string') return `${name}:${value}`;
  for (const name of RESOURCE_FIELDS) {
    const value = body[name];
    if (typeof value === 'string') return `${name}:${value}`;
  }
  return null;
}

/** The policy a request names in its path or body (`policy_reference`), whatever else it names first. */
function policyReferenceOf(request: FastifyRequest): string | null {
  for (const part of [request.params, request.body]) {
    const value =
      typeof part === 'object' && part !== null
        ? (part as Record<string, unknown>)['policy_reference']
        : undefined;
    if (typeof value === 'string') return value;
  }
  return null;
}

/** What a refused request answered, for its record: a client's error (4xx); a fault (5xx) is no refusal. */
function refusalOf(error: unknown): { status: number; code: string } | undefined {
  if (error instanceof AppError)
    return error.status < 500 ? { status: error.status, code: error.code } : undefined;
  // A plugin's client error (a body over its limit) keeps its own status and code.
  const { statusCode, code } = (error ?? {}) as { statusCode?: unknown; code?: unknown };
  return typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500
    ? { status: statusCode, code: typeof code === 'string' ? code : 'BAD_REQUEST' }
    : undefined;
}

/** A server error as its problem answers it: an AppError's status and code, anything else a 500. */
function failureOf(error: unknown): { status: number; code: string } {
  return error instanceof AppError
    ? { status: error.status, code: error.code }
    : { status: 500, code: 'INTERNAL' };
}

/** How an audited request is told (`actorOf`) and recorded when it changed no row or was refused. */
function auditRecorder(db: Executor, clock: Clock) {
  const actorOf = (request: FastifyRequest): AuditActor => {
    const actor = request.actor;
    return {
      actor: actor?.kind === 'staff' ? `staff:${actor.email}` : 'admin-key',
      staff_id: actor?.kind === 'staff' ? actor.staffId : null,
      role: actor?.kind === 'staff' ? actor.role : null,
      action:
        request.routeOptions.schema?.operationId ?? `${request.method} ${request.routeOptions.url ?? ''}`,
      resource: resourceOf(request),
      policy_reference: policyReferenceOf(request),
      company_id: request.tenant?.companyId ?? null,
      environment: request.tenant?.environment ?? null,
      request_id: request.id,
      source_address: request.ip,
      at: clock.now().toISOString(),
    };
  };

  const recordRequest = async (audit: AuditActor, outcome: AuditOutcome, after?: unknown) => {
    // A request that acted on a policy and changed no row of it is still the policy's; a refusal
    // changed nothing of the policy and stays the request's alone.
    const policy =
      outcome === 'ok' && audit.policy_reference != null
        ? await findAuditedPolicy(db, audit.policy_reference, {
            companyId: audit.company_id,
            environment: audit.environment,
          })
        : undefined;
    await insertAuditRecord(db, {
      occurred_at: new Date(audit.at),
      request_id: audit.request_id,
      actor: audit.actor,
      staff_id: audit.staff_id,
      role: audit.role,
      action: audit.action,
      resource: audit.resource,
      company_id: audit.company_id ?? policy?.company_id ?? null,
      environment: audit.environment ?? policy?.environment ?? null,
      policy_id: policy?.id ?? null,
      source_address: audit.source_address,
      outcome,
      after,
    });
  };

  /**
   * What the handler raised, recorded once its transaction has rolled back (a 4xx `denied`, a server
   * error `failed`), then rethrown.
   */
  const recordRefusal = async (audit: AuditActor, error: unknown): Promise<never> => {
    const refusal = refusalOf(error);
    if (refusal !== undefined) await recordRequest(audit, 'denied', refusal);
    // NOTE: the error that failed the request may have taken the database with it, and then this
    // record too: the request's own error is still what is answered and logged.
    else await recordRequest(audit, 'failed', failureOf(error)).catch(() => undefined);
    throw error;
  };

  /** What `run` answers; a refusal or failure it raises is recorded (`recordRefusal`) and rethrown. */
  const orRefusal = async (audit: AuditActor, run: () => unknown): Promise<unknown> => {
    try {
      return await run();
    } catch (error) {
      return recordRefusal(audit, error);
    }
  };

  return { actorOf, recordRequest, recordRefusal, orRefusal };
}

/**
 * Staff sessions on the API, and the audit trail of staff and admin-key requests:
 * - on every route whose security names the admin key or client credentials, a request with the
 *   session cookie (and neither an Authorization header nor a client secret) is the staff member's.
 *   An onRequest hook checks the session and, when the request changes state, the session's CSRF
 *   token, before the body is read (and before the route's own authentication, which accepts the
 *   staff member): nobody without a session makes the server read a body. A preValidation hook then
 *   allows the request by the staff member's role (403 otherwise, recorded); it runs after the body
 *   is parsed, because a role's right to `payments.act` depends on the body's `type` and a refusal's
 *   record names what the body is about, and before body validation, so a refusal is a refusal
 *   whatever was sent.
 * - each route's handler runs, for an audited request, with the actor attached to its database
 *   statements, so the audit triggers record every row it changes in the same transaction; a request
 *   that changed no audited row (a read with the admin key, an email resent) gets one record of its own.
 * - a request the handler refuses (a 4xx: forbidden, not found, conflict, invalid) gets one record of
 *   its own, `denied` with the problem's status and code, written after its transaction rolled back;
 *   one that fails with a server error, `failed` in the same way.
 */
export function installStaffAccess(
  app: FastifyInstance,
  deps: { staff: StaffService; db: Executor; clock: Clock },
): void {
  const { staff, db, clock } = deps;

  const { actorOf, recordRequest, recordRefusal, orRefusal } = auditRecorder(db, clock);

  // The reads recorded before their answer starts to stream: the record waits for onSend, so that a
  // read the handler refuses (an unknown policyholder) is recorded as refused, not as done.
  const pendingReads = new WeakMap<FastifyRequest, AuditActor>();
  const recordRead = async (request: FastifyRequest): Promise<void> => {
    const audit = pendingReads.get(request);
    if (audit === undefined) return;
    pendingReads.delete(request);
    await recordRequest(audit, 'ok', request.query);
  };

  app.addHook('onRoute', (route) => {
    const scope = scopeOf(route);
    if (scope === undefined) return;
    route.config = { ...route.config, staffScope: scope };
    const handler = route.handler;
    const auditRows = route.config.auditRows !== false;
    const auditReads = route.config.auditReads === true;
    if (auditReads) route.onSend = [...[route.onSend ?? []].flat(), recordRead];
    route.handler = async function audited(
      this: FastifyInstance,
      request: FastifyRequest,
      reply: FastifyReply,
    ) {
      const actor = request.actor;
      if (actor === null) return handler.call(this, request, reply);
      if (auditReads && isReadMethod(request.method)) {
        const audit = actorOf(request);
        pendingReads.set(request, audit);
        try {
          return await handler.call(this, request, reply);
        } catch (error) {
          pendingReads.delete(request);
          return recordRefusal(audit, error);
        }
      }
      if (actor.kind === 'staff' && isReadMethod(request.method)) return handler.call(this, request, reply);
      const audit = actorOf(request);
      if (!auditRows) {
        // Recorded once it is known how the request ended: a refused run is not a run.
        const result = await orRefusal(audit, () => handler.call(this, request, reply));
        await recordRequest(audit, 'ok', request.body);
        return result;
      }
      // The handler's own transaction rolls back with a refusal, taking nothing of the record with it:
      // the refusal is written after, outside the actor's context.
      const result = await orRefusal(audit, () =>
        withAuditActor(audit, async () => handler.call(this, request, reply)),
      );
      if (!(await hasAuditRecords(db, request.id))) await recordRequest(audit, 'ok');
      return result;
    };
  });

  const sessions = new WeakMap<FastifyRequest, StaffSession>();

  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.staffScope === undefined) return;
    const token = request.cookies[SESSION_COOKIE];
    if (
      token === undefined ||
      request.headers.authorization !== undefined ||
      presentHeader(request, 'client_secret') !== undefined
    )
      return;
    const session = await staff.authenticate(token);
    if (session?.stage !== 'active')
      throw new AppError(
        'UNAUTHENTICATED',
        'The staff session has ended or its sign-in is not finished: sign in again at /console/',
      );
    if (!isReadMethod(request.method)) requireCsrf(request, session);
    sessions.set(request, session);
    request.actor = { kind: 'staff', staffId: session.staffId, email: session.email, role: session.role };
  });

  app.addHook('preValidation', async (request) => {
    const session = sessions.get(request);
    if (session === undefined) return;
    const operationId = request.routeOptions.schema?.operationId;
    const decision = staffMay(session.role, { operationId, method: request.method, body: request.body });
    if (!decision.allowed) {
      const refusal = new AppError(
        'FORBIDDEN',
        decision.needs === 'integration'
          ? `${operationId ?? 'This route'} is an integration's (client credentials), not a staff action`
          : `${operationId ?? 'This route'} needs the ${decision.needs} role; this session's role is ${session.role}`,
      );
      await recordRequest(actorOf(request), 'denied', refusalOf(refusal));
      throw refusal;
    }
  });
}
