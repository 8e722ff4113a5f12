import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { newId } from './ids.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('property: ids are version-7 UUIDs carrying their millisecond, ordered by it', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 2 ** 48 - 1 }),
      fc.integer({ min: 1, max: 2 ** 40 }),
      (at, later) => {
        const id = newId(at);
        assert.match(id, UUID_V7);
        assert.equal(Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16), at);
        if (at + later < 2 ** 48) assert.ok(newId(at) < newId(at + later));
      },
    ),
  );
});

test('ids of the same millisecond differ', () => {
  const ids = new Set(Array.from({ length: 10_000 }, () => newId(1_700_000_000_000)));
  assert.equal(ids.size, 10_000);
});
