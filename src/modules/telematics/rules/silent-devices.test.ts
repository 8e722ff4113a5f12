import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DEVICE_OFFLINE_AFTER_SECONDS,
  MAX_ESTIMATED_DAYS_PER_PASS,
  deviceStatus,
  planSilentDevice,
} from './silent-devices.ts';

const at = (iso: string) => new Date(iso);
const rule = { afterHours: 24, graceDays: 2 };
const base = {
  boundAt: at('2025-06-01T09:00:00Z'),
  lastSeenAt: at('2025-06-02T17:30:00Z'), // Monday 2 June, 18:30 in London
  offlineSince: null,
  estimatedThrough: null,
  rule,
};

describe('deviceStatus', () => {
  test('unbound without an open binding; otherwise as the worker found it', () => {
    assert.equal(deviceStatus(undefined, null), 'unbound');
    assert.equal(deviceStatus(at('2025-06-01T00:00:00Z'), null), 'online');
    assert.equal(deviceStatus(at('2025-06-01T00:00:00Z'), at('2025-06-02T00:00:00Z')), 'offline');
  });
});

describe('planSilentDevice', () => {
  test('offline once silent for after_hours (from the binding when it never reported), online when it reports', () => {
    assert.equal(planSilentDevice({ ...base, now: at('2025-06-03T17:29:59Z') }).transition, null);
    assert.equal(planSilentDevice({ ...base, now: at('2025-06-03T17:30:00Z') }).transition, 'offline');
    assert.equal(
      planSilentDevice({ ...base, lastSeenAt: null, now: at('2025-06-02T08:59:59Z') }).transition,
      null,
    );
    assert.equal(
      planSilentDevice({ ...base, offlineSince: at('2025-06-03T17:30:00Z'), now: at('2025-06-03T18:00:00Z') })
        .transition,
      null,
    );
    assert.equal(
      planSilentDevice({
        ...base,
        offlineSince: at('2025-06-03T17:30:00Z'),
        lastSeenAt: at('2025-06-05T10:00:00Z'),
        now: at('2025-06-05T10:01:00Z'),
      }).transition,
      'online',
    );
    // Without the product rule: the default threshold, and never an estimate.
    const plain = planSilentDevice({
      ...base,
      rule: null,
      now: new Date(base.lastSeenAt.getTime() + DEVICE_OFFLINE_AFTER_SECONDS * 1000 + 86_400_000 * 9),
    });
    assert.deepEqual(plain, { transition: 'offline', estimateDates: [] });
  });

  test('whole London days after the last data and the grace days are estimated once they have ended', () => {
    // Last data Monday; grace Tuesday and Wednesday; Thursday is estimated from Friday's midnight (BST).
    assert.deepEqual(planSilentDevice({ ...base, now: at('2025-06-05T22:59:59Z') }).estimateDates, []);
    assert.deepEqual(planSilentDevice({ ...base, now: at('2025-06-05T23:00:00Z') }).estimateDates, [
      '2025-06-05',
    ]);
    assert.deepEqual(planSilentDevice({ ...base, now: at('2025-06-08T12:00:00Z') }).estimateDates, [
      '2025-06-05',
      '2025-06-06',
      '2025-06-07',
    ]);
    // What was estimated already is not estimated again.
    assert.deepEqual(
      planSilentDevice({ ...base, estimatedThrough: '2025-06-06', now: at('2025-06-08T12:00:00Z') })
        .estimateDates,
      ['2025-06-07'],
    );
    // An estimate of an earlier silence does not hold back this one.
    assert.deepEqual(
      planSilentDevice({ ...base, estimatedThrough: '2025-05-20', now: at('2025-06-06T12:00:00Z') })
        .estimateDates,
      ['2025-06-05'],
    );
    // A long silence is caught up a bounded number of days at a time.
    const long = planSilentDevice({ ...base, now: at('2025-12-01T12:00:00Z') }).estimateDates;
    assert.equal(long.length, MAX_ESTIMATED_DAYS_PER_PASS);
    assert.equal(long[0], '2025-06-05');
  });
});
