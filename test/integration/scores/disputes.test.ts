import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { monthScore, scoringRules, tripScore } from '../../../src/modules/scores/rules/index.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { startSmtpServer } from '../../support/smtp.ts';
import { assertProblem, nextAddress } from '../auth/auth-support.ts';
import { signInStaff } from '../staff/staff-support.ts';
import { caller, eventsOfType } from '../telematics/telematics-support.ts';
import { trace } from './score-support.ts';

// Disputes of driving events on a real database: trips cut from uploaded positions and scored, a
// policyholder's dispute, staff's decision rewriting the trip's and month's scores in its transaction,
// audited, emailed through a real SMTP server, and announced as `score.dispute_decided`.
type Company = Awaited<ReturnType<typeof createCompany>>;
interface EventBody {
  event_reference: string;
  kind: string;
  dispute: { dispute_reference: string; state: string } | null;
}
interface JourneyBody {
  journey_reference: string;
  is_void: boolean;
  distance_in_metres: number;
  score: number | null;
  events: EventBody[];
}
interface Dispute {
  dispute_reference: string;
  policy_reference: string;
  journey_reference: string;
  event_reference: string;
  kind: string;
  occurred_at: string;
  reason: string;
  details: string | null;
  state: string;
  created_at: string;
  decided_at: string | null;
  decision_reason: string | null;
  company_reference?: string;
}
interface Month {
  month: string;
  score: number | null;
  disputed: boolean;
  closed: boolean;
}

const clock = fixedClock('2025-06-10T06:00:00Z');
let t: TestApp;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let acme: Company;
let other: Company;
let signedIn = 0;
const call = caller(() => t);
const cut = () => t.container.services.telematics.cutPendingTrips(clock.now());

before(async () => {
  smtp = await startSmtpServer();
  t = await createTestApp({ env: { SMTP_URL: smtp.url }, overrides: { clock } });
  acme = await createCompany(t.app, 'Acme Disputes');
  other = await createCompany(t.app, 'Other Disputes');
});
after(async () => {
  await t.close();
  await smtp.close();
});

/** Staff signed in now (the tests move the clock by weeks, past a session's life). */
async function staff() {
  signedIn++;
  const [olly, val] = await Promise.all([
    signInStaff(t, `olly${String(signedIn)}@disputes.example`, 'operations'),
    signInStaff(t, `val${String(signedIn)}@disputes.example`, 'viewer'),
  ]);
  return { olly, val };
}

/** A policy with one device trip of `brakes` harsh brakes cut and scored; its journey as read. */
async function scoredTrip(company: Company, deviceId: string, startIso: string, brakes: number) {
  clock.set(new Date(Date.parse(startIso) - 3_600_000).toISOString());
  const made = await make.policy(t.app, company);
  await make.device(t.app, company, made.reference, { deviceId });
  clock.set(new Date(Date.parse(startIso) + 2 * 3_600_000).toISOString());
  const r = await call('POST', '/telematics/positions', company.sandbox, {
    device_id: deviceId,
    positions: trace(startIso, brakes),
  });
  assert.equal(r.statusCode, 202, r.body);
  await cut();
  const [journey] = await journeysOf(company, made.reference);
  assert.ok(journey !== undefined);
  assert.equal(journey.events.length, brakes);
  return { ...made, journey };
}

async function journeysOf(company: Company, policy: string): Promise<JourneyBody[]> {
  const r = await call('GET', `/journeys?policy_reference=${policy}`, company.sandbox);
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ journeys: JourneyBody[] }>().journeys.filter((j) => !j.is_void);
}

const dispute = (headers: Record<string, string>, policy: string, event: string, body: object) =>
  t.app.inject({
    method: 'POST',
    url: `/policys/${policy}/score-events/${event}/disputes`,
    headers,
    payload: body,
  });

const decide = (headers: Record<string, string>, reference: string, body: object) =>
  t.app.inject({
    method: 'POST',
    url: `/admin/score-disputes/${reference}/decision`,
    headers,
    payload: body,
  });

async function month(company: Company, policy: string, which: string): Promise<Month> {
  const r = await call('GET', `/policys/${policy}/scores?from=${which}&to=${which}`, company.sandbox);
  assert.equal(r.statusCode, 200, r.body);
  const [m] = r.json<{ months: Month[] }>().months;
  assert.ok(m !== undefined);
  return m;
}

