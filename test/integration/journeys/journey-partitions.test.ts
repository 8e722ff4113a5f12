import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql, type CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import { asTenant } from '../../../src/modules/companies/index.ts';
import { maintainJourneyPartitions } from '../../../src/modules/journeys/index.ts';
import { listJourneys } from '../../../src/modules/journeys/journey-repository.ts';
import { billJourneys } from '../../../src/modules/statements/statement-repository.ts';
import { migrations } from '../../../src/migrations/index.ts';
import type { DatabaseHandle } from '../../../src/platform/db/database.ts';
import { migrateToLatest } from '../../../src/platform/db/migrate.ts';
import type { Database, Executor } from '../../../src/schema.ts';
import { auditAsStaff, createEmptyDatabase, createTestDatabase } from '../../support/database.ts';
import { partitionsRead, statementsOf } from '../../support/query-plans.ts';

/**
 * Journeys partitioned by month of their start (migration 0035): an existing database keeps every
 * row through the migration, and the reads that users wait for touch only the months they ask for.
 */

const BEFORE_PARTITIONS = Object.fromEntries(
  Object.entries(migrations).filter(([name]) => name < '0035-journey-partitions'),
);

/** The rows of journeys, every column, in one comparable form. */
async function journeyRows(db: Kysely<Database>): Promise<string[]> {
  const result = await sql<{
    row: string;
  }>`select to_jsonb(j)::text as row from journeys j order by id`.execute(db);
  return result.rows.map((r) => r.row);
}

/** A journey row as the service stores one (journeys have no foreign keys: no policy is needed). */
async function insertJourney(
  db: Kysely<Database>,
  row: { id: string; policyId: string; startAt: Date; n: number; isVoid?: boolean },
): Promise<void> {
  const { id, policyId, startAt, n } = row;
  const isVoid = row.isVoid === true;
  await sql`
    insert into journeys (id, company_id, environment, policy_id, policy_reference, policy_version_id,
      provider_reference, route, route_precision, point_count, start_at, end_at, distance_metres,
      distance_unit, usage_rate, usage_premium_pence, start_lat, start_lng, end_lat, end_lng, created_at,
      source, is_void, voided_at)
    values (${id}, ${randomUUID()}, 'sandbox', ${policyId}, 'POL-1', ${randomUUID()}, ${`trip-${String(n)}`},
      '_p~iF~ps|U_ulLnnqC', 5, 2, ${startAt}, ${new Date(startAt.getTime() + 1_200_000)}, ${12_000 + n},
      'mile', 0.045, ${34 + n}, 51.5, -0.12, 51.51, -0.11, ${startAt}, 'api', ${isVoid},
      ${isVoid ? startAt : null})`.execute(db);
}

async function partitionOf(db: Kysely<Database>, id: string): Promise<string | undefined> {
  const result = await sql<{ name: string }>`
    select tableoid::regclass::text as name from journeys where id = ${id}`.execute(db);
  return result.rows[0]?.name;
}

