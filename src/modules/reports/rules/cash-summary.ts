/*
 * The cash report's pure part: which London days a request covers, how each payment counts, and the
 * per-day summary (billed, charged, refunded, collected, pending, outstanding, in dunning). Amounts are
 * integer pence; sums of integers are exact, so the totals equal the sums of the rows to the penny.
 */
import { datesFromTo, londonDate } from '../../../platform/london-calendar.ts';

/** At most a leap year of days in one report: longer spans are asked for in parts. */
export const MAX_CASH_REPORT_DAYS = 366;

export type CashRange =
  | { readonly ok: true; readonly fromOn: string; readonly toOn: string; readonly days: number }
  | {
      readonly ok: false;
      readonly reason: 'FROM_NOT_A_DATE' | 'TO_NOT_A_DATE' | 'TO_BEFORE_FROM' | 'SPAN_TOO_LONG';
    };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for `YYYY-MM-DD` naming a day that exists (not 2025-02-30). */
export function isCalendarDate(text: string): boolean {
  const match = DATE.exec(text);
  if (match === null) return false;
  const [, y, m, d] = match.map(Number);
  if (y === undefined || m === undefined || d === undefined || y < 1) return false;
  const at = new Date(Date.UTC(y, m - 1, d));
  return at.getUTCFullYear() === y && at.getUTCMonth() === m - 1 && at.getUTCDate() === d;
}

const dayNumber = (on: string): number => Date.parse(`${on}T00:00:00Z`) / 86_400_000;

/** The London calendar days `fromOn` to `toOn`, both included, checked: real dates, in order, a bounded span. */
export function cashRange(fromOn: string, toOn: string, maxDays = MAX_CASH_REPORT_DAYS): CashRange {
  if (!isCalendarDate(fromOn)) return { ok: false, reason: 'FROM_NOT_A_DATE' };
  if (!isCalendarDate(toOn)) return { ok: false, reason: 'TO_NOT_A_DATE' };
  const days = dayNumber(toOn) - dayNumber(fromOn) + 1;
  if (days < 1) return { ok: false, reason: 'TO_BEFORE_FROM' };
  if (days > maxDays) return { ok: false, reason: 'SPAN_TOO_LONG' };
  return { ok: true, fromOn, toOn, days };
}

/** The London day of an ISO instant (london-calendar.ts memoises each UTC hour's date). */
export function londonDayOf(isoInstant: string): string {
  return londonDate(new Date(isoInstant));
}

export type CashKind = 'charge' | 'refund';
export type CashStatus =
  | 'pending'
  | 'succeeded'
  | 'failed'
  | 'refunded'
  | 'requires_action'
  | 'canceled'
  | 'scheduled'
  | 'processing';

/** What the summary needs of one payment, as it stands when the report is made. */
export interface CashFacts {
  /**
   * The London day the payment counts on: the day it was asked for (created), except a Direct Debit
   * collection that settled, which counts on the day its money arrived.
   */
  readonly day: string;
  readonly kind: CashKind;
  readonly status: CashStatus;
  readonly amountPence: number;
  readonly hasNextAttempt: boolean;
}

/**
 * A charge that failed (or waits for the cardholder) and has another attempt scheduled: dunning will
 * try it again. A failed charge without one waits for a new card or for staff.
 */
export function isInDunning(p: Pick<CashFacts, 'kind' | 'status' | 'hasNextAttempt'>): boolean {
  return p.kind === 'charge' && (p.status === 'failed' || p.status === 'requires_action') && p.hasNextAttempt;
}

/** How a payment counts: at most one of the buckets below, by kind and status. */
export type CashBucket = 'charged' | 'pending' | 'outstanding' | 'refunded' | 'refund_outstanding' | 'none';

