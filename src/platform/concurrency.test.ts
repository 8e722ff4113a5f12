import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import net from 'node:net';
import { createLimiter, eventLoopTurns, forEachConcurrent, mapConcurrent } from './concurrency.ts';

describe('createLimiter', () => {
  test('runs at most `limit` calls at once, the rest in the order they came, failures included', async () => {
    const limit = createLimiter(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const results = await Promise.allSettled(
      Array.from({ length: 7 }, (_, i) =>
        limit(async () => {
          started.push(i);
          running++;
          most = Math.max(most, running);
          await sleep(i % 3);
          running--;
          if (i === 3) throw new Error('three');
          return i;
        }),
      ),
    );
    assert.equal(most, 2);
    assert.deepEqual(started, [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(results[3]?.status, 'rejected');
    assert.deepEqual(
      results.filter((r) => r.status === 'fulfilled').map((r) => r.value),
      [0, 1, 2, 4, 5, 6],
    );
    // Every slot came back: a new call starts at once.
    let ran = false;
    await limit(async () => {
      ran = true;
    });
    assert.ok(ran);
  });
});

describe('mapConcurrent', () => {
  test('keeps the order of the items', async () => {
    assert.deepEqual(
      await mapConcurrent([3, 1, 2], 2, async (n) => {
        await sleep(n);
        return n * 10;
      }),
      [30, 10, 20],
    );
  });
});

describe('forEachConcurrent', () => {
  test('runs every item once, at most `limit` at a time, reading the source only as lanes free up', async () => {
    let read = 0;
    async function* pages() {
      for (let page = 0; page < 3; page++) {
        // Four items a page; the next page is read only once a lane asks past this one.
        read += 4;
        yield* [0, 1, 2, 3].map((i) => page * 4 + i);
      }
    }
    let active = 0;
    let most = 0;
    const done: number[] = [];
    const readWhenStarted: number[] = [];
    await forEachConcurrent(pages(), 2, async (n) => {
      active++;
      most = Math.max(most, active);
      readWhenStarted.push(read);
      await sleep(2);
      done.push(n);
      active--;
    });
    assert.deepEqual(
      done.toSorted((a, b) => a - b),
      Array.from({ length: 12 }, (_, i) => i),
    );
    assert.equal(most, 2);
    assert.deepEqual(readWhenStarted, [4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12]);
  });

  test('finishes at once on an empty source', async () => {
    let calls = 0;
    await forEachConcurrent((async function* () {})(), 4, async () => {
      calls++;
    });
    assert.equal(calls, 0);
  });
});

describe('eventLoopTurns', () => {
  test('a turn lets waiting socket I/O through, which awaiting promises alone never does', async () => {
    const server = net.createServer();
    const accepted = new Promise<net.Socket>((resolve) => {
      server.once('connection', resolve);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const client = net.connect(port, '127.0.0.1');
    try {
      const [peer] = await Promise.all([accepted, new Promise((resolve) => client.once('connect', resolve))]);
      const reply = { read: false };
      client.on('data', () => {
        reply.read = true;
      });
      // Written to the kernel at once: the reply waits in the client's socket, as a query's does while
      // a generator writes rows, and a loop of awaited promises never reads it.
      peer.write('pong');
      for (let i = 0; i < 10_000; i++) await Promise.resolve();
      assert.equal(reply.read, false);
      const turns = eventLoopTurns(0);
      for (let i = 0; i < 3; i++) if (turns.due()) await turns.take();
      assert.equal(reply.read, true);
      peer.destroy();
    } finally {
      client.destroy();
      server.close();
    }
  });

  test('is not due until its interval has passed since the last turn', async () => {
    const turns = eventLoopTurns(60_000);
    assert.equal(turns.due(), false);
    await turns.take();
    assert.equal(turns.due(), false);
    assert.equal(eventLoopTurns(0).due(), true);
  });
});
