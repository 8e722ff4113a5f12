import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../../src/config.ts';
import { asTenant } from '../../../src/modules/companies/index.ts';
import { pageEvents } from '../../../src/modules/data-protection/subject-access-trail-repository.ts';
import { listEventPartitions } from '../../../src/modules/webhooks/index.ts';
import {
  claimDueDeliveries,
  listDeliveries,
} from '../../../src/modules/webhooks/webhook-delivery-repository.ts';
import { claimPendingEvents } from '../../../src/modules/webhooks/webhook-event-repository.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { recordEvent } from '../../../src/platform/events.ts';
import type { Executor } from '../../../src/schema.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { partitionsRead, statementsOf } from '../../support/query-plans.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;

async function companyId(t: TestApp, company: Company): Promise<string> {
  const row = await t.container.database.db
    .selectFrom('companies')
    .select('id')
    .where('company_reference', '=', company.company_reference)
    .executeTakeFirstOrThrow();
  return row.id;
}

/** An endpoint that takes every event type (nothing listens: these tests never attempt a delivery). */
async function register(t: TestApp, company: Company): Promise<string> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/webhooks',
    headers: company.sandbox,
    payload: { url: 'http://127.0.0.1:9/hook' },
  });
  assert.equal(response.statusCode, 201, response.body);
  return response.json<{ id: string }>().id;
}

async function record(t: TestApp, id: string, at: string, data: object = {}): Promise<string> {
  return t.container.database.db
    .transaction()
    .execute((trx) =>
      recordEvent(trx, { companyId: id, environment: 'sandbox' }, 'policy.updated', data, new Date(at)),
    );
}

const setStatus = (t: TestApp, eventIds: readonly string[], status: 'pending' | 'succeeded' | 'failed') =>
  t.container.database.db
    .updateTable('webhook_deliveries')
    .set({ status })
    .where('event_id', 'in', eventIds)
    .execute();

