import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import '@fastify/cookie';
import { Type } from 'typebox';
import type { Executor } from '../../schema.ts';
import { AppError } from '../../platform/errors.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import type { CompanyService } from '../companies/index.ts';
import { readAuditTrail } from './audit-trail.ts';
import {
  AuditListSchema,
  AuditQuerySchema,
  ClaimHandlerListSchema,
  CreateStaffSchema,
  CreatedStaffSchema,
  SessionViewSchema,
  StaffListSchema,
  StaffSchema,
  TotpEnrolmentSchema,
  UpdateStaffSchema,
} from './staff-schemas.ts';
import { requireCsrf, SESSION_COOKIE } from './staff-access.ts';
import type { StaffService, StaffSession } from './staff-service.ts';

const tags = ['staff'];
const adminSecurity = [{ adminKey: [] }];
const sessionSecurity = [{ staffSession: [] }];

type App = Parameters<FastifyPluginAsyncTypebox>[0];

interface StaffRouteDeps {
  staff: StaffService;
  companies: CompanyService;
  db: Executor;
  adminAuth: onRequestAsyncHookHandler;
}

/** What the session routes share: the session a request's cookie names, and setting and clearing that cookie. */
function sessionCookies(staff: StaffService) {
  return {
    /** The session the cookie names, at any step; state-changing steps also need its CSRF token. */
    sessionOf: async (request: FastifyRequest): Promise<StaffSession> => {
      const token = request.cookies[SESSION_COOKIE];
      const session = token === undefined ? undefined : await staff.authenticate(token);
      if (session === undefined)
        throw new AppError('UNAUTHENTICATED', 'No staff session: sign in with POST /staff/session');
      if (request.method !== 'GET') requireCsrf(request, session);
      return session;
    },
    setCookie: (request: FastifyRequest, reply: FastifyReply, token: string) =>
      reply.setCookie(SESSION_COOKIE, token, {
        httpOnly: true,
        sameSite: 'strict',
        secure: request.protocol === 'https',
        path: '/',
      }),
    clearCookie: (reply: FastifyReply) => reply.clearCookie(SESSION_COOKIE, { path: '/' }),
  };
}
type SessionCookies = ReturnType<typeof sessionCookies>;

/** The console's sign-in: email and password, a new password for a one-time one, a TOTP code. */
function registerSignIn(app: App, staff: StaffService, { sessionOf, setCookie }: SessionCookies): void {
  app.post(
    '/staff/session',
    {
      schema: {
        operationId: 'staff.signIn',
        tags,
        summary: 'Sign in as a staff member (email and password)',
        description:
          'Starts a session (an httpOnly, SameSite=Strict cookie) at its next step: `new_password` for a one-time password, `totp_enrol` (admins without TOTP: the answer carries the QR code), `totp`, or `active`. Throttled like policyholder logins.',
        body: Type.Object(
          {
            email: Type.String({ minLength: 1, maxLength: 254 }),
            password: Type.String({ minLength: 1, maxLength: 1024 }),
          },
          { additionalProperties: false },
        ),
        response: { 200: SessionViewSchema, ...problemResponses(401, 422, 429) },
      },
    },
    async (request, reply) => {
      const { token, session } = await staff.signIn(request.body.email, request.body.password, request.ip);
      setCookie(request, reply, token);
      return staff.view(session);
    },
  );

  app.get(
    '/staff/session',
    {
      schema: {
        operationId: 'staff.session',
        tags,
        summary: 'The current staff session',
        description:
          'Its step, its CSRF token (send it as `x-csrf-token` on every state-changing request) and who it is.',
        security: sessionSecurity,
        response: { 200: SessionViewSchema, ...problemResponses(401) },
      },
    },
    async (request) => staff.view(await sessionOf(request)),
  );

  app.post(
    '/staff/session/password',
    {
      schema: {
        operationId: 'staff.newPassword',
        tags,
        summary: 'Replace the one-time password',
        security: sessionSecurity,
        body: Type.Object(
          { new_password: Type.String({ minLength: 1, maxLength: 1024 }) },
          { additionalProperties: false },
        ),
        response: { 200: SessionViewSchema, ...problemResponses(401, 403, 409, 422) },
      },
    },
    async (request) =>
      staff.view(await staff.changePassword(await sessionOf(request), request.body.new_password, request.ip)),
  );

  app.post(
    '/staff/session/totp',
    {
      schema: {
        operationId: 'staff.totp',
        tags,
        summary: 'Send a TOTP code (or confirm the enrolment begun at sign-in)',
        security: sessionSecurity,
        body: Type.Object(
          { code: Type.String({ minLength: 1, maxLength: 20 }) },
          { additionalProperties: false },
        ),
        response: { 200: SessionViewSchema, ...problemResponses(401, 403, 409, 422, 429) },
      },
    },
    async (request) =>
      staff.view(await staff.verifyTotp(await sessionOf(request), request.body.code, request.ip)),
  );
}

