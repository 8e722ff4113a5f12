import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  DEVICE_OFFLINE_AFTER_SECONDS,
  MAX_ESTIMATED_DAYS_PER_PASS,
  deviceStatus,
  mayEndSilence,
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

describe('mayEndSilence', () => {
  const offlineSince = at('2025-06-03T17:30:00Z');
  test('a batch within the silence it went offline after ends it; one from before that does not', () => {
    const input = { openBoundAt: base.boundAt, afterSeconds: 24 * 3600, now: at('2025-06-05T12:00:00Z') };
    assert.equal(mayEndSilence({ ...input, lastSeenAt: at('2025-06-04T12:00:01Z') }), true);
    assert.equal(mayEndSilence({ ...input, lastSeenAt: at('2025-06-04T12:00:00Z') }), false);
    // Bound again since it went silent: the silence counts from the binding.
    assert.equal(
      mayEndSilence({ ...input, openBoundAt: at('2025-06-05T11:00:00Z'), lastSeenAt: base.lastSeenAt }),
      true,
    );
  });

  test('unknown silence may end; without an open binding it cannot', () => {
    const now = at('2025-06-05T12:00:00Z');
    assert.equal(
      mayEndSilence({ openBoundAt: base.boundAt, lastSeenAt: base.lastSeenAt, afterSeconds: null, now }),
      true,
    );
    assert.equal(mayEndSilence({ openBoundAt: undefined, lastSeenAt: now, afterSeconds: 3600, now }), false);
  });

  test("under the same rule it agrees with the minute's check", () => {
    const instant = fc.integer({ min: 1_700_000_000, max: 1_800_000_000 }).map((s) => new Date(s * 1000));
    fc.assert(
      fc.property(
        instant,
        instant,
        instant,
        fc.integer({ min: 1, max: 720 }),
        (boundAt, lastSeenAt, now, hours) => {
          const check = planSilentDevice({
            boundAt,
            lastSeenAt,
            offlineSince,
            estimatedThrough: null,
            rule: { afterHours: hours, graceDays: 0 },
            now,
          });
          assert.equal(
            mayEndSilence({ openBoundAt: boundAt, lastSeenAt, afterSeconds: hours * 3600, now }),
            check.transition === 'online',
          );
        },
      ),
    );
  });
});
