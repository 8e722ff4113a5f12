import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSettingsCache } from './settings-cache.ts';

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('first reads are shared; an old value is answered while one read refreshes it behind', async () => {
  let reads = 0;
  let value = 'a';
  const load = async () => {
    reads++;
    await tick();
    return value;
  };
  const cache = createSettingsCache<string>({
    capacity: 10,
    ttlMs: 0,
    maxRefreshes: 2,
    onRefreshError: () => {},
  });
  assert.deepEqual(await Promise.all([cache.get('k', load), cache.get('k', load)]), ['a', 'a']);
  assert.equal(reads, 1);
  value = 'b';
  assert.equal(await cache.get('k', load), 'a', 'old, while the refresh runs');
  await tick();
  await tick();
  assert.equal(reads, 2);
  assert.equal(await cache.get('k', load, true), 'b', 'fresh on request');
});

test('a key forgotten during a read does not get the read’s value; a failed refresh keeps the old one', async () => {
  let value = 'old';
  let fail = false;
  const load = async () => {
    const read = value; // as the database had it when the read began
    await tick();
    if (fail) throw new Error('down');
    return read;
  };
  const errors: unknown[] = [];
  const cache = createSettingsCache<string>({
    capacity: 10,
    ttlMs: 60_000,
    maxRefreshes: 2,
    onRefreshError: (e) => errors.push(e),
  });
  const reading = cache.get('k', load);
  cache.delete('k');
  value = 'new';
  assert.equal(await reading, 'old');
  assert.equal(await cache.get('k', load), 'new', 'read again, not the forgotten value');

  const expiring = createSettingsCache<string>({
    capacity: 10,
    ttlMs: 0,
    maxRefreshes: 1,
    onRefreshError: (e) => errors.push(e),
  });
  assert.equal(await expiring.get('k', load), 'new');
  fail = true;
  assert.equal(await expiring.get('k', load), 'new');
  await tick();
  await tick();
  assert.equal(errors.length, 1);
  assert.equal(await expiring.get('k', load), 'new', 'kept; the next caller tries again');
});
