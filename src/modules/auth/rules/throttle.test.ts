import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ACCOUNT_THROTTLE, ADDRESS_THROTTLE, delayAfter, secondsBlocked } from './throttle.ts';

const at = (seconds: number) => new Date(Date.UTC(2025, 5, 1) + seconds * 1000);

test('per account: 5 failures free, then 1 s doubling, capped at 15 minutes', () => {
  const delays = Array.from({ length: 16 }, (_, k) => delayAfter(ACCOUNT_THROTTLE, k + 1));
  assert.deepEqual(delays, [0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900]);
  assert.equal(delayAfter(ACCOUNT_THROTTLE, 10_000), 900, 'no overflow');
});

test('per address: 20 free failures', () => {
  assert.equal(delayAfter(ADDRESS_THROTTLE, 19), 0);
  assert.equal(delayAfter(ADDRESS_THROTTLE, 20), 1);
});

test('a state blocks until its delay is over', () => {
  const state = { failures: 6, lastFailureAt: at(0), blockedUntil: at(2) };
  assert.equal(secondsBlocked(state, at(0)), 2);
  assert.equal(secondsBlocked(state, at(1.5)), 1, 'rounded up: never a Retry-After of 0');
  assert.equal(secondsBlocked(state, at(2)), 0);
  assert.equal(secondsBlocked({ ...state, blockedUntil: null }, at(0)), 0);
  assert.equal(secondsBlocked(undefined, at(0)), 0);
});
