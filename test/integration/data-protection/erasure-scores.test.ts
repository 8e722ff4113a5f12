import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { trace } from '../scores/score-support.ts';
import { caller } from '../telematics/telematics-support.ts';

// A policyholder's driving scores and their disputes of events under subject access and erasure: the
// export holds the disputes in the person's words; the erasure deletes the events and the disputes of
// them (where and when they drove, what they said) and keeps the trips' scores as numbers of a
// pseudonymised policy.
type Json = Record<string, unknown>;

const clock = fixedClock('2025-06-10T06:00:00Z');
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
const call = caller(() => t);

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme Score Erasure');
});
after(async () => {
  await t.close();
});

const rows = (table: 'score_disputes' | 'trip_score_events' | 'trip_scores', policyId: string) =>
  t.container.database.db.selectFrom(table).select('policy_id').where('policy_id', '=', policyId).execute();

describe('driving scores and disputes under subject access and erasure', () => {
  test('the export holds the disputes; the erasure deletes them with the events and keeps the scores', async () => {
    const made = await make.policy(t.app, acme);
    await make.device(t.app, acme, made.reference, { deviceId: 'erase-score-1' });
    clock.set('2025-06-10T09:00:00Z');
    const sent = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: 'erase-score-1',
      positions: trace('2025-06-10T07:00:00Z', 2),
    });
    assert.equal(sent.statusCode, 202, sent.body);
    await t.container.services.telematics.cutPendingTrips(clock.now());
    const journeys = await call('GET', `/journeys?policy_reference=${made.reference}`, acme.sandbox);
    const [journey] = journeys.json<{ journeys: Array<{ events: Array<{ event_reference: string }> }> }>()
      .journeys;
    const event = journey?.events[0];
    assert.ok(event !== undefined, journeys.body);
    const words = 'My daughter Imogen was driving to her violin lesson';
    const disputed = await call(
      'POST',
      `/policys/${made.reference}/score-events/${event.event_reference}/disputes`,
      acme.sandbox,
      { reason: 'other', details: words },
    );
    assert.equal(disputed.statusCode, 201, disputed.body);
    const { dispute_reference: reference } = disputed.json<{ dispute_reference: string }>();

    const exported = await t.app.inject({
      method: 'GET',
      url: `/admin/policyholders/${made.userReference}/export`,
      headers: t.adminHeaders,
    });
    assert.equal(exported.statusCode, 200, exported.body);
    const doc = exported.json<Json>();
    const disputes = doc['score_disputes'] as Json[];
    assert.deepEqual(
      disputes.map((d) => [d['policy_reference'], d['id'], d['event_id'], d['details'], d['state']]),
      [[made.reference, reference, event.event_reference, words, 'pending']],
    );
    assert.equal((doc['trip_score_events'] as Json[]).length, 2);

    const policyId = (
      await t.container.database.db
        .selectFrom('policies')
        .select('id')
        .where('policy_reference', '=', made.reference)
        .executeTakeFirstOrThrow()
    ).id;
    const erased = await t.app.inject({
      method: 'POST',
      url: `/admin/policyholders/${made.userReference}/erase`,
      headers: t.adminHeaders,
      payload: { reason: 'Asked to be forgotten', force: true },
    });
    assert.equal(erased.statusCode, 200, erased.body);
    assert.deepEqual(await rows('score_disputes', policyId), []);
    assert.deepEqual(await rows('trip_score_events', policyId), []);
    assert.equal((await rows('trip_scores', policyId)).length, 1);
  });
});
