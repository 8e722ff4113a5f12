import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { capMetres } from '../../products/index.ts';
import { addDays, londonDate, londonMidnight } from '../../../platform/london-calendar.ts';
import { dueAlerts, londonPeriodsOf, yearCountedMetres, type UsageAlertKind } from './usage-alerts.ts';

test('limits become whole metres exactly, rounded down', () => {
  assert.equal(capMetres(150, 'mile'), 241_401); // 241,401.6
  assert.equal(capMetres(1, 'mile'), 1609); // 1,609.344
  assert.equal(capMetres(0.1, 'km'), 100); // 0.1 × 1000 in binary is 100.00000000000001
  assert.equal(capMetres(1.005, 'km'), 1005);
  assert.equal(capMetres('500.5', 'mile'), 805_476); // 805,476.672
  assert.equal(capMetres(10_000, 'mile'), 16_093_440);
});

const none = new Set<UsageAlertKind>();
const limits = { budgetMetres: 1000, dailyCapMetres: 500, annualCapMetres: 10_000 };

test('an alert is due when its sum is strictly over the limit and it was not recorded yet', () => {
  assert.deepEqual(dueAlerts(limits, { dayMetres: 500, monthMetres: 1000, yearMetres: 10_000 }, none), []);
  assert.deepEqual(dueAlerts(limits, { dayMetres: 501, monthMetres: 1001, yearMetres: 10_001 }, none), [
    'budget_exceeded',
    'daily_cap_reached',
    'annual_cap_reached',
  ]);
  assert.deepEqual(
    dueAlerts(
      limits,
      { dayMetres: 501, monthMetres: 1001, yearMetres: 10_001 },
      new Set(['budget_exceeded', 'annual_cap_reached']),
    ),
    ['daily_cap_reached'],
  );
});

test('no limit, no alert; a year not checked, no annual alert', () => {
  const open = { budgetMetres: null, dailyCapMetres: null, annualCapMetres: null };
  assert.deepEqual(dueAlerts(open, { dayMetres: 9e9, monthMetres: 9e9, yearMetres: 9e9 }, none), []);
  assert.deepEqual(dueAlerts(limits, { dayMetres: 0, monthMetres: 0, yearMetres: null }, none), []);
});

test('a year counts each day at most at its cap: days over it give back the excess', () => {
  const caps: Record<string, number | null> = { '2025-06-01': 500, '2025-06-02': null };
  const counted = yearCountedMetres(
    2000,
    [
      { date: '2025-06-01', metres: 800 },
      { date: '2025-06-02', metres: 900 },
    ],
    (date) => caps[date] ?? null,
  );
  assert.equal(counted, 2000 - 300, 'the uncapped day counts in full');
});

test('property: the counted year equals the sum of each day clipped at its cap, from the busy days alone', () => {
  const day = fc.record({
    offset: fc.integer({ min: 0, max: 30 }),
    metres: fc.integer({ min: 0, max: 400_000 }),
  });
  fc.assert(
    fc.property(
      fc.array(day, { maxLength: 60 }),
      fc.array(fc.option(fc.integer({ min: 0, max: 300_000 }), { nil: null }), {
        minLength: 31,
        maxLength: 31,
      }),
      (journeys, capByOffset) => {
        const dateOf = (offset: number) => addDays('2025-06-01', offset);
        const perDay = new Map<string, number>();
        for (const j of journeys)
          perDay.set(dateOf(j.offset), (perDay.get(dateOf(j.offset)) ?? 0) + j.metres);
        const capOn = (date: string) =>
          capByOffset[(Date.parse(date) - Date.parse('2025-06-01')) / 86_400_000] ?? null;
        const total = journeys.reduce((sum, j) => sum + j.metres, 0);
        const caps = capByOffset.filter((c) => c !== null);
        // The database lists only the days over the smallest cap any version has.
        const smallest = caps.length === 0 ? Infinity : Math.min(...caps);
        const busy = [...perDay].filter(([, m]) => m > smallest).map(([date, metres]) => ({ date, metres }));
        let expected = 0;
        for (const [date, metres] of perDay) {
          const cap = capOn(date);
          expected += cap === null ? metres : Math.min(metres, cap);
        }
        assert.equal(yearCountedMetres(total, busy, capOn), expected);
      },
    ),
  );
});

test('property: an alert is never due twice, and due exactly when its sum passes its limit', () => {
  const maybe = fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: null });
  const kinds: UsageAlertKind[] = ['budget_exceeded', 'daily_cap_reached', 'annual_cap_reached'];
  fc.assert(
    fc.property(
      maybe,
      maybe,
      maybe,
      fc.integer({ min: 0, max: 1_000_000 }),
      fc.integer({ min: 0, max: 1_000_000 }),
      maybe,
      fc.subarray(kinds),
      (budget, daily, annual, day, month, year, recorded) => {
        const due = dueAlerts(
          { budgetMetres: budget, dailyCapMetres: daily, annualCapMetres: annual },
          { dayMetres: day, monthMetres: month, yearMetres: year },
          new Set(recorded),
        );
        for (const kind of recorded) assert.ok(!due.includes(kind));
        const over = {
          budget_exceeded: budget !== null && month > budget,
          daily_cap_reached: daily !== null && day > daily,
          annual_cap_reached: annual !== null && year !== null && year > annual,
        };
        for (const kind of kinds) assert.equal(due.includes(kind), over[kind] && !recorded.includes(kind));
      },
    ),
  );
});

test('the London calendar: days and months in local time, across the clock changes', () => {
  assert.equal(londonDate(new Date('2025-06-30T23:30:00Z')), '2025-07-01', 'BST: 00:30 on 1 July');
  assert.equal(londonDate(new Date('2025-12-31T23:30:00Z')), '2025-12-31', 'GMT');
  assert.equal(londonMidnight('2025-07-01').toISOString(), '2025-06-30T23:00:00.000Z');
  assert.equal(
    londonMidnight('2025-03-30').toISOString(),
    '2025-03-30T00:00:00.000Z',
    'clocks go forward at 01:00',
  );
  const june = londonPeriodsOf(new Date('2025-06-15T12:00:00Z'));
  assert.equal(june.month, '2025-06');
  assert.equal(june.monthStartAt.toISOString(), '2025-05-31T23:00:00.000Z');
  assert.equal(june.monthEndAt.toISOString(), '2025-06-30T23:00:00.000Z');
  assert.equal(june.dayEndAt.getTime() - june.dayStartAt.getTime(), 86_400_000);
  const december = londonPeriodsOf(new Date('2025-12-31T23:59:59Z'));
  assert.equal(december.monthEndAt.toISOString(), '2026-01-01T00:00:00.000Z');
  const longDay = londonPeriodsOf(new Date('2025-10-26T12:00:00Z'));
  assert.equal(longDay.dayEndAt.getTime() - longDay.dayStartAt.getTime(), 25 * 3_600_000);
});
