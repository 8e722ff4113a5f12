import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { STAFF_ACTIONS, staffMay, type StaffRole } from '../../../src/modules/staff/index.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { signInStaff, type SignedInStaff } from './staff-support.ts';

/**
 * Role enforcement on every route a staff session reaches, from the OpenAPI document: each operation
 * × each role, answered 403 exactly where the role table refuses it, and never 401/403 where it allows
 * it. A hand-written table pins the decisions that matter, so the rule itself is tested too.
 */

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly operationId: string;
  readonly staffScope: boolean;
}

/** Routes that change state and are integrations' work (client credentials), never a staff action. */
const INTEGRATION_ONLY = new Set([
  'policies.submit',
  'policies.cancelByBody',
  'policies.renew',
  'journeys.create',
  'journeys.createBatch',
  'telematics.positions.create',
  'telematics.odometer.create',
  'usage.setMileageBudget',
  'scores.dispute',
  'statements.create',
  'payments.createDirectDebitSetup',
  'telematics.events',
  'claims.report',
  'claims.confirm',
  'claims.cancel',
  'claims.addPhoto',
]);

/** The least role for the actions the issue names, written out (not read from the rule). */
const EXPECTED: ReadonlyArray<[string, StaffRole | 'integration', object?]> = [
  ['journeys.list', 'viewer'],
  ['policies.get', 'viewer'],
  ['policies.search', 'viewer'],
  ['audit.list', 'viewer'],
  ['journeys.void', 'operations'],
  ['statements.grantCredit', 'operations'],
  ['payments.act', 'operations', { type: 'RETRY_PAYMENT' }],
  ['payments.act', 'integration', { type: 'CREATE_PAYMENT_INTENT' }],
  ['policies.cancel', 'operations'],
  ['policies.resendWelcome', 'operations'],
  ['events.replay', 'operations'],
  ['webhooks.retryDelivery', 'operations'],
  ['devices.bind', 'operations'],
  ['companies.create', 'admin'],
  ['companies.rotateSecrets', 'admin'],
  ['auth.rotateSigningKeys', 'admin'],
  ['staff.create', 'admin'],
  ['staff.update', 'admin'],
  ['staff.list', 'admin'],
  ['staff.claimHandlers', 'viewer'],
  ['emails.list', 'admin'],
  ['reports.bordereau', 'operations'],
  ['reports.cash', 'operations'],
  ['reports.renewalsAtCap', 'operations'],
  ['policyholders.export', 'operations'],
  ['policyholders.erase', 'admin'],
  ['products.create', 'admin'],
  ['products.update', 'admin'],
  ['statements.billingRun', 'admin'],
  ['webhooks.create', 'admin'],
  ['payments.setDirectDebitSettings', 'admin'],
  ['payments.collections', 'viewer'],
  ['payments.createDirectDebitSetup', 'integration'],
  ['journeys.create', 'integration'],
  ['policies.submit', 'integration'],
  ['claims.queue', 'viewer'],
  ['claims.get', 'viewer'],
  ['claims.transition', 'claims'],
  ['claims.addExposure', 'claims'],
  ['claims.setReserve', 'claims'],
  ['claims.pay', 'claims'],
  ['claims.addNote', 'claims'],
  ['claims.assignHandler', 'claims'],
  ['claims.updateSettings', 'admin'],
  ['claims.confirm', 'integration'],
];
const RANK = { viewer: 0, operations: 1, admin: 2 } as const;
const ROLES = ['viewer', 'operations', 'admin', 'claims'] as const;

/** Claims handlers read as viewers and act on claims only; admins may act on claims too. */
function allows(role: StaffRole, needs: StaffRole | 'integration'): boolean {
  if (needs === 'integration') return false;
  if (needs === 'claims') return role === 'claims' || role === 'admin';
  if (role === 'claims') return needs === 'viewer';
  return RANK[role] >= RANK[needs];
}

let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
const staff = new Map<StaffRole, SignedInStaff>();
let operations: Operation[] = [];

before(async () => {
  t = await createTestApp();
  acme = await createCompany(t.app);
  for (const role of ROLES) staff.set(role, await signInStaff(t, `${role}@insurer.example`, role));
  const doc = (await t.app.inject({ url: '/openapi.json' })).json<{
    paths: Record<string, Record<string, { operationId: string; security?: Array<Record<string, unknown>> }>>;
  }>();
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      operationId: op.operationId,
      // As the server reads it: the admin key or client credentials, unless a client id alone will do.
      staffScope:
        (op.security ?? []).some((s) => 'adminKey' in s || 'clientSecret' in s) &&
        !(op.security ?? []).some((s) => 'clientId' in s && !('clientSecret' in s)),
    })),
  );
});
after(() => t.close());

