import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import pg from 'pg';
import { batchedCalls } from '../../../src/platform/db/batched-calls.ts';
import type { DatabaseHandle } from '../../../src/platform/db/database.ts';
import { createEmptyDatabase, onPostgres } from '../../support/database.ts';

interface Slots {
  slots: { seq: number; key: string; lock_order: string };
  slot_locks: { name: string };
}

let handle: DatabaseHandle<Slots>;

before(async () => {
  handle = await createEmptyDatabase<Slots>();
  await sql`create table slots (seq serial primary key, key text not null unique, lock_order text not null)`.execute(
    handle.db,
  );
  await sql`create table slot_locks (name text primary key)`.execute(handle.db);
  await sql`insert into slot_locks values ('held')`.execute(handle.db);
  // Takes a key once (0), refuses it taken (1), or fails as an insert refusing a value would; locks
  // its lock order's row first when there is one, as store_journey locks its policy's.
  await sql`
    create function take_slot(p_key text, p_lock_order text, p_fail boolean) returns smallint
    language plpgsql as $$
    begin
      perform 1 from slot_locks where name = p_lock_order for update;
      if p_fail then
        raise exception 'refused %', p_key using errcode = 'check_violation';
      end if;
      insert into slots (key, lock_order) values (p_key, p_lock_order) on conflict (key) do nothing;
      return case when found then 0 else 1 end;
    end
    $$`.execute(handle.db);
});

after(async () => {
  await handle.close();
});

/** The handle's statements, each recorded as it is sent. */
function recorded() {
  const statements: string[] = [];
  const send = <Row>(text: string, values: readonly unknown[]) => {
    statements.push(text);
    return handle.prepared<Row>(text, values);
  };
  return { statements, send };
}

async function keys(): Promise<string[]> {
  return (await sql<{ key: string }>`select key from slots order by seq`.execute(handle.db)).rows.map(
    (r) => r.key,
  );
}

test('calls that arrive while one is on its way go together in one statement, each with its own answer', async () => {
  await sql`truncate slots`.execute(handle.db);
  const { statements, send } = recorded();
  const take = batchedCalls(send, { fn: 'take_slot', arity: 3, maxInFlight: 1, maxBatch: 32 });
  const answers = await Promise.all([
    take(['a', 'm', false], 'm'),
    take(['b', 'z', false], 'z'),
    take(['c', 'c', false], 'c'),
    // The same key as the call before it in the statement: decided after it, and seeing its row.
    take(['c', 'd', false], 'd'),
    take(['a', 'b', false], 'b'),
  ]);
  // The first left alone at once; the other four waited for it and went in one statement.
  assert.equal(statements.length, 2);
  assert.match(
    statements[1]!,
    /^select take_slot\(\$1, \$2, \$3\) as c0, take_slot\(\$4, \$5, \$6\) as c1, /,
  );
  assert.deepEqual(answers, [0, 0, 0, 1, 1]);
  // The batch ran in its calls' lock order (b, c, d, z), not their arrival order.
  assert.deepEqual(await keys(), ['a', 'c', 'b']);
  const order = await sql<{ lock_order: string }>`select lock_order from slots order by seq`.execute(
    handle.db,
  );
  assert.deepEqual(
    order.rows.map((r) => r.lock_order),
    ['m', 'c', 'z'],
  );
});

test('a call that fails fails alone: the others of its statement are sent again and stored once', async () => {
  await sql`truncate slots`.execute(handle.db);
  const { statements, send } = recorded();
  const take = batchedCalls(send, { fn: 'take_slot', arity: 3, maxInFlight: 1, maxBatch: 32 });
  const first = take(['first', '1', false], '1');
  const results = await Promise.allSettled([
    take(['x', '2', false], '2'),
    take(['bad', '3', true], '3'),
    take(['y', '4', false], '4'),
  ]);
  assert.equal(await first, 0);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  assert.match(String((results[1] as PromiseRejectedResult).reason), /refused bad/);
  assert.deepEqual(
    results.filter((r) => r.status === 'fulfilled').map((r) => r.value),
    [0, 0],
  );
  // The failed statement committed nothing; the retries stored each row once.
  assert.deepEqual((await keys()).sort(), ['first', 'x', 'y']);
  assert.equal(statements.length, 1 + 1 + 3);
});

test('no more than maxBatch calls go in one statement, and a quiet service sends each call at once', async () => {
  await sql`truncate slots`.execute(handle.db);
  const { statements, send } = recorded();
  const take = batchedCalls(send, { fn: 'take_slot', arity: 3, maxInFlight: 1, maxBatch: 2 });
  assert.deepEqual(
    await Promise.all(['p', 'q', 'r', 's', 't'].map((key) => take([key, key, false], key))),
    [0, 0, 0, 0, 0],
  );
  // One alone, then the four waiting two at a time.
  assert.deepEqual(
    statements.map((s) => s.split(' as c').length - 1),
    [1, 2, 2],
  );
  statements.length = 0;
  assert.equal(await take(['u', 'u', false], 'u'), 0);
  assert.equal(await take(['v', 'v', false], 'v'), 0);
  assert.equal(statements.length, 2);
  assert.throws(() => take(['w'], 'w'), /takes 3 arguments/);
});

test(
  'a row held by other work holds up only its own call: the statement gives up its wait and its calls go one by one',
  {
    skip:
      !onPostgres && 'PostgreSQL only: the embedded database has one session, so no lock is ever waited for',
  },
  async () => {
    await sql`truncate slots`.execute(handle.db);
    const { statements, send } = recorded();
    const take = batchedCalls(send, { fn: 'take_slot', arity: 3, maxInFlight: 1, maxBatch: 32 });
    // A billing chunk's transaction, say, holding one row for longer than a statement should wait (on
    // a connection of its own: the handle's pool has two).
    const billing = new pg.Client({ connectionString: handle.connectionString });
    await billing.connect();
    await billing.query('begin');
    await billing.query(`select 1 from slot_locks where name = 'held' for update`);
    const first = take(['first', 'a', false], 'a');
    const [free1, held, free2] = [
      take(['free-1', 'b', false], 'b'),
      take(['waits', 'held', false], 'held'),
      take(['free-2', 'c', false], 'c'),
    ];
    let heldAnswered = false;
    void held.then(() => (heldAnswered = true));
    try {
      // The two free calls answer while the row is still held; the held one only after.
      const free = await Promise.race([
        Promise.all([first, free1, free2]),
        sleep(10_000).then(() => 'the free calls waited for the held row'),
      ]);
      assert.deepEqual(free, [0, 0, 0]);
      assert.equal(heldAnswered, false);
      assert.deepEqual((await keys()).sort(), ['first', 'free-1', 'free-2']);
    } finally {
      await billing.query('commit');
      await billing.end();
    }
    assert.equal(await held, 0);
    assert.match(statements[1]!, /set_config\('lock_timeout', '50ms', true\)/);
    // One alone, the three together (given up), then each of the three alone.
    assert.equal(statements.length, 1 + 1 + 3);
  },
);
