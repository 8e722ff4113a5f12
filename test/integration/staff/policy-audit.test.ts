import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { signInStaff, type SignedInStaff } from './staff-support.ts';

/**
 * A policy's audit trail is found by the policy: each action staff can take on one policy (bind and
 * unbind a device, void a journey, grant a credit, retry a payment, resend the welcome email, replay
 * the policy's event and retry its delivery, cancel with a refund) is recorded with the policy's
 * reference on every record it wrote, and `GET /admin/audit?policy_reference=…` finds all of them.
 */

// The example policy's term: 2025-06-01 to 2026-05-31 (London), billing day 1.
const clock = fixedClock('2025-07-20T12:00:00Z');

interface AuditRecord {
  id: string;
  action: string;
  resource: string | null;
  company_reference: string | null;
  environment: string | null;
  policy_reference: string | null;
  request_id: string;
  outcome: string;
  table: string | null;
}

let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let ops: SignedInStaff;
let reference = '';
let endpointId = '';
let receiver: Server;
/** Each action's request id, in the order they were taken. */
const actions = new Map<string, string>();

/** The console's view of the company: the staff cookie and CSRF token, the company named by its client id. */
const asStaff = () => ({ ...ops.headers, client_id: acme.client_id, environment: 'sandbox' });

async function auditOf(requestId: string): Promise<AuditRecord[]> {
  const r = await t.app.inject({
    url: `/admin/audit?request_id=${encodeURIComponent(requestId)}&limit=500`,
    headers: t.adminHeaders,
  });
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ data: AuditRecord[] }>().data;
}

/** The records of `policy_reference`, every page of them. */
async function auditOfPolicy(policyReference: string): Promise<AuditRecord[]> {
  const rows: AuditRecord[] = [];
  const query = `/admin/audit?company_reference=${acme.company_reference}&environment=sandbox&policy_reference=${policyReference}&limit=50`;
  let url: string | undefined = query;
  while (url !== undefined) {
    const answer: LightMyRequestResponse = await t.app.inject({ url, headers: { cookie: ops.cookie } });
    assert.equal(answer.statusCode, 200, answer.body);
    const page = answer.json<{ data: AuditRecord[]; next_cursor: string | null }>();
    rows.push(...page.data);
    url = page.next_cursor === null ? undefined : `${query}&after=${page.next_cursor}`;
  }
  return rows;
}

/**
 * Takes an action as the operations user and checks its records: there is at least one, and every
 * one of them names the policy (the message lists those that do not, by table).
 */
async function act(
  operationId: string,
  request: { method: 'POST' | 'DELETE'; url: string; payload?: object; headers?: Record<string, string> },
  status: number,
): Promise<AuditRecord[]> {
  const answer = await t.app.inject({ headers: asStaff(), ...request });
  assert.equal(answer.statusCode, status, answer.body);
  const requestId = answer.headers['x-request-id'] as string;
  actions.set(operationId, requestId);
  const records = await auditOf(requestId);
  assert.ok(records.length > 0, `${operationId} is recorded`);
  assert.ok(
    records.every((r) => r.action === operationId && r.outcome === 'ok'),
    JSON.stringify(records),
  );
  const unnamed = records.filter((r) => r.policy_reference !== reference);
  assert.deepEqual(
    unnamed.map((r) => `${r.table ?? '(request)'}: ${String(r.policy_reference)}`),
    [],
    `every record of ${operationId} names ${reference}`,
  );
  assert.ok(
    records.every((r) => r.company_reference === acme.company_reference && r.environment === 'sandbox'),
    `every record of ${operationId} names the policy's company and environment: ${JSON.stringify(records)}`,
  );
  return records;
}

