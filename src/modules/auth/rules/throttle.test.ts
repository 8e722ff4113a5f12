import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ACCOUNT_THROTTLE, ADDRESS_THROTTLE, addressBlock, delayAfter, secondsBlocked } from './throttle.ts';

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

test('an address is counted by what one client holds: IPv4 whole, IPv6 by its /64', () => {
  assert.equal(addressBlock('198.51.100.7'), '198.51.100.7');
  // Every spelling of one IPv6 /64 is one block; the next /64 is another.
  assert.equal(addressBlock('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  assert.equal(addressBlock('2001:0DB8:0001:0002:ffff:ffff:ffff:fffe'), '2001:db8:1:2::/64');
  assert.equal(addressBlock('[2001:db8:1:2:0:0:0:9]'), '2001:db8:1:2::/64');
  assert.equal(addressBlock('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.notEqual(addressBlock('2001:db8:1:3::1'), addressBlock('2001:db8:1:2::1'));
  assert.equal(addressBlock('::1'), '0:0:0:0::/64');
  // An IPv4 client seen through a dual-stack socket is the IPv4 address.
  assert.equal(addressBlock('::ffff:198.51.100.7'), '198.51.100.7');
  assert.equal(addressBlock('::FFFF:c633:6407'), '198.51.100.7');
  // Anything else (a test's made-up address) is counted as it is.
  assert.equal(addressBlock('not:an:address'), 'not:an:address');
});
