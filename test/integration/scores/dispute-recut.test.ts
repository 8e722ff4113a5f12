import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { assertProblem } from '../auth/auth-support.ts';
import { signInStaff } from '../staff/staff-support.ts';
import { caller } from '../telematics/telematics-support.ts';
import { trace } from './score-support.ts';

// Disputes through a re-cut, on a real database: a trip cut and scored, its events disputed and decided,
// then a position arriving late re-cuts it; the disputes follow their events into the replacement trip.
type Company = Awaited<ReturnType<typeof createCompany>>;
interface EventBody {
  event_reference: string;
  kind: string;
  occurred_at: string;
  dispute: { dispute_reference: string; state: string } | null;
}
interface JourneyBody {
  journey_reference: string;
  is_void: boolean;
  score: number | null;
  events: EventBody[];
}
interface Dispute {
  dispute_reference: string;
  journey_reference: string;
  event_reference: string;
  state: string;
}

const clock = fixedClock('2025-06-10T06:00:00Z');
let t: TestApp;
let acme: Company;
const call = caller(() => t);
const cut = () => t.container.services.telematics.cutPendingTrips(clock.now());

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme Dispute Recut');
});
after(async () => {
  await t.close();
});

async function journeysOf(policy: string): Promise<JourneyBody[]> {
  const r = await call('GET', `/journeys?policy_reference=${policy}`, acme.sandbox);
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ journeys: JourneyBody[] }>().journeys;
}

const dispute = (policy: string, event: string, body: object) =>
  t.app.inject({
    method: 'POST',
    url: `/policys/${policy}/score-events/${event}/disputes`,
    headers: acme.sandbox,
    payload: body,
  });

async function monthScore(policy: string): Promise<number | null> {
  const r = await call('GET', `/policys/${policy}/scores?from=2025-06&to=2025-06`, acme.sandbox);
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ months: Array<{ score: number | null }> }>().months[0]?.score ?? null;
}

describe('disputes through a re-cut', () => {
  test('an accepted and a rejected dispute follow their events into the replacement trip', async () => {
    const startIso = '2025-06-10T07:00:00Z';
    const made = await make.policy(t.app, acme);
    const policy = made.reference;
    await make.device(t.app, acme, policy, { deviceId: 'recut-1' });
    // One fix of the smooth driving before the brakes is held back, to arrive late.
    const fixes = trace(startIso, 2);
    const [late] = fixes.splice(100, 1);
    assert.ok(late !== undefined);
    clock.set('2025-06-10T09:00:00Z');
    const sent = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: 'recut-1',
      positions: fixes,
    });
    assert.equal(sent.statusCode, 202, sent.body);
    await cut();
    const [journey] = await journeysOf(policy);
    const [first, second] = journey?.events ?? [];
    assert.ok(journey !== undefined && first !== undefined && second !== undefined);

    // The first brake's dispute accepted, the second's rejected.
    const olly = await signInStaff(t, 'olly@dispute-recut.example', 'operations');
    const decided: Record<string, string> = {};
    for (const [event, decision] of [
      [first, 'accept'],
      [second, 'reject'],
    ] as const) {
      const opened = await dispute(policy, event.event_reference, { reason: 'gps_error' });
      assert.equal(opened.statusCode, 201, opened.body);
      const reference = opened.json<Dispute>().dispute_reference;
      const r = await t.app.inject({
        method: 'POST',
        url: `/admin/score-disputes/${reference}/decision`,
        headers: olly.headers,
        payload: { decision, reason: 'Checked against the trace' },
      });
      assert.equal(r.statusCode, 200, r.body);
      decided[event.occurred_at] = reference;
    }
    const [rescored] = await journeysOf(policy);
    const before = await monthScore(policy);
    assert.ok(rescored?.score !== null && rescored?.score !== undefined);
    assert.ok(journey.score !== null && rescored.score > journey.score);

    // The held-back fix arrives: the trip is voided and cut again.
    clock.set('2025-06-10T10:00:00Z');
    const lateSent = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: 'recut-1',
      positions: [late],
    });
    assert.equal(lateSent.statusCode, 202, lateSent.body);
    const pass = await cut();
    assert.equal(pass.voided, 1);
    assert.equal(pass.stored, 1);
    const all = await journeysOf(policy);
    const voided = all.find((j) => j.is_void);
    const replacement = all.find((j) => !j.is_void);
    assert.ok(voided !== undefined && replacement !== undefined);
    assert.equal(voided.journey_reference, journey.journey_reference);
    assert.notEqual(replacement.journey_reference, journey.journey_reference);

    // The same events, with new references, carry their disputes: the accepted one stays out of the score.
    const [again1, again2] = replacement.events;
    assert.ok(again1 !== undefined && again2 !== undefined);
    assert.notEqual(again1.event_reference, first.event_reference);
    assert.deepEqual(again1.dispute, { dispute_reference: decided[first.occurred_at], state: 'accepted' });
    assert.deepEqual(again2.dispute, { dispute_reference: decided[second.occurred_at], state: 'rejected' });
    assert.equal(replacement.score, rescored.score);
    assert.equal(await monthScore(policy), before);

    // An event is disputed once: the rejected one cannot be disputed again through its new reference.
    assertProblem(
      await dispute(policy, again2.event_reference, { reason: 'passenger' }),
      409,
      'EVENT_ALREADY_DISPUTED',
    );
    const listed = await call('GET', `/policys/${policy}/score-disputes`, acme.sandbox);
    const disputes = listed.json<{ disputes: Dispute[] }>().disputes;
    assert.equal(disputes.length, 2);
    for (const d of disputes) assert.equal(d.journey_reference, replacement.journey_reference);
    assert.deepEqual(
      disputes.map((d) => d.event_reference).sort(),
      [again1.event_reference, again2.event_reference].sort(),
    );
  });
});
