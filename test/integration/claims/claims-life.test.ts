import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { CLAIM_STATES, CLAIM_TRANSITIONS, type ClaimState } from '../../../src/modules/claims/index.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { createStaff, signInStaff, type SignedInStaff } from '../staff/staff-support.ts';
import {
  caller,
  claimsPass,
  crashBody,
  reportClaim,
  type Claim,
  type Headers,
  type Problem,
} from './claims-support.ts';

// The claim's life: the state table, exposures with reserves and payments, handlers, notes, the audit
// trail and the events. The example policy's term: 2025-06-01 to 2026-05-31 (London).
const clock = fixedClock('2025-08-01T09:00:00Z');
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let rival: Awaited<ReturnType<typeof createCompany>>;
let policyReference: string;
let deviceId: string;
let handler: SignedInStaff;
const call = caller(() => t);
const nowS = () => Math.floor(clock.now().getTime() / 1000);

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme Insurance');
  rival = await createCompany(t.app, 'Rival Mutual');
  policyReference = (await make.policy(t.app, acme)).reference;
  deviceId = (await make.device(t.app, acme, policyReference)).device_id;
  clock.advance(3_600_000);
  handler = await signInStaff(t, 'handler@insurer.example', 'claims');
});
after(() => t.close());

const staffHeaders = (who: SignedInStaff): Headers => ({
  cookie: who.cookie,
  'x-csrf-token': who.csrf,
  client_id: acme.client_id,
  environment: 'sandbox',
});

async function act(claimId: string, path: string, body: object, headers: Headers = acme.sandbox) {
  return call(path.endsWith('reserve') ? 'PUT' : 'POST', `/claims/${claimId}${path}`, headers, body);
}

async function move(claimId: string, state: ClaimState) {
  const r = await act(claimId, '/transitions', { state });
  assert.equal(r.statusCode, 200, `→ ${state}: ${r.body}`);
  return r.json<Claim>();
}

/** A draft from a new crash (3 minutes after the last, so never a duplicate). */
async function draft(): Promise<Claim> {
  clock.advance(3 * 60_000);
  const r = await call('POST', '/telematics/events', acme.sandbox, crashBody(deviceId, nowS()));
  assert.equal(r.statusCode, 201, r.body);
  const crash = r.json<{ crash_reference: string }>().crash_reference;
  await claimsPass(t, clock);
  const row = await t.container.database.db
    .selectFrom('claims')
    .select('id')
    .where('crash_event_id', '=', crash)
    .executeTakeFirstOrThrow();
  return (await call('GET', `/claims/${row.id}`, acme.sandbox)).json<Claim>();
}

/** An open claim with one exposure of £100 paid in full (so it may be settled). */
async function settleable(): Promise<Claim> {
  const claim = await reportClaim(t, acme.sandbox, policyReference, nowS() - 60);
  const withExposure = (
    await act(claim.claim_reference, '/exposures', { kind: 'own_vehicle', reserve: 100 })
  ).json<Claim>();
  const exposure = withExposure.exposures[0]!.exposure_id;
  const paid = await act(claim.claim_reference, `/exposures/${exposure}/payments`, {
    amount: 100,
    final: true,
    payee: 'Policyholder',
  });
  assert.equal(paid.statusCode, 201, paid.body);
  return paid.json<Claim>();
}

/** A claim brought to `state` along allowed changes. */
async function claimIn(state: ClaimState): Promise<Claim> {
  switch (state) {
    case 'draft':
      return draft();
    case 'open':
      return reportClaim(t, acme.sandbox, policyReference, nowS() - 60);
    case 'settled':
      return move((await settleable()).claim_reference, 'settled');
    case 'closed':
      return move((await claimIn('settled')).claim_reference, 'closed');
    case 'rejected':
      return move((await claimIn('open')).claim_reference, 'rejected');
    case 'withdrawn':
      return move((await claimIn('open')).claim_reference, 'withdrawn');
    case 'reopened':
      return move((await claimIn('rejected')).claim_reference, 'reopened');
  }
}

