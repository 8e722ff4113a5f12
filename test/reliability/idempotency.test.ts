import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fixedClock } from '../../src/platform/clock.ts';
import { encodePolyline } from '../../src/platform/geo/index.ts';
import { createCompany, createTestApp, type TestApp } from '../support/app.ts';
import { onPostgres } from '../support/database.ts';
import { make } from '../support/factories.ts';

/**
 * R3, idempotency: identical requests racing over real sockets store their effect once.
 * - JOURNEYS identical `POST /journeys` (one provider_reference) → one row, one event;
 * - STATEMENTS `POST /statements` for one policy and effective date → one statement, one charge;
 * - RETRIES `RETRY_PAYMENT` of one declined statement → one successful charge at the processor;
 * - ADJUSTMENTS different adjustments of one policy → every one a version, none lost.
 * The sizes are the issue's; set RELIABILITY_R3_SCALE (e.g. 0.1) to shrink them for a quick look.
 * The races are only real on PostgreSQL (PGlite runs one statement at a time): there the suite
 * runs at full size, on PGlite at a tenth, as a check of the same assertions.
 */
const SCALE = Number(process.env['RELIABILITY_R3_SCALE'] ?? (onPostgres ? 1 : 0.1));
const JOURNEYS = Math.max(10, Math.round(1000 * SCALE));
const STATEMENTS = Math.max(10, Math.round(100 * SCALE));
const RETRIES = Math.max(10, Math.round(100 * SCALE));
const ADJUSTMENTS = Math.max(5, Math.round(20 * SCALE));

// The example policy's term starts 2025-06-01 London; billing day 1.
const clock = fixedClock('2025-07-20T12:00:00Z');
const unix = (iso: string) => Date.parse(iso) / 1000;
const ROUTE = encodePolyline([51.5074, -0.1278, 51.5101, -0.134, 51.5155, -0.1419], 5);

let t: TestApp;
let baseUrl: string;
let acme: Awaited<ReturnType<typeof createCompany>>;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  // Card payments in the sandbox go over this socket through the Stripe SDK.
  t.container.setListeningUrl(baseUrl);
  acme = await createCompany(t.app, 'Acme');
  process.stdout.write(
    `# R3 sizes: ${String(JOURNEYS)} journeys, ${String(STATEMENTS)} statements, ${String(RETRIES)} retries, ${String(ADJUSTMENTS)} adjustments (${onPostgres ? 'PostgreSQL' : 'PGlite'})\n`,
  );
});
after(() => t.close());

/** `count` copies of one request at once, over sockets of their own; the statuses, in order. */
async function race(
  count: number,
  path: string,
  body: (i: number) => unknown,
): Promise<Array<{ status: number; body: unknown }>> {
  const start = Promise.withResolvers<undefined>();
  const sent = Array.from({ length: count }, async (_, i) => {
    await start.promise;
    const response = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { ...acme.sandbox, 'content-type': 'application/json' },
      body: JSON.stringify(body(i)),
    });
    const answer: unknown = await response.json();
    return { status: response.status, body: answer };
  });
  start.resolve(undefined);
  return Promise.all(sent);
}

const tally = (statuses: number[]): string =>
  [...new Set(statuses)]
    .map((s) => `${String(s)}×${String(statuses.filter((x) => x === s).length)}`)
    .join(' ');

/** A policy bound with a card payment (as a client confirms it with Stripe.js), so statements charge. */
const paidPolicy = async () =>
  (await make.cardPaidPolicy(t, acme, { pricing: { upfront_premium: 95.5 } }, { productReference: 'pay' }))
    .reference;
const postJourney = (reference: string, startIso: string) => make.journey(t.app, acme, reference, startIso);

/** Successful charges at the processor (the sandbox's own records) for a Milepost payment reference. */
async function processorCharges(paymentReference: string): Promise<number> {
  const intents = (await t.container.database.db
    .selectFrom('stripe_sandbox_objects' as never)
    .select(['data' as never])
    .where('type' as never, '=', 'payment_intent' as never)
    .execute()) as Array<{ data: { status: string; metadata: Record<string, string> } }>;
  return intents.filter(
    (i) => i.data.metadata['milepost_payment'] === paymentReference && i.data.status === 'succeeded',
  ).length;
}

async function paymentsOf(reference: string) {
  return t.container.database.db
    .selectFrom('payments')
    .innerJoin('policies', 'policies.id', 'payments.policy_id')
    .select(['payments.id', 'payments.status', 'payments.policy_version_id'])
    .where('policies.policy_reference', '=', reference)
    .execute();
}

test(`${String(JOURNEYS)} concurrent identical POST /journeys store one journey and one event`, async () => {
  const { reference: policy } = await make.policy(t.app, acme, {
    proposer: { email: 'r3.journeys@example.com' },
  });
  const body = {
    policy_reference: policy,
    route: ROUTE,
    start_time: unix('2025-07-01T08:00:00Z'),
    end_time: unix('2025-07-01T08:10:00Z'),
    provider_reference: 'r3-burst',
  };
  const answers = await race(JOURNEYS, '/journeys', () => body);
  const statuses = answers.map((a) => a.status);
  assert.equal(statuses.filter((s) => s === 201).length, 1, tally(statuses));
  assert.equal(statuses.filter((s) => s === 200).length, JOURNEYS - 1, tally(statuses));
  const references = new Set(answers.map((a) => (a.body as { journey_reference: string }).journey_reference));
  assert.equal(references.size, 1, 'every answer names the one journey');
  const rows = await t.container.database.db
    .selectFrom('journeys')
    .select('id')
    .where('provider_reference', '=', 'r3-burst')
    .execute();
  assert.equal(rows.length, 1);
  const events = await t.container.database.db
    .selectFrom('events')
    .select('data')
    .where('type', '=', 'journey.created')
    .execute();
  assert.equal(
    events.filter((e) => (e.data as { provider_reference?: string }).provider_reference === 'r3-burst')
      .length,
    1,
  );
});

