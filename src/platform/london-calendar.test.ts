import assert from 'node:assert/strict';
import { test } from 'node:test';
import { datesFromTo } from './london-calendar.ts';

test('datesFromTo: every date of the range, both ends included, across months and leap days', () => {
  assert.deepEqual(datesFromTo('2028-02-28', '2028-03-01'), ['2028-02-28', '2028-02-29', '2028-03-01']);
  assert.deepEqual(datesFromTo('2026-12-31', '2026-12-31'), ['2026-12-31']);
  assert.deepEqual(datesFromTo('2026-04-02', '2026-04-01'), []);
});

test('datesFromTo: a range to 9999-12-31 ends there (the day after has no YYYY-MM-DD form)', () => {
  assert.deepEqual(datesFromTo('9999-12-30', '9999-12-31'), ['9999-12-30', '9999-12-31']);
  // A range past it cannot be named, and does not loop.
  assert.deepEqual(datesFromTo('9999-12-31', '99999-01-01'), ['9999-12-31']);
});
