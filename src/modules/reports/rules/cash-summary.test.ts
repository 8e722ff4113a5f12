import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { londonDate } from '../../../platform/london-calendar.ts';
import {
  bucketOf,
  cashRange,
  createCashSummary,
  isCalendarDate,
  isInDunning,
  londonDayOf,
  type CashFacts,
  type CashKind,
  type CashStatus,
  type CashTotals,
} from './cash-summary.ts';

describe('cashRange', () => {
  const cases: Array<[string, string, ReturnType<typeof cashRange>]> = [
    ['2025-07-01', '2025-07-01', { ok: true, fromOn: '2025-07-01', toOn: '2025-07-01', days: 1 }],
    ['2025-01-01', '2025-12-31', { ok: true, fromOn: '2025-01-01', toOn: '2025-12-31', days: 365 }],
    ['2024-01-01', '2024-12-31', { ok: true, fromOn: '2024-01-01', toOn: '2024-12-31', days: 366 }],
    ['2025-01-01', '2026-01-01', { ok: true, fromOn: '2025-01-01', toOn: '2026-01-01', days: 366 }],
    ['2025-01-01', '2026-01-02', { ok: false, reason: 'SPAN_TOO_LONG' }],
    ['2025-07-02', '2025-07-01', { ok: false, reason: 'TO_BEFORE_FROM' }],
    ['2025-02-30', '2025-03-01', { ok: false, reason: 'FROM_NOT_A_DATE' }],
    ['2025-03-01', '2025-13-01', { ok: false, reason: 'TO_NOT_A_DATE' }],
    ['2025-3-1', '2025-03-01', { ok: false, reason: 'FROM_NOT_A_DATE' }],
    // Across the clock change: calendar days, not 24-hour steps.
    ['2025-03-29', '2025-03-31', { ok: true, fromOn: '2025-03-29', toOn: '2025-03-31', days: 3 }],
  ];
  for (const [from, to, expected] of cases)
    test(`${from} … ${to}`, () => {
      assert.deepEqual(cashRange(from, to), expected);
    });

  test('leap days exist only in leap years', () => {
    assert.equal(isCalendarDate('2024-02-29'), true);
    assert.equal(isCalendarDate('2025-02-29'), false);
    assert.equal(isCalendarDate('0000-01-01'), false);
  });
});

describe('bucketOf and isInDunning', () => {
  const table: Array<[CashKind, CashStatus, ReturnType<typeof bucketOf>]> = [
    ['charge', 'succeeded', 'charged'],
    ['charge', 'refunded', 'charged'],
    ['charge', 'pending', 'pending'],
    ['charge', 'failed', 'outstanding'],
    ['charge', 'requires_action', 'outstanding'],
    ['charge', 'canceled', 'none'],
    ['refund', 'succeeded', 'refunded'],
    ['refund', 'pending', 'refund_outstanding'],
    ['refund', 'failed', 'refund_outstanding'],
  ];
  for (const [kind, status, bucket] of table)
    test(`${kind} ${status} → ${bucket}`, () => {
      assert.equal(bucketOf({ kind, status }), bucket);
    });

  test('in dunning: an outstanding charge with a next attempt, nothing else', () => {
    assert.equal(isInDunning({ kind: 'charge', status: 'failed', hasNextAttempt: true }), true);
    assert.equal(isInDunning({ kind: 'charge', status: 'failed', hasNextAttempt: false }), false);
    // A pending charge's next attempt is its lease, not a retry.
    assert.equal(isInDunning({ kind: 'charge', status: 'pending', hasNextAttempt: true }), false);
    assert.equal(isInDunning({ kind: 'refund', status: 'failed', hasNextAttempt: true }), false);
  });
});

describe('createCashSummary', () => {
  test('a day of each kind of payment', () => {
    const summary = createCashSummary('2025-07-01', '2025-07-03');
    const on = (day: string, kind: CashKind, status: CashStatus, amountPence: number, next = false) =>
      summary.add({ day, kind, status, amountPence, hasNextAttempt: next });
    on('2025-07-01', 'charge', 'succeeded', 9550);
    on('2025-07-01', 'charge', 'failed', 1234, true);
    on('2025-07-01', 'charge', 'failed', 500);
    on('2025-07-01', 'charge', 'pending', 100);
    on('2025-07-03', 'refund', 'succeeded', 2000);
    on('2025-07-03', 'charge', 'refunded', 3000);
    assert.equal(on('2025-07-04', 'charge', 'succeeded', 1), false, 'outside the range');
    const [first, quiet, third] = summary.days();
    assert.deepEqual(first, {
      day: '2025-07-01',
      chargeCount: 4,
      refundCount: 0,
      billedPence: 11384,
      chargedPence: 9550,
      refundedPence: 0,
      collectedPence: 9550,
      pendingPence: 100,
      outstandingPence: 1734,
      inDunningPence: 1234,
      refundOutstandingPence: 0,
    });
    assert.equal(quiet?.day, '2025-07-02');
    assert.equal(quiet.chargeCount + quiet.billedPence, 0);
    assert.equal(third?.collectedPence, 1000);
    assert.equal(summary.totals().collectedPence, 10550);
  });

  const facts = fc.record<CashFacts>({
    day: fc.constantFrom('2025-10-25', '2025-10-26', '2025-10-27'),
    kind: fc.constantFrom<CashKind>('charge', 'refund'),
    status: fc.constantFrom<CashStatus>(
      'pending',
      'succeeded',
      'failed',
      'refunded',
      'requires_action',
      'canceled',
    ),
    amountPence: fc.integer({ min: 0, max: 10_000_000 }),
    hasNextAttempt: fc.boolean(),
  });

  test('totals are the sums of the days, and each day balances', () => {
    fc.assert(
      fc.property(fc.array(facts, { maxLength: 60 }), (payments) => {
        const summary = createCashSummary('2025-10-25', '2025-10-27');
        for (const p of payments) summary.add(p);
        const days = summary.days();
        const totals = summary.totals();
        for (const key of Object.keys(totals) as Array<keyof CashTotals>)
          assert.equal(
            days.reduce((sum, d) => sum + d[key], 0),
            totals[key],
            key,
          );
        for (const d of [...days, totals]) {
          assert.equal(d.billedPence, d.chargedPence + d.pendingPence + d.outstandingPence);
          assert.equal(d.collectedPence, d.chargedPence - d.refundedPence);
          assert.ok(d.inDunningPence <= d.outstandingPence);
        }
        assert.equal(totals.chargeCount + totals.refundCount, payments.length);
      }),
    );
  });
});

describe('londonDayOf', () => {
  test('agrees with the London calendar for any instant, across clock changes', () => {
    const cases: Array<[string, string]> = [
      ['2025-06-09T22:59:59.999Z', '2025-06-09'],
      ['2025-06-09T23:00:00.000Z', '2025-06-10'],
      ['2025-03-30T00:59:59.000Z', '2025-03-30'],
      ['2025-10-25T23:30:00.000Z', '2025-10-26'],
      ['2025-10-26T00:30:00.000Z', '2025-10-26'],
      ['2025-12-31T23:59:59.999Z', '2025-12-31'],
    ];
    for (const [at, day] of cases) assert.equal(londonDayOf(at), day, at);
    fc.assert(
      fc.property(
        fc.integer({ min: Date.parse('2020-01-01T00:00:00Z'), max: Date.parse('2030-12-31T00:00:00Z') }),
        (ms) => {
          const at = new Date(ms);
          assert.equal(londonDayOf(at.toISOString()), londonDate(at));
        },
      ),
    );
  });
});