describe('the state table', () => {
  test('every change is allowed or refused (409) exactly as the table says', async () => {
    for (const from of CLAIM_STATES)
      for (const to of CLAIM_STATES) {
        if (to === from) continue;
        // A settle needs its exposures settled: the claim to settle from open has one paid in full.
        const claim =
          to === 'settled' && (from === 'open' || from === 'reopened')
            ? from === 'open'
              ? await settleable()
              : await move(
                  (await move((await settleable()).claim_reference, 'rejected')).claim_reference,
                  'reopened',
                )
            : await claimIn(from);
        assert.equal(claim.state, from);
        const r = await act(claim.claim_reference, '/transitions', { state: to, reason: `to ${to}` });
        const allowed = CLAIM_TRANSITIONS[from].includes(to);
        assert.equal(r.statusCode, allowed ? 200 : 409, `${from} → ${to}: ${r.body}`);
        if (allowed) {
          assert.equal(r.json<Claim>().state, to);
          assert.ok(
            r.json<Claim>().notes?.some((n) => n.text === `to ${to}`),
            'the reason is a note',
          );
        } else assert.match(r.json<Problem>().detail, new RegExp(`may not become ${to}`));
      }
  });

  test('the database refuses a change outside the table, and a claim born in another state', async () => {
    const claim = await claimIn('closed');
    await assert.rejects(
      sql`update claims set state = 'open' where id = ${claim.claim_reference}`.execute(
        t.container.database.db,
      ),
      /may not go from closed to open/,
    );
    for (const to of CLAIM_STATES.filter((s) => s !== 'closed' && s !== 'reopened'))
      await assert.rejects(
        sql`update claims set state = ${to} where id = ${claim.claim_reference}`.execute(
          t.container.database.db,
        ),
        /may not go from closed/,
        `closed → ${to}`,
      );
  });

  test('settling needs every exposure settled; an unknown state is 422', async () => {
    const claim = await reportClaim(t, acme.sandbox, policyReference, nowS() - 60);
    const bare = await act(claim.claim_reference, '/transitions', { state: 'settled' });
    assert.equal(bare.statusCode, 409, bare.body);
    const unknown = await act(claim.claim_reference, '/transitions', { state: 'paid' });
    assert.equal(unknown.statusCode, 422, unknown.body);
  });
});