const urlOf = (path: string) => path.replace(/\{[^}]+\}/g, 'x-1');

function call(op: Operation, who: SignedInStaff, options: { csrf?: boolean; body?: object } = {}) {
  const hasBody = !['GET', 'HEAD', 'DELETE'].includes(op.method);
  return t.app.inject({
    method: op.method as 'GET',
    url: urlOf(op.path),
    headers: {
      cookie: who.cookie,
      client_id: acme.client_id,
      environment: 'sandbox',
      ...(options.csrf === false ? {} : { 'x-csrf-token': who.csrf }),
    },
    ...(hasBody ? { payload: options.body ?? {} } : {}),
  });
}

describe('staff roles on every route', () => {
  test('every state-changing route is a staff action or an integration’s, decided on purpose', () => {
    const undecided = operations.filter(
      (op) =>
        op.staffScope &&
        op.method !== 'GET' &&
        STAFF_ACTIONS[op.operationId] === undefined &&
        !INTEGRATION_ONLY.has(op.operationId),
    );
    assert.deepEqual(
      undecided.map((op) => op.operationId),
      [],
      'add each to STAFF_ACTIONS or to INTEGRATION_ONLY',
    );
  });

  test('every report is a finance read: operations or above', () => {
    const reports = operations.filter((op) => op.path.startsWith('/admin/reports/'));
    assert.ok(reports.length >= 4, reports.map((op) => op.operationId).join());
    for (const op of reports)
      assert.equal(staffMay('viewer', op).allowed, false, `${op.operationId} is refused to viewers`);
  });

  test('the role table decides as written', () => {
    for (const [operationId, needs, body] of EXPECTED) {
      const op = operations.find((o) => o.operationId === operationId);
      assert.ok(op !== undefined, `${operationId} is in the OpenAPI document`);
      for (const role of ROLES) {
        const allowed = allows(role, needs);
        assert.equal(
          staffMay(role, { operationId, method: op.method, body }).allowed,
          allowed,
          `${role} ${operationId}`,
        );
      }
    }
  });

  test('the server answers 403 exactly where the role may not act, for every route and role', async () => {
    let checked = 0;
    for (const op of operations.filter((o) => o.staffScope)) {
      const bodies =
        op.operationId === 'payments.act'
          ? [{ type: 'RETRY_PAYMENT' }, { type: 'ADD_NEW_PAYMENT_METHOD' }]
          : [{}];
      for (const body of bodies)
        for (const role of ROLES) {
          const who = staff.get(role);
          assert.ok(who !== undefined);
          const answer = await call(op, who, { body });
          const decision = staffMay(role, { operationId: op.operationId, method: op.method, body });
          const label = `${role} ${op.method} ${op.path} ${JSON.stringify(body)}: ${answer.statusCode} ${answer.body.slice(0, 200)}`;
          if (decision.allowed) assert.ok(![401, 403].includes(answer.statusCode), label);
          else {
            assert.equal(answer.statusCode, 403, label);
            assert.equal(answer.headers['content-type'], 'application/problem+json; charset=utf-8', label);
            assert.equal(answer.json<{ code: string }>().code, 'FORBIDDEN', label);
          }
          checked++;
        }
    }
    assert.ok(checked > 100, `${String(checked)} requests`);
  });

  test('a state-changing request without the CSRF token is refused on every route, whatever the role', async () => {
    const admin = staff.get('admin');
    assert.ok(admin !== undefined);
    for (const op of operations.filter((o) => o.staffScope && o.method !== 'GET')) {
      const answer = await call(op, admin, { csrf: false });
      assert.equal(answer.statusCode, 403, `${op.method} ${op.path}`);
      assert.equal(answer.json<{ code: string }>().code, 'CSRF_TOKEN_INVALID');
    }
  });

  test('refusals are in the audit trail', async () => {
    const viewer = staff.get('viewer');
    assert.ok(viewer !== undefined);
    const audit = await t.app.inject({
      url: `/admin/audit?actor=${encodeURIComponent('staff:viewer@insurer.example')}&limit=500`,
      headers: t.adminHeaders,
    });
    const denied = audit
      .json<{ data: Array<{ outcome: string; action: string }> }>()
      .data.filter((r) => r.outcome === 'denied');
    assert.ok(denied.some((r) => r.action === 'journeys.void'));
    assert.ok(denied.some((r) => r.action === 'companies.create'));
  });
});