/** Sign-out, of this session or of every one. */
function registerSignOut(app: App, staff: StaffService, { sessionOf, clearCookie }: SessionCookies): void {
  app.delete(
    '/staff/session',
    {
      schema: {
        operationId: 'staff.signOut',
        tags,
        summary: 'Sign out',
        security: sessionSecurity,
        response: { 204: Type.Null(), ...problemResponses(401, 403) },
      },
    },
    async (request, reply) => {
      await staff.signOut(await sessionOf(request));
      clearCookie(reply);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/staff/sessions',
    {
      schema: {
        operationId: 'staff.signOutEverywhere',
        tags,
        summary: 'Sign out of every session (every browser)',
        security: sessionSecurity,
        response: { 204: Type.Null(), ...problemResponses(401, 403) },
      },
    },
    async (request, reply) => {
      await staff.signOutEverywhere(await sessionOf(request));
      clearCookie(reply);
      return reply.code(204).send(null);
    },
  );
}

/** Enrolling an authenticator from an active session. */
function registerTotpEnrolment(app: App, staff: StaffService, { sessionOf }: SessionCookies): void {
  app.post(
    '/staff/me/totp',
    {
      schema: {
        operationId: 'staff.beginTotp',
        tags,
        summary: 'Begin enrolling an authenticator (optional for operations and viewers)',
        security: sessionSecurity,
        response: { 200: TotpEnrolmentSchema, ...problemResponses(401, 403, 409) },
      },
    },
    async (request) => staff.beginEnrolment(await sessionOf(request)),
  );

  app.post(
    '/staff/me/totp/confirm',
    {
      schema: {
        operationId: 'staff.confirmTotp',
        tags,
        summary: 'Confirm the enrolment with a code from the authenticator',
        security: sessionSecurity,
        body: Type.Object(
          { code: Type.String({ minLength: 1, maxLength: 20 }) },
          { additionalProperties: false },
        ),
        response: { 200: SessionViewSchema, ...problemResponses(401, 403, 409, 422, 429) },
      },
    },
    async (request) => staff.view(await staff.confirmEnrolment(await sessionOf(request), request.body.code)),
  );
}

/** The admin routes for staff members: create, list, change. */
function registerStaffManagement(app: App, staff: StaffService): void {
  app.post(
    '/admin/staff',
    {
      schema: {
        operationId: 'staff.create',
        tags: ['admin'],
        summary: 'Create a staff member',
        description:
          'Answers a one-time password, shown here only: the staff member replaces it at their first sign-in at /console/.',
        security: adminSecurity,
        body: CreateStaffSchema,
        response: { 201: CreatedStaffSchema, ...problemResponses(401, 403, 409, 422) },
      },
    },
    async (request, reply) => {
      const created = await staff.create(request.body.email, request.body.role);
      return reply.code(201).send({ ...created.staff, one_time_password: created.oneTimePassword });
    },
  );

  app.get(
    '/admin/staff',
    {
      schema: {
        operationId: 'staff.list',
        tags: ['admin'],
        summary: 'List staff members',
        security: adminSecurity,
        response: { 200: StaffListSchema, ...problemResponses(401, 403) },
      },
    },
    async () => ({ data: await staff.list() }),
  );

  app.get(
    '/admin/claim-handlers',
    {
      schema: {
        operationId: 'staff.claimHandlers',
        tags: ['admin'],
        summary: 'List the staff a claim may be assigned to',
        description:
          'The active staff members with the `claims` or `admin` role, by email (for `PUT /claims/{claim_reference}/handler`). Every staff role may read it.',
        security: adminSecurity,
        response: { 200: ClaimHandlerListSchema, ...problemResponses(401, 403) },
      },
    },
    async () => ({ data: await staff.claimHandlers() }),
  );

  app.patch(
    '/admin/staff/:staff_id',
    {
      schema: {
        operationId: 'staff.update',
        tags: ['admin'],
        summary: 'Change a staff member’s role, deactivate or reactivate them',
        description:
          'A role change or a deactivation ends their sessions at once; `reset_credentials: true` answers a new one-time password and clears their TOTP (a lost phone).',
        security: adminSecurity,
        params: Type.Object({ staff_id: Type.String({ format: 'uuid' }) }),
        body: UpdateStaffSchema,
        response: {
          200: Type.Intersect([
            StaffSchema,
            Type.Object({ one_time_password: Type.Optional(Type.String()) }),
          ]),
          ...problemResponses(401, 403, 404, 422),
        },
      },
    },
    async (request) => {
      const { role, active, reset_credentials: reset } = request.body;
      let view = await staff.update(request.params.staff_id, {
        ...(role === undefined ? {} : { role }),
        ...(active === undefined ? {} : { active }),
      });
      if (reset !== true) return view;
      const fresh = await staff.resetCredentials(request.params.staff_id);
      view = fresh.staff;
      return { ...view, one_time_password: fresh.oneTimePassword };
    },
  );
}

/** GET /admin/audit: the audit trail. */
function registerAuditTrail(app: App, deps: StaffRouteDeps): void {
  app.get(
    '/admin/audit',
    {
      schema: {
        operationId: 'audit.list',
        tags: ['admin'],
        summary: 'The audit trail',
        description:
          'Every staff action and admin-key call, newest first: one record per database row it changed (with the changed fields before and after), or one for the request when it changed none, and refusals (`outcome: denied`). Records of one action share `request_id`. No route changes or deletes them. Page with `after` = the previous `next_cursor`.',
        security: adminSecurity,
        querystring: AuditQuerySchema,
        response: { 200: AuditListSchema, ...problemResponses(401, 403, 404, 422) },
      },
    },
    async (request) => readAuditTrail(deps, request.query),
  );
}

/**
 * The console's sign-in (`/staff/session…`: email and password, a new password for a one-time one,
 * a TOTP code) and the admin routes for staff and the audit trail.
 */
export function staffRoutes(deps: StaffRouteDeps): FastifyPluginAsyncTypebox {
  const { staff, adminAuth } = deps;
  const cookies = sessionCookies(staff);
  return async (app) => {
    registerSignIn(app, staff, cookies);
    registerSignOut(app, staff, cookies);
    registerTotpEnrolment(app, staff, cookies);
    await app.register(async (scope) => {
      const admin = scope.withTypeProvider<TypeBoxTypeProvider>();
      admin.addHook('onRequest', adminAuth);
      registerStaffManagement(admin, staff);
      registerAuditTrail(admin, deps);
    });
  };
}
