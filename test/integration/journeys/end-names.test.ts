import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { asTenant } from '../../../src/modules/companies/index.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { encodePolyline } from '../../../src/platform/geo/index.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';

// A journey's ends are named by the offline geocoder: by town, and by the part of the town when both ends
// are in the same one. Clients' journeys and the service's own (device trips) are named alike.

// The example policy's term is 2025-06-01 to 2026-05-31 (London).
const clock = fixedClock('2025-09-15T12:00:00Z');

const ST_PANCRAS: [number, number] = [51.5345, -0.139];
const CAMDEN_TOWN: [number, number] = [51.5406, -0.1433];
const PARLIAMENT: [number, number] = [51.4995, -0.1248];
const OXFORD_CIRCUS: [number, number] = [51.5155, -0.1419];
const OXFORD: [number, number] = [51.752, -1.2577];

let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let policyReference: string;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  policyReference = (await make.policy(t.app, acme, { proposer: { email: 'end-names@example.com' } }))
    .reference;
});
after(async () => {
  await t.close();
});

const route = (from: [number, number], to: [number, number]): string =>
  encodePolyline([from[0], from[1], (from[0] + to[0]) / 2, (from[1] + to[1]) / 2, to[0], to[1]], 5);

/** A 20-minute journey from `from` to `to`. */
const post = (from: [number, number], to: [number, number], startIso: string) =>
  make.journey(t.app, acme, policyReference, startIso, { route: route(from, to), durationSeconds: 1200 });

test('within one town, each end is named by its part of the town, not the town twice', async () => {
  const journey = await post(ST_PANCRAS, PARLIAMENT, '2025-09-01T08:00:00Z');
  assert.deepEqual(
    [journey.start_name, journey.end_name, journey.start_postcode, journey.end_postcode],
    ['St Pancras', 'Westminster', 'NW1 2JA', 'SW1A 0RS'],
  );
});

test('from a town within the town to the town itself: the town’s end by its part of it', async () => {
  // Camden Town is a town of its own, inside London's extent; Parliament is in London itself.
  const journey = await post(CAMDEN_TOWN, PARLIAMENT, '2025-09-01T18:00:00Z');
  assert.deepEqual([journey.start_name, journey.end_name], ['Camden Town', 'Westminster']);
});

test('between towns, each end is named by its town', async () => {
  const journey = await post(ST_PANCRAS, OXFORD, '2025-09-02T08:00:00Z');
  assert.deepEqual([journey.start_name, journey.end_name], ['London', 'Oxford']);
});

test('the service’s own journeys (device trips) are named by the same rule', async () => {
  const policy = await t.container.database.db
    .selectFrom('policies')
    .select(['id', 'company_id'])
    .where('policy_reference', '=', policyReference)
    .executeTakeFirstOrThrow();
  const outcome = await t.container.services.journeys.replace(
    asTenant(policy.company_id, 'sandbox'),
    { id: policy.id, reference: policyReference },
    {
      voids: [],
      store: [
        {
          providerReference: 'trip-end-names-1',
          source: 'device',
          deviceId: null,
          startAt: new Date('2025-09-03T08:00:00Z'),
          endAt: new Date('2025-09-03T08:20:00Z'),
          route: { encoded: route(PARLIAMENT, OXFORD_CIRCUS), precision: 5 },
        },
      ],
    },
  );
  assert.deepEqual(outcome.refused, []);
  assert.deepEqual(
    outcome.stored.map((journey) => [journey.start.name, journey.end.name]),
    [['Westminster', 'Oxford Circus']],
  );
});
