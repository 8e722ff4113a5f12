import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, type TestApp } from '../../support/app.ts';
import {
  assertProblem,
  backdateRotation,
  startAuthApp,
  type createAuthClient,
  type DoneBody,
} from './auth-support.ts';

// The service's wall clock is stepped here as NTP or an operator would step a host's; the reuse grace
// of a spent refresh token must not move with it.
const START = '2025-06-01T12:00:00Z';
const clock = fixedClock(START);
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let client: ReturnType<typeof createAuthClient>;
let close: () => Promise<void>;

before(async () => {
  ({ t, client, close } = await startAuthApp(clock));
  acme = await createCompany(t.app, 'Acme');
});
after(() => close());

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

test('a spent refresh token presented 17 s after its rotation, the wall clock stepped back meanwhile, is refused and ends its family', async () => {
  clock.set(START);
  const { tokens } = await client.loggedIn(acme.sandbox);
  // Rotated while the wall clock ran a day ahead…
  clock.advance(DAY_MS);
  const rotated = await client.token(acme.sandbox, {
    type: 'REFRESH_TOKEN',
    refresh_token: tokens.refresh_token,
  });
  assert.equal(rotated.statusCode, 200, rotated.body);
  const pair = rotated.json<DoneBody>();
  // …and presented again 17 s later, by then an hour behind: past the 10 s grace on any steady clock.
  clock.set(new Date(Date.parse(START) - HOUR_MS + 17_000));
  await backdateRotation(t, tokens.refresh_token, 17_000);
  const replayed = await client.token(acme.sandbox, {
    type: 'REFRESH_TOKEN',
    refresh_token: tokens.refresh_token,
  });
  assertProblem(replayed, 401, 'INVALID_TOKEN');
  // The whole login ended: the pair it was rotated into opens nothing either.
  assertProblem(
    await client.token(acme.sandbox, { type: 'REFRESH_TOKEN', refresh_token: pair.refresh_token }),
    401,
    'INVALID_TOKEN',
  );
  // Its access token too, read at a time it would be valid (issued a day ahead, for 15 minutes).
  clock.set(new Date(Date.parse(START) + DAY_MS + 60_000));
  assertProblem(
    await client.get('/policys/details', { authorization: `Bearer ${pair.access_token}` }),
    401,
    'INVALID_TOKEN',
  );
});

test('within the grace the same pair comes back, however far the wall clock stepped', async () => {
  clock.set(START);
  const { tokens } = await client.loggedIn(acme.sandbox);
  clock.advance(-HOUR_MS);
  const first = await client.token(acme.sandbox, {
    type: 'REFRESH_TOKEN',
    refresh_token: tokens.refresh_token,
  });
  assert.equal(first.statusCode, 200, first.body);
  // A parallel request of the same client, answered after the wall clock jumped a day ahead.
  clock.advance(DAY_MS);
  await backdateRotation(t, tokens.refresh_token, 2_000);
  const again = await client.token(acme.sandbox, {
    type: 'REFRESH_TOKEN',
    refresh_token: tokens.refresh_token,
  });
  assert.equal(again.statusCode, 200, again.body);
  assert.equal(again.json<DoneBody>().refresh_token, first.json<DoneBody>().refresh_token, 'the same pair');
  // And the family lives on.
  const next = await client.token(acme.sandbox, {
    type: 'REFRESH_TOKEN',
    refresh_token: first.json<DoneBody>().refresh_token,
  });
  assert.equal(next.statusCode, 200, next.body);
});