describe('disputing a driving event', () => {
  test('an accepted dispute: the event stops counting, trip and month rescored, audited, emailed, announced', async () => {
    const {
      reference: policy,
      email,
      journey,
    } = await scoredTrip(acme, 'dispute-1', '2025-06-10T07:00:00Z', 2);
    const [first, second] = journey.events;
    assert.ok(first !== undefined && second !== undefined);
    assert.equal(first.dispute, null);

    const opened = await dispute(acme.sandbox, policy, first.event_reference, { reason: 'passenger' });
    assert.equal(opened.statusCode, 201, opened.body);
    const body = opened.json<Dispute>();
    assert.deepEqual(
      { ...body, dispute_reference: '', created_at: '' },
      {
        dispute_reference: '',
        policy_reference: policy,
        journey_reference: journey.journey_reference,
        event_reference: first.event_reference,
        kind: 'harsh_braking',
        occurred_at: body.occurred_at,
        reason: 'passenger',
        details: null,
        state: 'pending',
        created_at: '',
        decided_at: null,
        decision_reason: null,
      },
    );
    // Once an event: a second dispute of it is a conflict.
    assertProblem(
      await dispute(acme.sandbox, policy, first.event_reference, { reason: 'gps_error' }),
      409,
      'EVENT_ALREADY_DISPUTED',
    );
    // The journey shows it; the month is disputed (not used for pricing) until decided.
    const [shown] = await journeysOf(acme, policy);
    assert.deepEqual(shown?.events[0]?.dispute, {
      dispute_reference: body.dispute_reference,
      state: 'pending',
    });
    assert.equal((await month(acme, policy, '2025-06')).disputed, true);
    const listed = await call('GET', `/policys/${policy}/score-disputes`, acme.sandbox);
    assert.deepEqual(
      listed.json<{ disputes: Dispute[] }>().disputes.map((d) => d.dispute_reference),
      [body.dispute_reference],
    );

    // The staff queue, across companies, oldest first; a viewer reads it but may not decide.
    let { olly, val } = await staff();
    const queue = await t.app.inject({ method: 'GET', url: '/admin/score-disputes', headers: val.headers });
    assert.equal(queue.statusCode, 200, queue.body);
    const queued = queue
      .json<{ disputes: Dispute[] }>()
      .disputes.find((d) => d.dispute_reference === body.dispute_reference);
    assert.equal(queued?.company_reference, acme.company_reference);
    const reason = { decision: 'accept', reason: 'The trip was driven by the named driver’s spouse' };
    assert.equal((await decide(val.headers, body.dispute_reference, reason)).statusCode, 403);
    assert.equal((await decide(t.adminHeaders, body.dispute_reference, reason)).statusCode, 403);
    assertProblem(
      await decide(olly.headers, body.dispute_reference, { decision: 'accept', reason: '  ' }),
      422,
      'VALIDATION_FAILED',
    );

    // Closed before the decision: the closed month's score is rewritten too.
    clock.set('2025-07-01T00:30:00Z');
    await t.container.services.scores.closeMonths(clock.now());
    ({ olly, val } = await staff());
    const accepted = await decide(olly.headers, body.dispute_reference, reason);
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.equal(accepted.json<Dispute>().state, 'accepted');
    assert.equal(accepted.json<Dispute>().decision_reason, reason.reason);
    assertProblem(
      await decide(olly.headers, body.dispute_reference, { decision: 'reject', reason: 'no' }),
      409,
      'DISPUTE_DECIDED',
    );

    const [rescored] = await journeysOf(acme, policy);
    const expected = tripScore(
      [{ kind: 'harsh_braking' }],
      0,
      journey.distance_in_metres,
      scoringRules(undefined).weights,
    );
    assert.ok(rescored !== undefined);
    assert.equal(rescored.score, expected);
    assert.ok(expected !== null && journey.score !== null && expected > journey.score);
    assert.equal(rescored.events[0]?.dispute?.state, 'accepted');
    const june = await month(acme, policy, '2025-06');
    assert.equal(june.disputed, false);
    assert.equal(june.score, monthScore([{ score: expected, distanceMetres: journey.distance_in_metres }]));
    assert.equal(await closedScore(policy, '2025-06'), june.score);

    const [decided] = (await eventsOfType(t, 'score.dispute_decided')).filter(
      (e) => (e.data as { dispute_reference: string }).dispute_reference === body.dispute_reference,
    );
    assert.deepEqual(decided?.data, {
      policy_reference: policy,
      dispute_reference: body.dispute_reference,
      decision: 'accepted',
    });

    const emails = await t.container.services.notifications.emailsTo(email);
    const sent = emails.find((e) => e.template === 'score-dispute-accepted');
    assert.ok(sent !== undefined);
    await t.container.services.notifications.deliver([sent.id], 0);
    const [received] = (await smtp.waitFor(email)).filter((m) => /driving score dispute/.test(m.text));
    assert.match(received?.text ?? '', /no longer counts/);
    assert.match(received?.text ?? '', new RegExp(`Score for 2025-06: ${String(june.score?.toFixed(1))}`));

    const audit = await t.app.inject({
      method: 'GET',
      url: `/admin/audit?actor=staff:${olly.email}`,
      headers: t.adminHeaders,
    });
    const tables = audit
      .json<{ data: Array<{ action: string; table: string | null }> }>()
      .data.filter((r) => r.action === 'scores.decideDispute')
      .map((r) => r.table);
    for (const table of ['score_disputes', 'trip_scores', 'score_months'])
      assert.ok(tables.includes(table), `${table} in ${audit.body}`);
  });

  test('a rejected dispute: the score stands, the reason is emailed; details are required for other', async () => {
    const {
      reference: policy,
      email,
      journey,
    } = await scoredTrip(acme, 'dispute-2', '2025-06-11T07:00:00Z', 1);
    const [event] = journey.events;
    assert.ok(event !== undefined);
    const { olly, val } = await staff();
    assertProblem(
      await dispute(acme.sandbox, policy, event.event_reference, { reason: 'other' }),
      422,
      'VALIDATION_FAILED',
    );
    for (const bad of [
      { reason: 'aliens' },
      { reason: 'other', details: '' },
      { reason: 'other', details: 'x'.repeat(1001) },
      {},
    ])
      assertProblem(
        await dispute(acme.sandbox, policy, event.event_reference, bad),
        422,
        'VALIDATION_FAILED',
      );
    const opened = await dispute(acme.sandbox, policy, event.event_reference, {
      reason: 'other',
      details: 'A deer ran out in front of me',
    });
    assert.equal(opened.statusCode, 201, opened.body);
    const { dispute_reference: reference, details } = opened.json<Dispute>();
    assert.equal(details, 'A deer ran out in front of me');
    const read = await t.app.inject({
      method: 'GET',
      url: `/admin/score-disputes/${reference}`,
      headers: val.headers,
    });
    assert.equal(read.json<Dispute>().state, 'pending');
    const rejected = await decide(olly.headers, reference, {
      decision: 'reject',
      reason: 'The brake was 0.5 g on a clear road',
    });
    assert.equal(rejected.statusCode, 200, rejected.body);
    const [after] = await journeysOf(acme, policy);
    assert.equal(after?.score, journey.score);
    const sent = (await t.container.services.notifications.emailsTo(email)).find(
      (e) => e.template === 'score-dispute-rejected',
    );
    assert.match(sent?.text ?? '', /The brake was 0.5 g on a clear road/);
    const rejectedQueue = await t.app.inject({
      method: 'GET',
      url: '/admin/score-disputes?state=rejected',
      headers: val.headers,
    });
    assert.ok(
      rejectedQueue.json<{ disputes: Dispute[] }>().disputes.some((d) => d.dispute_reference === reference),
    );
  });

  test('another company’s or policyholder’s event is 404; unknown references are 404; bad state is 422', async () => {
    const { reference: policy, journey } = await scoredTrip(acme, 'dispute-3', '2025-06-12T07:00:00Z', 1);
    const [event] = journey.events;
    assert.ok(event !== undefined);
    const { olly, val } = await staff();
    const { reference: otherPolicy } = await make.policy(t.app, other);
    assertProblem(
      await dispute(other.sandbox, policy, event.event_reference, { reason: 'passenger' }),
      404,
      'NOT_FOUND',
    );
    // The event is of another policy, even of the same company.
    const { reference: sibling } = await make.policy(t.app, acme);
    assertProblem(
      await dispute(acme.sandbox, sibling, event.event_reference, { reason: 'passenger' }),
      404,
      'NOT_FOUND',
    );
    assertProblem(
      await dispute(other.sandbox, otherPolicy, 'not-a-uuid', { reason: 'passenger' }),
      404,
      'NOT_FOUND',
    );
    assertProblem(await call('GET', `/policys/${policy}/score-disputes`, other.sandbox), 404, 'NOT_FOUND');
    for (const url of ['/admin/score-disputes/not-a-uuid', `/admin/score-disputes/${event.event_reference}`])
      assertProblem(await t.app.inject({ method: 'GET', url, headers: val.headers }), 404, 'NOT_FOUND');
    assertProblem(
      await t.app.inject({ method: 'GET', url: '/admin/score-disputes?state=open', headers: val.headers }),
      422,
      'VALIDATION_FAILED',
    );
    assertProblem(
      await decide(olly.headers, event.event_reference, { decision: 'accept', reason: 'x' }),
      404,
      'NOT_FOUND',
    );
    const anonymous = await t.app.inject({ method: 'GET', url: `/policys/${policy}/score-disputes` });
    assert.equal(anonymous.statusCode, 401);
  });

  test('a policyholder disputes their own event with their token; another policyholder’s answers 404', async () => {
    const {
      reference: policy,
      journey,
      email,
    } = await scoredTrip(acme, 'dispute-4', '2025-06-13T07:00:00Z', 1);
    const [event] = journey.events;
    assert.ok(event !== undefined);
    const own = await tokenOf(email);
    const stranger = await tokenOf((await make.policy(t.app, acme)).email);
    assertProblem(
      await dispute(stranger, policy, event.event_reference, { reason: 'gps_error' }),
      404,
      'NOT_FOUND',
    );
    const opened = await dispute(own, policy, event.event_reference, { reason: 'gps_error' });
    assert.equal(opened.statusCode, 201, opened.body);
    const mine = await t.app.inject({
      method: 'GET',
      url: `/policys/${policy}/score-disputes`,
      headers: own,
    });
    assert.equal(mine.json<{ disputes: Dispute[] }>().disputes.length, 1);
  });

  test('disputes on trips of one closed month accepted at once: each rescore sees the others', async () => {
    const { reference: policy } = await scoredTrip(acme, 'dispute-5', '2025-08-12T07:00:00Z', 2);
    clock.set('2025-08-13T09:00:00Z');
    const r = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: 'dispute-5',
      positions: trace('2025-08-13T07:00:00Z', 2, 11),
    });
    assert.equal(r.statusCode, 202, r.body);
    await cut();
    const trips = await journeysOf(acme, policy);
    assert.equal(trips.length, 2);
    const disputes = await Promise.all(
      trips.flatMap((trip) =>
        trip.events.map(async (e) => {
          const opened = await dispute(acme.sandbox, policy, e.event_reference, { reason: 'gps_error' });
          assert.equal(opened.statusCode, 201, opened.body);
          return opened.json<Dispute>().dispute_reference;
        }),
      ),
    );
    clock.set('2025-09-01T00:30:00Z');
    await t.container.services.scores.closeMonths(clock.now());
    const { olly } = await staff();
    const answers = await Promise.all(
      disputes.map((d) => decide(olly.headers, d, { decision: 'accept', reason: 'A pothole' })),
    );
    assert.deepEqual(
      answers.map((a) => a.statusCode),
      disputes.map(() => 200),
    );
    // Every event accepted: each trip scores as if driven without them, and so does their closed month.
    const weights = scoringRules(undefined).weights;
    const rescored = await journeysOf(acme, policy);
    const expected = trips.map((trip) => ({
      score: tripScore([], 0, trip.distance_in_metres, weights) ?? 0,
      distanceMetres: trip.distance_in_metres,
    }));
    assert.deepEqual(
      rescored.map((j) => j.score),
      expected.map((e) => e.score),
    );
    assert.equal(await closedScore(policy, '2025-08'), monthScore(expected));
  });
});