test(`${String(STATEMENTS)} concurrent POST /statements for one policy and date: one statement, one charge`, async () => {
  const reference = await paidPolicy();
  for (const day of ['03', '09', '17']) await postJourney(reference, `2025-06-${day}T08:00:00Z`);
  const answers = await race(STATEMENTS, '/statements', () => ({
    policy_reference: reference,
    effective_date: unix('2025-06-30T22:59:59Z'),
  }));
  const statuses = answers.map((a) => a.status);
  assert.ok(
    statuses.every((s) => s === 201 || s === 200 || s === 409),
    tally(statuses),
  );
  assert.ok(statuses.filter((s) => s === 201).length === 1, tally(statuses));
  const statements = await t.container.database.db
    .selectFrom('statements')
    .innerJoin('policies', 'policies.id', 'statements.policy_id')
    .select(['statements.id', 'statements.journey_count'])
    .where('policies.policy_reference', '=', reference)
    .execute();
  assert.equal(statements.length, 1, 'one statement');
  assert.equal(statements[0]?.journey_count, 3);
  const charges = (await paymentsOf(reference)).filter((p) => p.policy_version_id === statements[0]?.id);
  assert.equal(charges.length, 1, 'one payment for the statement');
  const [charge] = charges;
  assert.equal(charge?.status, 'succeeded');
  assert.equal(await processorCharges(charge.id), 1, 'one charge at the processor');
});

test(`${String(RETRIES)} concurrent RETRY_PAYMENT of one declined statement: one charge`, async () => {
  const reference = await paidPolicy();
  await postJourney(reference, '2025-06-05T08:00:00Z');
  // The card on file now declines: the statement's charge fails.
  const customer = (
    await t.container.database.db
      .selectFrom('payments')
      .innerJoin('policies', 'policies.id', 'payments.policy_id')
      .select('payments.provider_customer_id')
      .where('policies.policy_reference', '=', reference)
      .executeTakeFirstOrThrow()
  ).provider_customer_id;
  assert.ok(customer !== null);
  const gateway = t.container.gateways.forEnvironment('sandbox', acme.stripe_sandbox_secret_key);
  const setCard = async (pm: string) => {
    const card = await gateway.attachPaymentMethod({
      customerId: customer,
      paymentMethodId: pm,
      idempotencyKey: `r3-${pm}-${reference}`,
    });
    await gateway.setDefaultPaymentMethod(customer, card.id);
  };
  await setCard('pm_card_chargeDeclined');
  const issued = await t.app.inject({
    method: 'POST',
    url: '/statements',
    headers: acme.sandbox,
    payload: { policy_reference: reference, effective_date: unix('2025-06-30T22:59:59Z') },
  });
  assert.equal(issued.statusCode, 201, issued.body);
  const version = issued.json<{ policy_version_reference: string }>().policy_version_reference;
  const failed = (await paymentsOf(reference)).find((p) => p.policy_version_id === version);
  assert.equal(failed?.status, 'failed', 'the statement’s charge was declined');
  // A good card at the processor directly (ADD_NEW_PAYMENT_METHOD would collect at once).
  await setCard('pm_card_visa');
  const answers = await race(RETRIES, '/payments', () => ({
    type: 'RETRY_PAYMENT',
    product_reference: 'pay',
    policy_reference: reference,
    policy_version_reference: version,
  }));
  const statuses = answers.map((a) => a.status);
  assert.ok(
    statuses.every((s) => s === 200 || s === 409),
    tally(statuses),
  );
  assert.equal(await processorCharges(failed.id), 1, 'one successful charge at the processor');
  const after = (await paymentsOf(reference)).filter((p) => p.policy_version_id === version);
  assert.deepEqual(
    after.map((p) => p.status),
    ['succeeded'],
  );
});

test(`${String(ADJUSTMENTS)} concurrent adjustments of one policy: every one a version, none lost`, async () => {
  const { input, reference } = await make.policy(t.app, acme, {
    proposer: { email: 'r3.adjust@example.com' },
  });
  const regs = Array.from({ length: ADJUSTMENTS }, (_, i) => `R${String(i).padStart(2, '0')}AAA`);
  const answers = await race(ADJUSTMENTS, '/policys', (i) => ({
    ...input,
    policy: { ...input.policy, policy_reference: reference },
    vehicle: { ...input.vehicle, reg: regs[i] },
  }));
  assert.deepEqual(
    answers.map((a) => a.status),
    regs.map(() => 200),
  );
  const final = (await t.app.inject({ url: `/policys/${reference}`, headers: acme.sandbox })).json<{
    versions: Array<{ version_type: string; vehicle_reg: string }>;
  }>();
  assert.deepEqual(
    final.versions.map((v) => v.version_type),
    ['nb', ...regs.map(() => 'mta')],
  );
  assert.deepEqual(new Set(final.versions.slice(1).map((v) => v.vehicle_reg)), new Set(regs));
});