export function bucketOf(p: Pick<CashFacts, 'kind' | 'status'>): CashBucket {
  if (p.kind === 'charge') {
    switch (p.status) {
      // NOTE: a charge refunded in full becomes `refunded`; its money was collected all the same,
      // and the refund is its own row (counted as refunded), so it still counts as charged.
      case 'succeeded':
      case 'refunded':
        return 'charged';
      // NOTE: a Direct Debit announced or submitted is not cash until the bank pays it (Bacs: about
      // three working days after submission); it may still be returned unpaid.
      case 'pending':
      case 'scheduled':
      case 'processing':
        return 'pending';
      case 'failed':
      case 'requires_action':
        return 'outstanding';
      case 'canceled':
        return 'none';
    }
  }
  switch (p.status) {
    case 'succeeded':
      return 'refunded';
    case 'pending':
    case 'scheduled':
    case 'processing':
    case 'failed':
    case 'requires_action':
      return 'refund_outstanding';
    case 'refunded':
    case 'canceled':
      return 'none';
  }
}

/** One day's (or the whole range's) summary, in pence. */
export interface CashTotals {
  readonly chargeCount: number;
  readonly refundCount: number;
  /** Charges asked for: charged + pending + outstanding (a cancelled charge moved no money and is left out). */
  readonly billedPence: number;
  /** Charges the processor collected (succeeded, or since refunded). */
  readonly chargedPence: number;
  /** Refunds paid back. */
  readonly refundedPence: number;
  /** charged − refunded: the net cash. May be negative on a day of refunds. */
  readonly collectedPence: number;
  /** Charges whose outcome is not known yet (an attempt in progress). */
  readonly pendingPence: number;
  /** Failed charges not yet collected… */
  readonly outstandingPence: number;
  /** …of which dunning will try again. */
  readonly inDunningPence: number;
  /** Refunds owed but not yet paid back (in progress or failed). */
  readonly refundOutstandingPence: number;
}

export interface CashDay extends CashTotals {
  readonly day: string;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const zero = (): Mutable<CashTotals> => ({
  chargeCount: 0,
  refundCount: 0,
  billedPence: 0,
  chargedPence: 0,
  refundedPence: 0,
  collectedPence: 0,
  pendingPence: 0,
  outstandingPence: 0,
  inDunningPence: 0,
  refundOutstandingPence: 0,
});

function addTo(into: Mutable<CashTotals>, p: CashFacts): void {
  const bucket = bucketOf(p);
  if (p.kind === 'charge') into.chargeCount += 1;
  else into.refundCount += 1;
  switch (bucket) {
    case 'charged':
      into.chargedPence += p.amountPence;
      into.billedPence += p.amountPence;
      into.collectedPence += p.amountPence;
      break;
    case 'pending':
      into.pendingPence += p.amountPence;
      into.billedPence += p.amountPence;
      break;
    case 'outstanding':
      into.outstandingPence += p.amountPence;
      into.billedPence += p.amountPence;
      if (isInDunning(p)) into.inDunningPence += p.amountPence;
      break;
    case 'refunded':
      into.refundedPence += p.amountPence;
      into.collectedPence -= p.amountPence;
      break;
    case 'refund_outstanding':
      into.refundOutstandingPence += p.amountPence;
      break;
    case 'none':
      break;
  }
}

/**
 * The per-day summary of a range, fed one payment at a time in any order: memory grows with the days
 * (at most MAX_CASH_REPORT_DAYS), never with the payments. Every day of the range is listed, quiet
 * ones with zeros, so that a spreadsheet of days has no gaps.
 */
export function createCashSummary(fromOn: string, toOn: string) {
  const byDay = new Map<string, Mutable<CashDay>>();
  for (const on of datesFromTo(fromOn, toOn)) byDay.set(on, { day: on, ...zero() });
  const totals = zero();
  return {
    /** Adds a payment to its day and the totals; false (and nothing added) for a day outside the range. */
    add(p: CashFacts): boolean {
      const day = byDay.get(p.day);
      if (day === undefined) return false;
      addTo(day, p);
      addTo(totals, p);
      return true;
    },
    days(): CashDay[] {
      return [...byDay.values()].map((d) => ({ ...d }));
    },
    totals(): CashTotals {
      return { ...totals };
    },
  };
}

export type CashSummary = ReturnType<typeof createCashSummary>;