describe('exposures, reserves and payments', () => {
  test('a payment never above the reserve; partial then final; none after the final one', async () => {
    const claim = await reportClaim(t, acme.sandbox, policyReference, nowS() - 60);
    const id = claim.claim_reference;
    const added = await act(id, '/exposures', { kind: 'other_vehicle', reserve: 1500.5 });
    assert.equal(added.statusCode, 201, added.body);
    const exposure = added.json<Claim>().exposures[0]!;
    assert.deepEqual(
      [exposure.kind, exposure.reserve, exposure.paid, exposure.outstanding],
      ['other_vehicle', 1500.5, 0, 1500.5],
    );
    const pay = (amount: number, final = false) =>
      act(id, `/exposures/${exposure.exposure_id}/payments`, { amount, final, payee: 'Third party insurer' });
    assert.equal((await pay(1000)).statusCode, 201);
    const over = await pay(600);
    assert.equal(over.statusCode, 409, over.body);
    assert.match(over.json<Problem>().detail, /raise the reserve/);
    assert.equal(
      (await act(id, `/exposures/${exposure.exposure_id}/reserve`, { reserve: 999 })).statusCode,
      409,
      'below paid',
    );
    assert.equal(
      (await act(id, `/exposures/${exposure.exposure_id}/reserve`, { reserve: 1600.5 })).statusCode,
      200,
    );
    clock.advance(60_000);
    const final = await pay(600.5, true);
    assert.equal(final.statusCode, 201, final.body);
    const settled = final.json<Claim>().exposures[0]!;
    assert.deepEqual([settled.paid, settled.outstanding], [1600.5, 0]);
    assert.ok(settled.settled_at !== null);
    assert.equal((await pay(1)).statusCode, 409, 'none after the final one');
    assert.equal((await pay(0.001)).statusCode, 422, 'pounds with 2 decimals');
    assert.equal((await act(id, '/exposures', { kind: 'spaceship', reserve: 1 })).statusCode, 422);
    assert.deepEqual(
      final.json<Claim>().payments.map((p) => [p.amount, p.final]),
      [
        [1000, false],
        [600.5, true],
      ],
    );
  });

  test('a payment sent again with its payment_reference is recorded once, even after it settled the exposure', async () => {
    const claim = await reportClaim(t, acme.sandbox, policyReference, nowS() - 60);
    const id = claim.claim_reference;
    const added = await act(id, '/exposures', { kind: 'other_vehicle', reserve: 2000 });
    const exposure = added.json<Claim>().exposures[0]!;
    const pay = (body: object) => act(id, `/exposures/${exposure.exposure_id}/payments`, body);
    const first = { amount: 1500, final: false, payee: 'Repairer', payment_reference: 'ledger-1' };
    assert.equal((await pay(first)).statusCode, 201);
    const again = await pay(first);
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(
      again.json<Claim>().payments.map((p) => [p.amount, p.payment_reference]),
      [[1500, 'ledger-1']],
    );
    assert.equal(again.json<Claim>().exposures[0]!.paid, 1500, 'paid once');
    // The same reference for another payment is refused; a new reference is a new payment.
    const other = await pay({ ...first, amount: 1000 });
    assert.equal(other.statusCode, 409, other.body);
    assert.match(other.json<Problem>().detail, /names another payment/);
    const final = { amount: 500, final: true, payee: 'Repairer', payment_reference: 'ledger-2' };
    assert.equal((await pay(final)).statusCode, 201);
    const finalAgain = await pay(final);
    assert.equal(finalAgain.statusCode, 200, finalAgain.body);
    assert.equal(finalAgain.json<Claim>().payments.length, 2);
    assert.equal((await pay({ ...final, payment_reference: 'has space' })).statusCode, 422);
  });

  test('pounds with at most 2 decimals, read as decimals: 1.15 and 0.07 are pence, 1.155 is not', async () => {
    const claim = await reportClaim(t, acme.sandbox, policyReference, nowS() - 60);
    const id = claim.claim_reference;
    const added = await act(id, '/exposures', { kind: 'theft', reserve: 1.15 });
    assert.equal(added.statusCode, 201, added.body);
    const exposure = added.json<Claim>().exposures[0]!;
    assert.equal(exposure.reserve, 1.15);
    const reserve = (value: number) =>
      act(id, `/exposures/${exposure.exposure_id}/reserve`, { reserve: value });
    assert.equal((await reserve(4.35)).statusCode, 200);
    const paid = await act(id, `/exposures/${exposure.exposure_id}/payments`, {
      amount: 0.07,
      final: false,
      payee: 'Policyholder',
    });
    assert.equal(paid.statusCode, 201, paid.body);
    assert.deepEqual(
      [paid.json<Claim>().exposures[0]!.paid, paid.json<Claim>().exposures[0]!.outstanding],
      [0.07, 4.28],
    );
    const tooFine = await reserve(1.155);
    assert.equal(tooFine.statusCode, 422, tooFine.body);
    assert.deepEqual(tooFine.json<{ errors: unknown[] }>().errors, [
      { path: '/body/reserve', message: 'must have at most 2 decimal places' },
    ]);
  });

  test('the database refuses a payment above the reserve however it is written', async () => {
    const claim = await reportClaim(t, acme.sandbox, policyReference, nowS() - 60);
    const exposure = (
      await act(claim.claim_reference, '/exposures', { kind: 'windscreen', reserve: 50 })
    ).json<Claim>().exposures[0]!;
    const row = await t.container.database.db
      .selectFrom('claims')
      .select(['policy_id', 'company_id', 'environment'])
      .where('id', '=', claim.claim_reference)
      .executeTakeFirstOrThrow();
    await assert.rejects(
      t.container.database.db
        .insertInto('claim_payments')
        .values({
          ...row,
          claim_id: claim.claim_reference,
          exposure_id: exposure.exposure_id,
          amount_pence: 5001,
          final: false,
          payee: 'x',
          paid_at: clock.now(),
        })
        .execute(),
      /claim_exposures_paid_within_reserve/,
    );
  });
});

