import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import '@fastify/cookie';
import { Type } from 'typebox';
import type { Executor } from '../../schema.ts';
import { AppError } from '../../platform/errors.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import { asTenant, type CompanyService } from '../companies/index.ts';
import { findPolicy } from '../policies/index.ts';
import {
  AuditListSchema,
  AuditQuerySchema,
  CreateStaffSchema,
  CreatedStaffSchema,
  SessionViewSchema,
  StaffListSchema,
  StaffSchema,
  TotpEnrolmentSchema,
  UpdateStaffSchema,
} from './staff-schemas.ts';
import { listAuditRecords } from './staff-repository.ts';
import { requireCsrf, SESSION_COOKIE } from './staff-access.ts';
import type { StaffService, StaffSession } from './staff-service.ts';

const tags = ['staff'];
const adminSecurity = [{ adminKey: [] }];
const sessionSecurity = [{ staffSession: [] }];

/**
 * The console's sign-in (`/staff/session…`: email and password, a new password for a one-time one,
 * a TOTP code) and the admin routes for staff and the audit trail.
 */
export function staffRoutes(deps: {
  staff: StaffService;
  companies: CompanyService;
  db: Executor;
  adminAuth: preHandlerAsyncHookHandler;
}): FastifyPluginAsyncTypebox {
  const { staff, companies, db, adminAuth } = deps;

  /** The session the cookie names, at any step; state-changing steps also need its CSRF token. */
  async function sessionOf(request: FastifyRequest): Promise<StaffSession> {
    const token = request.cookies[SESSION_COOKIE];
    const session = token === undefined ? undefined : await staff.authenticate(token);
    if (session === undefined)
      throw new AppError('UNAUTHENTICATED', 'No staff session: sign in with POST /staff/session');
    if (request.method !== 'GET') requireCsrf(request, session);
    return session;
  }

  const setCookie = (request: FastifyRequest, reply: FastifyReply, token: string) =>
    reply.setCookie(SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: 'strict',
      secure: request.protocol === 'https',
      path: '/',
    });
  const clearCookie = (reply: FastifyReply) => reply.clearCookie(SESSION_COOKIE, { path: '/' });

  return async (app) => {
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
        staff.view(
          await staff.changePassword(await sessionOf(request), request.body.new_password, request.ip),
        ),
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
      async (request) =>
        staff.view(await staff.confirmEnrolment(await sessionOf(request), request.body.code)),
    );

    await app.register(async (scope) => {
      const admin = scope.withTypeProvider<TypeBoxTypeProvider>();
      admin.addHook('preHandler', adminAuth);

      admin.post(
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

      admin.get(
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

      admin.patch(
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

      admin.get(
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
        async (request) => {
          const q = request.query;
          const limit = q.limit ?? 100;
          let companyId: string | undefined;
          let policyId: string | undefined;
          if (q.company_reference !== undefined) {
            // The company's id (404 for an unknown reference); the environment filters apart.
            companyId = (await companies.tenantOf(q.company_reference, 'sandbox')).companyId;
          }
          if (q.policy_reference !== undefined) {
            if (companyId === undefined || q.environment === undefined)
              throw new AppError(
                'VALIDATION_FAILED',
                'policy_reference needs company_reference and environment',
                {
                  errors: [
                    {
                      path: '/querystring/policy_reference',
                      message: 'needs company_reference and environment',
                    },
                  ],
                },
              );
            const policy = await findPolicy(db, asTenant(companyId, q.environment), q.policy_reference);
            if (policy === undefined) return { data: [], next_cursor: null };
            policyId = policy.id;
          }
          const rows = await listAuditRecords(db, {
            actor: q.actor,
            companyId,
            environment: q.environment,
            policyId,
            requestId: q.request_id,
            resource: q.resource,
            from: q.from === undefined ? undefined : new Date(q.from),
            to: q.to === undefined ? undefined : new Date(q.to),
            before: q.after === undefined ? undefined : Number(q.after),
            limit: limit + 1,
          });
          const page = rows.slice(0, limit);
          return {
            data: page.map((r) => ({
              id: String(r.id),
              occurred_at: r.occurred_at.toISOString(),
              actor: r.actor,
              role: r.role,
              action: r.action,
              resource: r.resource,
              company_reference: r.company_reference,
              environment: r.environment,
              policy_reference: r.policy_reference,
              request_id: r.request_id,
              source_address: r.source_address,
              outcome: r.outcome,
              table: r.table_name,
              key: r.row_key,
              operation: r.operation,
              before: r.before ?? null,
              after: r.after ?? null,
            })),
            next_cursor: rows.length > limit ? String(page[page.length - 1]?.id ?? '') : null,
          };
        },
      );
    });
  };
}
