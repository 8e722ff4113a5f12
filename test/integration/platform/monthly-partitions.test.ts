import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../../../src/platform/db/database.ts';
import { maintainMonthlyPartitions } from '../../../src/platform/db/monthly-partitions.ts';
import { createTestDatabase, onPostgres } from '../../support/database.ts';

// A write that arrives while maintenance attaches a new month must land in that month, not fail: the
// hourly housekeeping creates months while the service takes writes.
test(
  'a row written while its month is being created lands in that month',
  { skip: !onPostgres && 'PostgreSQL only: the embedded database takes one session at a time' },
  async () => {
    const template = await createTestDatabase();
    const url = template.connectionString!;
    const database = await openDatabase<Record<string, never>>({ connectionString: url });
    const writer = new pg.Client({ connectionString: url });
    await writer.connect();
    const writerPid = (await writer.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    try {
      await sql`create table readings (id int, taken_at timestamptz not null) partition by range (taken_at)`.execute(
        database.db,
      );
      await sql`create table readings_default partition of readings default`.execute(database.db);
      let write: Promise<unknown> | undefined;
      const created = await maintainMonthlyPartitions(
        database.db,
        {
          table: 'readings',
          column: 'taken_at',
          lockKey: 18_240_999,
          // Between two months of one maintenance transaction, March already attached: a March row
          // arrives from another session, and maintenance goes on once that write waits for a lock.
          async afterCreate(trx, partition) {
            if (partition !== 'readings_p2031_04') return;
            write = writer.query(`insert into readings values (1, '2031-03-20T10:00:00Z')`);
            write.catch(() => undefined);
            const observer = sql<{ waiting: boolean }>`
              select exists (
                select 1 from pg_stat_activity where pid = ${writerPid} and wait_event_type = 'Lock'
              ) as waiting`;
            for (let tries = 0; tries < 100 && !(await observer.execute(trx)).rows[0]?.waiting; tries++)
              await sleep(20);
          },
        },
        new Date('2031-03-10T12:00:00Z'),
        undefined,
      );
      assert.deepEqual(created.created, ['readings_p2031_03', 'readings_p2031_04', 'readings_p2031_05']);
      assert.ok(write !== undefined);
      await write; // without the table's lock: "new row for relation readings_default violates partition constraint"
      const landed = await sql<{ partition: string }>`
        select tableoid::regclass::text as partition from readings where id = 1`.execute(database.db);
      assert.deepEqual(landed.rows, [{ partition: 'readings_p2031_03' }]);
    } finally {
      await writer.end();
      await database.close();
      await template.close();
    }
  },
);