describe('staff', () => {
  test('a claims handler acts on claims, audited; viewers and operations may not; handlers must be claims staff', async () => {
    const claim = await reportClaim(t, acme.sandbox, policyReference, nowS() - 60);
    const id = claim.claim_reference;
    const headers = staffHeaders(handler);
    const exposure = await act(id, '/exposures', { kind: 'injury', reserve: 2500 }, headers);
    assert.equal(exposure.statusCode, 201, exposure.body);
    const note = await act(id, '/notes', { text: 'Called the policyholder; all well.' }, headers);
    assert.equal(note.statusCode, 201, note.body);
    assert.deepEqual(
      note.json<Claim>().notes?.map((n) => n.author),
      ['staff:handler@insurer.example'],
    );
    const me = await call('PUT', `/claims/${id}/handler`, headers, {
      staff_id: (
        await t.container.database.db
          .selectFrom('staff')
          .select('id')
          .where('email', '=', 'handler@insurer.example')
          .executeTakeFirstOrThrow()
      ).id,
    });
    assert.equal(me.statusCode, 200, me.body);
    const viewerId = (await createStaff(t, 'viewer-of-claims@insurer.example', 'viewer')).staff_id;
    const notHandler = await call('PUT', `/claims/${id}/handler`, headers, { staff_id: viewerId });
    assert.equal(notHandler.statusCode, 422, notHandler.body);
    const audit = await t.app.inject({
      url: `/admin/audit?actor=${encodeURIComponent('staff:handler@insurer.example')}&limit=100`,
      headers: t.adminHeaders,
    });
    const tables = audit.json<{ data: Array<{ table: string | null }> }>().data.map((r) => r.table);
    assert.ok(
      tables.includes('claim_exposures') && tables.includes('claim_notes') && tables.includes('claims'),
      JSON.stringify(tables),
    );
    for (const role of ['viewer', 'operations'] as const) {
      const who = await signInStaff(t, `${role}-claims@insurer.example`, role);
      const read = await call('GET', `/claims/${id}`, staffHeaders(who));
      assert.equal(read.statusCode, 200, 'everyone reads');
      const refused = await act(id, '/notes', { text: 'x' }, staffHeaders(who));
      assert.equal(refused.statusCode, 403, refused.body);
    }
  });

  test('another company’s claim is 404 on every staff route', async () => {
    const claim = await reportClaim(t, acme.sandbox, policyReference, nowS() - 60);
    const id = claim.claim_reference;
    const exposure = (await act(id, '/exposures', { kind: 'theft', reserve: 10 })).json<Claim>().exposures[0]!
      .exposure_id;
    const probes: Array<[string, object]> = [
      ['/transitions', { state: 'rejected' }],
      ['/exposures', { kind: 'theft', reserve: 1 }],
      [`/exposures/${exposure}/reserve`, { reserve: 20 }],
      [`/exposures/${exposure}/payments`, { amount: 1, final: false, payee: 'x' }],
      ['/notes', { text: 'x' }],
    ];
    for (const [path, body] of probes) {
      const r = await act(id, path, body, rival.sandbox);
      assert.equal(r.statusCode, 404, `${path}: ${r.body}`);
    }
    assert.equal((await call('GET', `/claims/${id}`, rival.sandbox)).statusCode, 404);
    assert.equal((await call('GET', '/claims', rival.sandbox)).json<{ claims: Claim[] }>().claims.length, 0);
    const production = { ...acme.production };
    assert.equal((await call('GET', `/claims/${id}`, production)).statusCode, 404, 'another environment');
  });

  test('events: claim.opened, claim.updated and claim.closed, each naming the change', async () => {
    const closed = await claimIn('closed');
    const events = await t.container.database.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where(sql<boolean>`data ->> 'claim_reference' = ${closed.claim_reference}`)
      .orderBy('sequence')
      .execute();
    assert.deepEqual(
      events.map((e) => `${e.type} ${(e.data as { change: string }).change}`),
      [
        'claim.opened reported',
        'claim.updated exposure:own_vehicle',
        'claim.updated payment',
        'claim.updated state:settled',
        'claim.closed state:closed',
      ],
    );
  });
});