/** The score stored for a closed month of the policy, as pricing reads it. */
async function closedScore(policy: string, month: string): Promise<number> {
  const closed = await t.container.database.db
    .selectFrom('score_months')
    .select('score')
    .where('month', '=', month)
    .where('policy_id', '=', (await policyIdOf(policy)) ?? '')
    .executeTakeFirst();
  return Number(closed?.score);
}

async function policyIdOf(reference: string): Promise<string | undefined> {
  const row = await t.container.database.db
    .selectFrom('policies')
    .select('id')
    .where('policy_reference', '=', reference)
    .executeTakeFirst();
  return row?.id;
}

/** A policyholder's access token: the welcome email's temporary password, a new one, then signed in. */
async function tokenOf(email: string): Promise<Record<string, string>> {
  const [welcome] = await t.container.services.notifications.emailsTo(email);
  const line = (label: string) => new RegExp(`${label}: (\\S+)`).exec(welcome?.text ?? '')?.[1] ?? '';
  const username = line('Username');
  const headers = { client_id: acme.client_id };
  const token = (payload: object) =>
    t.app.inject({ method: 'POST', url: '/auth/token', headers, payload, remoteAddress: nextAddress() });
  const first = await token({ type: 'USER_PASSWORD_AUTH', username, password: line('Temporary password') });
  const password = 'Marmalade-Lantern-Orbit-77';
  await token({
    type: 'NEW_PASSWORD_REQUIRED',
    username,
    session: first.json<{ session: string }>().session,
    new_password: password,
  });
  const done = await token({ type: 'USER_PASSWORD_AUTH', username, password });
  assert.equal(done.statusCode, 200, done.body);
  return { authorization: `Bearer ${done.json<{ access_token: string }>().access_token}`, ...headers };
}