describe('migration 0035: journeys partitioned by month, every row kept', () => {
  let database: DatabaseHandle<Database>;
  before(async () => {
    database = await createEmptyDatabase();
  });
  after(() => database.close());

  test('journeys of past months, this month and a far future one: the same rows after, each in its month', async () => {
    const db = database.db;
    await migrateToLatest(db as never, BEFORE_PARTITIONS);
    const now = new Date();
    const thisMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 3, 8));
    const starts = [
      new Date('2025-06-30T22:59:59Z'),
      new Date('2025-07-01T00:00:00Z'),
      new Date('2025-12-31T23:30:00Z'),
      thisMonth,
      new Date('2031-01-15T08:00:00Z'),
    ];
    const policyId = randomUUID();
    const ids = starts.map(() => randomUUID());
    for (const [i, startAt] of starts.entries())
      await insertJourney(db, { id: ids[i] ?? '', policyId, startAt, n: i, isVoid: i === 2 });
    const before = await journeyRows(db);

    assert.deepEqual(await migrateToLatest(db as never, migrations), [
      ...Object.keys(migrations).filter((name) => name >= '0035-journey-partitions'),
    ]);
    assert.deepEqual(await journeyRows(db), before);
    // Migration 0066 gives each its keys: a client's reference stays taken though void; a void one is not live.
    const keys = await sql<{ journey_id: string; provider_reference: string | null; live: boolean }>`
      select journey_id, provider_reference, live from journey_keys where policy_id = ${policyId}
      order by provider_reference`.execute(db);
    assert.deepEqual(
      keys.rows,
      starts.map((_, i) => ({ journey_id: ids[i], provider_reference: `trip-${String(i)}`, live: i !== 2 })),
    );
    assert.equal(await partitionOf(db, ids[0] ?? ''), 'journeys_p2025_06');
    assert.equal(await partitionOf(db, ids[1] ?? ''), 'journeys_p2025_07');
    assert.equal(await partitionOf(db, ids[2] ?? ''), 'journeys_p2025_12');
    const month = `${String(now.getUTCFullYear())}_${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
    assert.equal(await partitionOf(db, ids[3] ?? ''), `journeys_p${month}`);
    assert.equal(await partitionOf(db, ids[4] ?? ''), 'journeys_default');
    // Every month from the first journey's to two ahead exists, each with the journeys' storage settings.
    const partitions = await sql<{ name: string; options: string[] | null }>`
      select c.relname as name, c.reloptions as options from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'journeys'::regclass order by 1`.execute(db);
    const monthsFromJune2025 =
      (now.getUTCFullYear() - 2025) * 12 + now.getUTCMonth() - 5 + 3; /* to two months ahead */
    assert.equal(partitions.rows.length, monthsFromJune2025 + 1);
    for (const { name, options } of partitions.rows)
      assert.ok(options?.includes('autovacuum_vacuum_insert_threshold=50000'), `${name}: ${String(options)}`);

    // The audit trail names the table, not the month's partition the row went to.
    const audited = randomUUID();
    await db.transaction().execute(async (trx) => {
      await auditAsStaff(trx, {
        at: '2025-07-01T12:00:00Z',
        requestId: 'req-journeys',
        action: 'test.journey',
      });
      await insertJourney(trx, { id: audited, policyId, startAt: new Date('2025-07-01T12:00:00Z'), n: 9 });
    });
    const audit = await sql<{ table_name: string; row_key: string }>`
      select table_name, row_key from audit_records where request_id = 'req-journeys'`.execute(db);
    assert.deepEqual(audit.rows, [{ table_name: 'journeys', row_key: audited }]);
  });
});

describe('journeys’ hot reads prune to their months', () => {
  let database: DatabaseHandle<Database>;
  before(async () => {
    database = await createTestDatabase();
    // Months of a past year, as a database that has run for a while holds them.
    for (let month = 1; month <= 12; month++) {
      const from = `2025-${String(month).padStart(2, '0')}-01T00:00:00Z`;
      const to =
        month === 12 ? '2026-01-01T00:00:00Z' : `2025-${String(month + 1).padStart(2, '0')}-01T00:00:00Z`;
      await sql`${sql.raw(`create table journeys_p2025_${String(month).padStart(2, '0')} partition of journeys
        for values from ('${from}') to ('${to}')`)}`.execute(database.db);
    }
  });
  after(() => database.close());

  /** The partitions of journeys a statement reads, this test's own SQL or one the service sent. */
  const monthsRead = (query: CompiledQuery | RawBuilder<unknown>) =>
    partitionsRead(database.db as never, 'sql' in query ? query : query.compile(database.db), 'journeys');
  /** The statements about journeys that `work` sends. */
  const journeyStatements = (work: (db: Executor) => Promise<unknown>) =>
    statementsOf(database as never, work, /\bjourneys\b/);

  const policyId = randomUUID();

  test('a statement’s sums (statements/statement-repository.ts billJourneys): its period’s months only, decided per policy at run time', async () => {
    const sent = await journeyStatements((trx) =>
      billJourneys(trx, [
        {
          statementId: randomUUID(),
          policyId,
          afterAt: new Date('2025-06-14T23:00:00Z'),
          endAt: new Date('2025-07-14T22:59:59Z'),
        },
      ]),
    );
    const sums = sent.find((q) => q.sql.includes('cross join lateral'));
    assert.ok(sums !== undefined, sent.map((q) => q.sql).join('\n'));
    assert.deepEqual(await monthsRead(sums), ['journeys_p2025_06', 'journeys_p2025_07']);
  });

  test('a page of a policy’s journeys between two dates (journeys/journey-repository.ts listJourneys)', async () => {
    const [page] = await journeyStatements((trx) =>
      listJourneys(trx, asTenant(randomUUID(), 'sandbox'), {
        policyIds: [policyId],
        fromAt: new Date('2025-03-10T00:00:00Z'),
        toAt: new Date('2025-04-09T23:59:59Z'),
        limit: 50,
      }),
    );
    assert.ok(page !== undefined);
    assert.deepEqual(await monthsRead(page), ['journeys_p2025_03', 'journeys_p2025_04']);
  });

  test('a probe of a policy’s journeys by start: the months of its span only', async () => {
    const read = await monthsRead(sql`
      select 1 from journeys
      where policy_id = ${policyId} and start_at >= ${new Date('2025-09-30T23:50:00Z')}
        and start_at < ${new Date('2025-10-01T00:20:00Z')} and not is_void and end_at > start_at`);
    assert.deepEqual(read, ['journeys_p2025_09', 'journeys_p2025_10']);
  });

  test('a usage period’s sum (usage/usage-repository.ts journeySum): its months, not the default', async () => {
    const read = await monthsRead(sql`
      select coalesce(sum(distance_metres), 0)::bigint from journeys
      where policy_id = ${policyId} and not is_void
        and start_at >= ${new Date('2025-02-01T00:00:00Z')} and start_at < ${new Date('2025-05-01T00:00:00Z')}`);
    assert.deepEqual(read, ['journeys_p2025_02', 'journeys_p2025_03', 'journeys_p2025_04']);
  });

  test('the worker creates the months ahead with the journeys’ storage settings, moving a month’s journeys out of DEFAULT; idempotent', async () => {
    const db = database.db;
    const early = randomUUID();
    await insertJourney(db, { id: early, policyId, startAt: new Date('2031-04-02T07:00:00Z'), n: 1 });
    assert.equal(await partitionOf(db, early), 'journeys_default');
    const first = await maintainJourneyPartitions(db, new Date('2031-03-10T12:00:00Z'));
    assert.deepEqual(first.created, ['journeys_p2031_03', 'journeys_p2031_04', 'journeys_p2031_05']);
    assert.deepEqual(first.dropped, []);
    assert.equal(await partitionOf(db, early), 'journeys_p2031_04');
    const options = await sql<{ options: string[] | null }>`
      select reloptions as options from pg_class where relname = 'journeys_p2031_05'`.execute(db);
    assert.deepEqual(options.rows[0]?.options, [
      'fillfactor=100',
      'autovacuum_vacuum_insert_threshold=50000',
      'autovacuum_vacuum_insert_scale_factor=0',
    ]);
    const again = await maintainJourneyPartitions(db, new Date('2031-03-10T13:00:00Z'));
    assert.deepEqual(again.created, []);
    // Years later nothing is dropped: journeys are kept whole.
    const later = await maintainJourneyPartitions(db, new Date('2038-01-01T00:00:00Z'));
    assert.deepEqual(later.dropped, []);
    assert.equal(await partitionOf(db, early), 'journeys_p2031_04');
  });
});