const count = async (t: TestApp, table: string, where = sql`true`): Promise<number> =>
  Number(
    (
      await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where ${where}`.execute(
        t.container.database.db,
      )
    ).rows[0]?.n,
  );

const ours = async (t: TestApp, from: string) =>
  (await listEventPartitions(t.container.database.db)).filter((n) => n >= from);

test('EVENT_RETENTION_DAYS: default 400, validated', () => {
  assert.equal(loadConfig({}).eventRetentionDays, 400);
  assert.equal(loadConfig({ EVENT_RETENTION_DAYS: '90' }).eventRetentionDays, 90);
  assert.throws(() => loadConfig({ EVENT_RETENTION_DAYS: '0' }), /EVENT_RETENTION_DAYS/);
  assert.throws(() => loadConfig({ EVENT_RETENTION_DAYS: 'a year' }), /EVENT_RETENTION_DAYS/);
});

test('months are created ahead (moving DEFAULT rows in); a month past retention goes only once every event of it is sent', async () => {
  // Far from the months the migration made, so 2031's start out missing and events land in DEFAULT.
  const clock = fixedClock('2031-03-10T12:00:00Z');
  const t = await createTestApp({ overrides: { clock } });
  try {
    const company = await createCompany(t.app, 'Retention');
    const tenant = await companyId(t, company);
    const webhook = await register(t, company);
    const marchSent = await record(t, tenant, '2031-03-05T08:00:00Z');
    const marchRetrying = await record(t, tenant, '2031-03-09T23:59:59.999Z');
    const oldFailed = await record(t, tenant, '2029-06-01T00:00:00Z');
    const oldPending = await record(t, tenant, '2029-07-01T00:00:00Z');
    assert.equal(await t.container.services.webhooks.fanOut(), 4);
    assert.equal(await count(t, 'events_default', sql`company_id = ${tenant}`), 4);

    const first = await t.container.services.webhooks.maintainEventPartitions(clock.now());
    assert.deepEqual(first.created, ['events_p2031_03', 'events_p2031_04', 'events_p2031_05']);
    assert.deepEqual(await ours(t, 'events_p2031'), first.created);
    assert.equal(await count(t, 'events_p2031_03'), 2, 'March rows moved out of DEFAULT into March');
    assert.equal(await count(t, 'events_default', sql`company_id = ${tenant}`), 2);
    // The deliveries still find their events, now in March's partition.
    const listed = await t.app.inject({
      method: 'GET',
      url: `/webhooks/${webhook}/deliveries`,
      headers: company.sandbox,
    });
    assert.equal(listed.statusCode, 200, listed.body);
    assert.equal(listed.json<{ deliveries: unknown[] }>().deliveries.length, 4);
    // Idempotent.
    const again = await t.container.services.webhooks.maintainEventPartitions(clock.now());
    assert.deepEqual([again.created, again.dropped, again.kept, again.deletedDefaultRows], [[], [], [], 0]);

    await setStatus(t, [marchSent], 'succeeded');
    await setStatus(t, [oldFailed], 'failed');
    // 400 days after March 2031 ended (2032-05-06), March is past retention; April is not (2032-06-05).
    const later = new Date('2032-05-10T00:00:00Z');
    const blocked = await t.container.services.webhooks.maintainEventPartitions(later);
    assert.deepEqual(blocked.kept, ['events_p2031_03'], 'a delivery of a March event is still retrying');
    assert.deepEqual(blocked.dropped, []);
    assert.equal(blocked.deletedDefaultRows, 1, 'the 2029 event whose delivery failed');
    assert.equal(await count(t, 'events', sql`id = ${oldFailed}`), 0);
    assert.equal(await count(t, 'events', sql`id = ${oldPending}`), 1, 'its delivery is pending');
    assert.equal(await count(t, 'webhook_deliveries', sql`event_id = ${oldFailed}`), 0);

    await setStatus(t, [marchRetrying], 'succeeded');
    await setStatus(t, [oldPending], 'failed');
    const dropped = await t.container.services.webhooks.maintainEventPartitions(later);
    assert.deepEqual([dropped.dropped, dropped.kept], [['events_p2031_03'], []]);
    assert.equal(dropped.deletedDefaultRows, 1);
    const left = await ours(t, 'events_p2031');
    assert.ok(left.includes('events_p2031_04') && !left.includes('events_p2031_03'), left.join());
    assert.equal(
      await count(t, 'webhook_deliveries', sql`event_id in (${marchSent}, ${marchRetrying}, ${oldPending})`),
      0,
      'the finished deliveries go with their events',
    );

    // An event not yet fanned out keeps its month too, and so does the delivery made of it.
    const april = await record(t, tenant, '2031-04-02T00:00:00Z');
    const afterApril = new Date('2032-06-10T00:00:00Z');
    const queued = await t.container.services.webhooks.maintainEventPartitions(afterApril);
    assert.deepEqual(queued.kept, ['events_p2031_04']);
    assert.equal(await t.container.services.webhooks.fanOut(), 1);
    assert.deepEqual((await t.container.services.webhooks.maintainEventPartitions(afterApril)).kept, [
      'events_p2031_04',
    ]);
    await setStatus(t, [april], 'succeeded');
    assert.deepEqual((await t.container.services.webhooks.maintainEventPartitions(afterApril)).dropped, [
      'events_p2031_04',
    ]);
  } finally {
    await t.close();
  }
});

/** The statements about events that `work` sends. */
const statementsOfEvents = (t: TestApp, work: (db: Executor) => Promise<unknown>) =>
  statementsOf(t.container.database as never, work, /\bevents\b/);

test('the hot reads of events read only the months they name', async () => {
  const clock = fixedClock('2034-02-15T12:00:00Z');
  const t = await createTestApp({ overrides: { clock } });
  try {
    const db = t.container.database.db;
    await t.container.services.webhooks.maintainEventPartitions(clock.now());
    await t.container.services.webhooks.maintainEventPartitions(new Date('2034-01-15T00:00:00Z'));
    // Realistic months: 20,000 events each in January to March 2034, of a tenant without endpoints
    // (nothing queued), and a few February events of a tenant with one.
    const bulk = await createCompany(t.app, 'Bulk');
    const bulkId = await companyId(t, bulk);
    await sql`
      insert into events (company_id, environment, type, data, created_at)
      select ${bulkId}, 'sandbox', 'journey.created', jsonb_build_object('n', g),
        timestamptz '2034-01-01T00:00:00Z' + make_interval(months => g % 3, secs => g * 100)
      from generate_series(1, 60000) as g`.execute(db);
    const company = await createCompany(t.app, 'Hooked');
    const tenant = await companyId(t, company);
    const webhook = await register(t, company);
    for (const day of ['03', '04', '05'])
      await record(t, tenant, `2034-02-${day}T10:00:00Z`, { policy_reference: `POL-${day}` });
    await sql`analyze events`.execute(db);
    assert.deepEqual(
      (await listEventPartitions(db)).filter((n) => n.startsWith('events_p2034')),
      ['events_p2034_01', 'events_p2034_02', 'events_p2034_03', 'events_p2034_04'],
    );

    // The fan-out's read of queued events.
    const [pending] = await statementsOfEvents(t, (trx) => claimPendingEvents(trx, 200));
    assert.ok(pending !== undefined);
    assert.deepEqual(await partitionsRead(db as never, pending, 'events'), ['events_p2034_02']);

    // The dispatcher's read of the claimed deliveries' events.
    assert.equal(await t.container.services.webhooks.fanOut(), 3);
    const claimed = await statementsOfEvents(t, (trx) =>
      claimDueDeliveries(trx, {
        now: clock.now(),
        leaseUntil: new Date(clock.now().getTime() + 60_000),
        leaseId: '00000000-0000-4000-8000-000000000001',
        limit: 16,
        perEndpoint: 4,
      }),
    );
    const eventsRead = claimed.find((q) => /from "events"/.test(q.sql));
    assert.ok(eventsRead !== undefined, claimed.map((q) => q.sql).join('\n'));
    assert.deepEqual(await partitionsRead(db as never, eventsRead, 'events'), ['events_p2034_02']);

    // An endpoint's delivery log carries each event's type: it reads no events at all.
    const log = await statementsOfEvents(t, (trx) =>
      listDeliveries(trx, asTenant(tenant, 'sandbox'), webhook, { limit: 50 }),
    );
    assert.deepEqual(log, []);
  } finally {
    await t.close();
  }
});

test("a subject access export reads only the months since the person's account began", async () => {
  const clock = fixedClock('2034-02-15T12:00:00Z');
  const t = await createTestApp({ overrides: { clock } });
  try {
    await t.container.services.webhooks.maintainEventPartitions(new Date('2034-01-15T00:00:00Z'));
    const company = await createCompany(t.app, 'Export');
    const tenant = await companyId(t, company);
    const subject = {
      userId: '00000000-0000-4000-8000-0000000000a1',
      userReference: 'usr_subject',
      companyId: tenant,
      companyReference: company.company_reference,
      companyName: 'Export',
      environment: 'sandbox',
      email: 'subject@example.com',
      since: new Date('2034-02-01T09:00:00Z'),
    };
    const [read] = await statementsOfEvents(t, (trx) => pageEvents(trx, subject, ['POL-1'], undefined));
    assert.ok(read !== undefined);
    assert.ok(
      !(await partitionsRead(t.container.database.db as never, read, 'events')).includes('events_p2034_01'),
    );
  } finally {
    await t.close();
  }
});
