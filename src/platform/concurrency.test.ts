import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLimiter, forEachConcurrent, mapConcurrent } from './concurrency.ts';

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
