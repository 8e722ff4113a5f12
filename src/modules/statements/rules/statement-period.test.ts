import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  automaticPeriodEnd,
  billingDateIn,
  installmentsDue,
  isBillingDate,
  londonDate,
  londonMidnight,
  nextPeriod,
} from './statement-period.ts';

test('billing days 29–31 fall on the last day of shorter months, leap years included', () => {
  assert.equal(billingDateIn(2025, 2, 31), '2025-02-28');
  assert.equal(billingDateIn(2024, 2, 31), '2024-02-29');
  assert.equal(billingDateIn(2024, 2, 29), '2024-02-29');
  assert.equal(billingDateIn(2025, 2, 29), '2025-02-28');
  assert.equal(billingDateIn(2025, 4, 31), '2025-04-30');
  assert.equal(billingDateIn(2025, 5, 31), '2025-05-31');
  assert.equal(isBillingDate('2025-02-28', 30), true);
  assert.equal(isBillingDate('2025-02-27', 30), false);
  assert.equal(isBillingDate('2024-02-28', 30), false);
});

test('London midnight across both clock changes', () => {
  assert.equal(londonMidnight('2025-01-15').toISOString(), '2025-01-15T00:00:00.000Z');
  assert.equal(londonMidnight('2025-07-15').toISOString(), '2025-07-14T23:00:00.000Z');
  assert.equal(
    londonMidnight('2025-03-30').toISOString(),
    '2025-03-30T00:00:00.000Z',
    'clocks go forward at 01:00 that day',
  );
  assert.equal(londonMidnight('2025-03-31').toISOString(), '2025-03-30T23:00:00.000Z');
  assert.equal(
    londonMidnight('2025-10-26').toISOString(),
    '2025-10-25T23:00:00.000Z',
    'clocks go back at 02:00 that day',
  );
  assert.equal(londonMidnight('2025-10-27').toISOString(), '2025-10-27T00:00:00.000Z');
  assert.equal(automaticPeriodEnd('2025-04-01').toISOString(), '2025-03-31T22:59:59.000Z');
  assert.equal(automaticPeriodEnd('2025-11-01').toISOString(), '2025-10-31T23:59:59.000Z');
});

test('property: londonDate(londonMidnight(d)) = d for every day 2020–2035', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 16 * 366 }), (n) => {
      const d = new Date(Date.UTC(2020, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);
      assert.equal(londonDate(londonMidnight(d)), d);
      assert.notEqual(londonDate(new Date(londonMidnight(d).getTime() - 1000)), d);
    }),
  );
});

test('property: londonDate agrees with the time-zone database at every second, clock changes included', () => {
  const reference = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London' });
  const changes = [Date.parse('2025-03-30T01:00:00Z'), Date.parse('2025-10-26T01:00:00Z')];
  fc.assert(
    fc.property(
      fc.oneof(
        fc.integer({ min: Date.parse('2000-01-01T00:00:00Z'), max: Date.parse('2040-01-01T00:00:00Z') }),
        // Either side of a change, where a memo by the hour would be wrong if the change fell mid-hour.
        fc.constantFrom(...changes).chain((at) => fc.integer({ min: at - 7_200_000, max: at + 7_200_000 })),
      ),
      (ms) => {
        const at = new Date(ms);
        assert.equal(londonDate(at), reference.format(at));
      },
    ),
    { numRuns: 2000 },
  );
});

test('periods are continuous: start = previous end + 1 s; an end not after the previous is refused', () => {
  const policyStart = new Date('2025-06-01T00:00:00Z');
  const first = nextPeriod(null, policyStart, new Date('2025-06-30T22:59:59Z'));
  assert.deepEqual(first, { ok: true, start: policyStart, end: new Date('2025-06-30T22:59:59Z') });
  const second = nextPeriod(new Date('2025-06-30T22:59:59Z'), policyStart, new Date('2025-07-31T22:59:59Z'));
  assert.ok(second.ok && second.start.toISOString() === '2025-06-30T23:00:00.000Z');
  assert.deepEqual(
    nextPeriod(new Date('2025-06-30T22:59:59Z'), policyStart, new Date('2025-06-30T22:00:00Z')),
    { ok: false, reason: 'NOT_AFTER_PREVIOUS' },
  );
});

test('installments fall due on billing days, each in exactly one period, bounded by the count', () => {
  const policyStart = new Date('2025-06-01T00:00:00+01:00');
  const all = installmentsDue({
    policyStart,
    billingDay: 1,
    count: 12,
    periodStart: policyStart,
    periodEnd: new Date('2030-01-01T00:00:00Z'),
  });
  assert.equal(all.length, 12);
  assert.equal(all[0]!.toISOString(), policyStart.toISOString());
  // Split the same span into monthly periods: every installment lands once.
  let counted = 0;
  let start = policyStart;
  for (let m = 0; m < 14; m++) {
    const end = new Date(
      londonMidnight(billingDateIn(2025 + Math.floor((6 + m) / 12), ((6 + m) % 12) + 1, 1)).getTime() - 1000,
    );
    counted += installmentsDue({
      policyStart,
      billingDay: 1,
      count: 12,
      periodStart: start,
      periodEnd: end,
    }).length;
    start = new Date(end.getTime() + 1000);
  }
  assert.equal(counted, 12);
  const mid = installmentsDue({
    policyStart: new Date('2025-06-15T10:00:00Z'),
    billingDay: 31,
    count: 3,
    periodStart: new Date('2025-06-15T10:00:00Z'),
    periodEnd: new Date('2025-12-31T00:00:00Z'),
  });
  assert.deepEqual(
    mid.map((d) => londonDate(d)),
    ['2025-06-30', '2025-07-31', '2025-08-31'],
  );
});
