import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { OWN_WRITE_SHADOW_MS } from '../../../src/modules/policies/policy-row-cache.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { CHANGE_FEED_APPLICATION_NAME } from '../../../src/platform/db/change-feed.ts';
import { createCompany, type TestApp } from '../../support/app.ts';
import { onPostgres } from '../../support/database.ts';
import { startAuthApp, type createAuthClient } from './auth-support.ts';

// Policy reads are served from memory and dropped on PostgreSQL's notifications (migration 0010). Rows
// are changed here with SQL, as another process would change them: nothing in this process knows.
const clock = fixedClock('2025-06-01T12:00:00Z');
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let client: ReturnType<typeof createAuthClient>;
let close: () => Promise<void>;

before(async () => {
  ({ t, client, close } = await startAuthApp(clock));
  acme = await createCompany(t.app, 'Acme');
});
after(() => close());

async function readers() {
  const { holder, tokens } = await client.loggedIn(acme.sandbox);
  // This process just wrote the policy: its reads go to the database for a moment (read-your-writes).
  await sleep(OWN_WRITE_SHADOW_MS + 50);
  const status = async () => {
    const details = await client.get('/policys/details', { authorization: `Bearer ${tokens.access_token}` });
    const byReference = await client.get(`/policys/${holder.policyReference}`, acme.sandbox);
    assert.equal(details.statusCode, 200, details.body);
    assert.equal(byReference.statusCode, 200, byReference.body);
    return [details.json<{ status: string }>().status, byReference.json<{ status: string }>().status];
  };
  return { holder, status };
}

/** Changes the policy row without firing its triggers: no notification, as if it were lost. */
const silently = (reference: string, status: string) =>
  t.container.database.db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx);
    await sql`update policies set status = ${status} where policy_reference = ${reference}`.execute(trx);
  });

/** Reads until `expected` (the notification arrives a moment after the commit); fails after ~2 s. */
async function eventually(read: () => Promise<string[]>, expected: string[]): Promise<void> {
  let seen: string[] = [];
  for (let attempt = 0; attempt < 100; attempt++) {
    seen = await read();
    if (seen.every((s, i) => s === expected[i])) return;
    await sleep(20);
  }
  assert.deepEqual(seen, expected);
}

describe('policy reads from memory', () => {
  test('are served without the database until the row changes, then follow the change', async () => {
    const { holder, status } = await readers();
    await eventually(status, ['active', 'active']);
    await silently(holder.policyReference, 'cancelled');
    assert.deepEqual(await status(), ['active', 'active'], 'both reads came from memory');
    // Any statement that touches the row notifies: both reads drop what they held.
    await sql`update policies set updated_at = updated_at where policy_reference = ${holder.policyReference}`.execute(
      t.container.database.db,
    );
    await eventually(status, ['cancelled', 'cancelled']);
  });

  test(
    'are dropped when the listening connection is lost, and kept again once it is back',
    { skip: onPostgres ? false : 'PostgreSQL only: PGlite has no connection to lose' },
    async () => {
      const { holder, status } = await readers();
      await eventually(status, ['active', 'active']);
      await sql`
        select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and application_name = ${CHANGE_FEED_APPLICATION_NAME}`.execute(
        t.container.database.db,
      );
      const live = () => t.container.changes.live;
      for (let i = 0; i < 100 && live(); i++) await sleep(10);
      assert.equal(live(), false);
      // Changed while nobody listened: only starting again from nothing can catch it.
      await silently(holder.policyReference, 'cancelled');
      for (let i = 0; i < 300 && !live(); i++) await sleep(10);
      assert.equal(live(), true, 'listening again');
      assert.deepEqual(await status(), ['cancelled', 'cancelled']);
    },
  );
});