before(async () => {
  t = await createTestApp({ overrides: { clock }, listen: true });
  acme = await createCompany(t.app, 'Acme');
  ops = await signInStaff(t, 'olive.ops@insurer.example', 'operations');

  // The new-business payment made as a client does (intent, confirmed in the sandbox with a card
  // that pays), then a card that declines for later charges: the statement's charge fails.
  const payments = (body: object) =>
    t.app.inject({
      method: 'POST',
      url: '/payments',
      headers: acme.sandbox,
      payload: { product_reference: 'ppm', ...body },
    });
  const intent = (await payments({ type: 'CREATE_PAYMENT_INTENT', amount: 9550 })).json<
    Record<string, string>
  >();
  const confirmed = await fetch(
    `${t.container.gateways.sandboxBaseUrl() ?? ''}/sandbox/stripe/v1/payment_intents/${intent['payment_provider_transaction_ref'] ?? ''}/confirm`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_secret: intent['payment_temporary_token'] ?? '',
        payment_method: 'pm_card_visa',
      }),
    },
  );
  assert.equal(confirmed.status, 200, await confirmed.text());
  reference = (
    await make.policy(t.app, acme, {
      proposer: { email: 'fern.holder@example.com' },
      pricing: { upfront_premium: 95.5 },
      payment: {
        provider_payment_reference: intent['payment_provider_transaction_ref'] ?? '',
        provider_customer_reference: intent['payment_provider_customer_ref'] ?? '',
        payment_provider: 'stripe',
        payment_amount: 95.5,
        payment_method_id: undefined,
      },
    })
  ).reference;
  const card = await payments({
    type: 'ADD_NEW_PAYMENT_METHOD',
    policy_reference: reference,
    payment_method_id: 'pm_card_chargeDeclinedInsufficientFunds',
  });
  assert.equal(card.statusCode, 200, card.body);

  await make.journey(t.app, acme, reference, '2025-06-10T08:00:00Z');
  const statement = await make.statement(t.app, acme, reference, '2025-06-30T22:59:59Z');
  assert.equal(statement.payment?.payment_amount, null);

  // A receiver that is down: the replayed delivery's attempt fails and waits for its next try.
  receiver = createServer((_request, response) => {
    response.writeHead(500).end('down');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${String((receiver.address() as AddressInfo).port)}`;
  const hook = await t.app.inject({
    method: 'POST',
    url: '/webhooks',
    headers: acme.sandbox,
    payload: { url: `${receiverUrl}/milepost`, description: 'Acme CRM, down for now' },
  });
  assert.equal(hook.statusCode, 201, hook.body);
  endpointId = hook.json<{ id: string }>().id;
});
after(async () => {
  receiver.close();
  await t.close();
});

describe('every audited action on a policy is found by the policy', () => {
  test('devices.bind', async () => {
    await act(
      'devices.bind',
      {
        method: 'POST',
        url: '/devices',
        payload: { device_id: 'obd-fern-1', policy_reference: reference, kind: 'obd' },
      },
      201,
    );
  });

  test('journeys.void (a billed journey: a credit on the next statement)', async () => {
    const list = await t.app.inject({
      url: `/journeys?policy_reference=${reference}`,
      headers: acme.sandbox,
    });
    const journey = list.json<{ journeys: Array<{ journey_reference: string }> }>().journeys[0];
    assert.ok(journey !== undefined, list.body);
    const records = await act(
      'journeys.void',
      {
        method: 'POST',
        url: `/journeys/${journey.journey_reference}/void`,
        payload: { reason: 'driven by a friend on their own policy' },
      },
      200,
    );
    assert.ok(records.some((r) => r.table === 'journeys'));
    assert.ok(
      records.some((r) => r.table === 'events'),
      'the event of the void is the policy’s too',
    );
  });

  test('statements.grantCredit', async () => {
    const records = await act(
      'statements.grantCredit',
      {
        method: 'POST',
        url: '/admin/credits',
        headers: ops.headers,
        payload: {
          company_reference: acme.company_reference,
          environment: 'sandbox',
          policy_reference: reference,
          amount: 7.5,
          reason: 'goodwill: app outage',
        },
      },
      201,
    );
    assert.ok(records.some((r) => r.table === 'policy_credits'));
    assert.ok(records.some((r) => r.table === 'events'));
  });

  test('payments.act RETRY_PAYMENT (declined again)', async () => {
    const list = await t.app.inject({
      url: `/payments?policy_reference=${reference}`,
      headers: acme.sandbox,
    });
    const failed = list
      .json<{
        payments: Array<{ purpose: string; status: string; policy_version_reference: string | null }>;
      }>()
      .payments.find((p) => p.purpose === 'statement' && p.status === 'failed');
    assert.ok(failed?.policy_version_reference != null, list.body);
    const records = await act(
      'payments.act',
      {
        method: 'POST',
        url: '/payments',
        payload: {
          type: 'RETRY_PAYMENT',
          product_reference: 'ppm',
          policy_reference: reference,
          policy_version_reference: failed.policy_version_reference,
        },
      },
      200,
    );
    assert.ok(records.some((r) => r.table === 'payments'));
  });

  test('policies.resendWelcome', async () => {
    const records = await act(
      'policies.resendWelcome',
      { method: 'POST', url: `/policys/${reference}/welcome-email` },
      202,
    );
    assert.ok(
      records.some((r) => r.table === 'users'),
      'the account’s new temporary password',
    );
    assert.ok(records.some((r) => r.table === 'outbox_emails'));
  });

  test('events.replay and webhooks.retryDelivery of the policy’s event', async () => {
    const event = await t.container.database.db
      .selectFrom('events')
      .select('id')
      .where('type', '=', 'policy.created')
      .where(sql<string>`data ->> 'policy_reference'`, '=', reference)
      .executeTakeFirstOrThrow();
    const replayed = await t.app.inject({
      method: 'POST',
      url: `/events/${event.id}/replay`,
      headers: asStaff(),
      payload: { webhook_id: endpointId },
    });
    assert.equal(replayed.statusCode, 202, replayed.body);
    const requestId = replayed.headers['x-request-id'] as string;
    const records = await auditOf(requestId);
    assert.ok(
      records.some((r) => r.table === 'webhook_deliveries'),
      JSON.stringify(records),
    );
    assert.deepEqual(
      records.filter((r) => r.policy_reference !== reference).map((r) => r.table),
      [],
      'the delivery of the policy’s event is recorded against the policy',
    );
    actions.set('events.replay', requestId);

    const delivery = replayed.json<{ deliveries: Array<{ id: string }> }>().deliveries[0];
    assert.ok(delivery !== undefined);
    assert.equal(await t.container.services.webhooks.deliverDue(), 1, 'the attempt failed');
    await act(
      'webhooks.retryDelivery',
      { method: 'POST', url: `/webhooks/${endpointId}/deliveries/${delivery.id}/retry` },
      202,
    );
  });

  test('devices.unbind', async () => {
    await act('devices.unbind', { method: 'DELETE', url: '/devices/obd-fern-1' }, 200);
  });

  test('policies.cancel (with a refund of the unused term)', async () => {
    const records = await act(
      'policies.cancel',
      { method: 'DELETE', url: `/policys/${reference}`, payload: { reason: 'sold the car' } },
      200,
    );
    assert.ok(records.some((r) => r.table === 'policy_versions'));
    assert.ok(
      records.some((r) => r.table === 'payments'),
      'the refund',
    );
  });

  test('the policy filter finds every record of every action', async () => {
    const found = await auditOfPolicy(reference);
    const foundIds = new Set(found.map((r) => r.id));
    for (const [operationId, requestId] of actions) {
      const missing = (await auditOf(requestId)).filter((r) => !foundIds.has(r.id));
      assert.deepEqual(
        missing.map((r) => r.table ?? '(request)'),
        [],
        `${operationId}: every record is found by the policy`,
      );
    }
    assert.ok(found.every((r) => r.policy_reference === reference));
    assert.equal(actions.size, 9);
  });
});
