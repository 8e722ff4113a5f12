import { Decimal } from '../../../platform/money.ts';
import {
  adjustmentAmountPence,
  cancellationAmountPence,
  inCoolingOff,
  remainingShare,
} from '../../payments/rules/index.ts';
import { postcodeDistrict as districtOf } from '../../../platform/postcodes.ts';
import { splitPremium, totalSplit, type Percent, type PremiumSplit } from './premium-split.ts';

/*
 * The money of one bordereau row (issue 21): what a policy version of the month adds to the premium
 * the underwriter is told about. Pure: the repository reads the version, the terms before it and its
 * statement; this turns them into pence, each amount rounded once, half to even.
 */

export type BordereauVersionType = 'nb' | 'mta' | 'cn' | 'rn' | 'ls' | 'st';

/** The version the row is about, with what its rules need of the terms before it. */
export interface BordereauSource {
  readonly versionType: BordereauVersionType;
  readonly effectiveAt: Date;
  /** The version's own `pricing.upfront_premium` (null for an `st` version, which has no terms). */
  readonly upfrontPence: number | null;
  /** The version's own `pricing.mta_fee`. */
  readonly mtaFeePence: number;
  /**
   * An `nb` version's installments paid at binding (`policies.prepaid_installments`, 0 for any other
   * version), each of `installmentPence` (its `pricing.subscription_premium`), with the `depositFeePence`
   * (its `pricing.deposit_fee`) paid beside them.
   */
  readonly prepaid: {
    readonly installments: number;
    readonly installmentPence: number;
    readonly depositFeePence: number;
  };
  /** The rates of the terms in force: the version's own, or for `st` those before it. */
  readonly iptRate: Percent;
  readonly commissionRate: Percent;
  /** The latest earlier version of the same term (for `mta` and `cn`); null when there is none. */
  readonly previous: {
    readonly upfrontPence: number;
    readonly termStartSeconds: number;
    readonly termEndSeconds: number;
    readonly cancelFeePence: number;
    readonly adminFeePence: number;
  } | null;
  /**
   * A `cn` version's cooling-off facts: when its term was concluded and when the cancellation was
   * written; null for any other version (and for a cancellation of a term with no record of either).
   */
  readonly cancellation: { readonly concludedAt: Date; readonly notifiedAt: Date } | null;
  /** The statement of an `st` version. */
  readonly statement: {
    readonly subscriptionPence: number;
    readonly usagePence: number;
    readonly capCreditPence: number;
    readonly annualCapCreditPence: number;
    readonly freeDistanceCreditPence: number;
    readonly minimumTopUpPence: number;
    /** Price by score: positive charged, negative credited. */
    readonly scoreAdjustmentPence: number;
    readonly creditsUsedPence: number;
  } | null;
}

export interface BordereauAmounts extends PremiumSplit {
  readonly upfrontPence: number;
  readonly subscriptionPence: number;
  readonly usagePence: number;
  /**
   * Caps and free distance less the minimum top-up and the score adjustment: what the product rules took
   * off the usage (negative when they added to it).
   */
  readonly capsCreditPence: number;
  /** Paid from the policy's credit ledger: shown, not deducted (the premium was still earned). */
  readonly creditsUsedPence: number;
  /** Not premium: not split, not in the gross. */
  readonly feesPence: number;
}

const ZERO: BordereauAmounts = {
  upfrontPence: 0,
  subscriptionPence: 0,
  usagePence: 0,
  capsCreditPence: 0,
  creditsUsedPence: 0,
  grossPence: 0,
  iptPence: 0,
  commissionPence: 0,
  netPence: 0,
  feesPence: 0,
};

/** Totals start here: every money column at 0. */
export const ZERO_AMOUNTS = ZERO;

/** The share of the previous version's term still to run at the version's effective time. */
function shareOf(source: BordereauSource, previous: NonNullable<BordereauSource['previous']>): Decimal {
  return remainingShare(
    { startSeconds: previous.termStartSeconds, endSeconds: previous.termEndSeconds },
    Math.floor(source.effectiveAt.getTime() / 1000),
  );
}

/** The premium lines of a version before the split (upfront, statement lines, fees). */
function lines(source: BordereauSource): Omit<BordereauAmounts, keyof PremiumSplit> {
  const none = { ...ZERO };
  const own = source.upfrontPence ?? 0;
  switch (source.versionType) {
    case 'nb': {
      // NOTE: the installments paid at binding are never billed by a statement (statement-amounts
      // skips them), so the new business row carries them, as the written premium collected at
      // inception; the deposit paid with them is a fee, not premium. Without them the row is the
      // upfront premium alone, as for a policy bound without a card payment or for another amount.
      const { installments, installmentPence, depositFeePence } = source.prepaid;
      if (installments <= 0) return { ...none, upfrontPence: own };
      return {
        ...none,
        upfrontPence: own,
        subscriptionPence: installments * installmentPence,
        feesPence: depositFeePence,
      };
    }
    case 'rn':
      return { ...none, upfrontPence: own };
    case 'mta': {
      // NOTE: a missing previous version (never written by the service) counts as no change of premium.
      const previous = source.previous;
      const upfrontPence =
        previous === null
          ? 0
          : adjustmentAmountPence({
              oldUpfrontPence: previous.upfrontPence,
              newUpfrontPence: own,
              mtaFeePence: 0,
              share: shareOf(source, previous),
            });
      return { ...none, upfrontPence, feesPence: source.mtaFeePence };
    }
    case 'cn': {
      const previous = source.previous;
      if (previous === null) return none;
      // The return premium: the cancellation amount without fees and without the cap at what was paid
      // (the bordereau reports premium, not cash), negative because it is given back.
      const returned = cancellationAmountPence({
        upfrontPence: previous.upfrontPence,
        cancelFeePence: 0,
        adminFeePence: 0,
        share: shareOf(source, previous),
        refundablePence: Number.MAX_SAFE_INTEGER,
        coolingOff: false,
      });
      // NOTE: a cancellation in the cooling-off period keeps no fee (ICOBS 7.2.1R), as the refund paid.
      const coolingOff =
        source.cancellation !== null &&
        inCoolingOff(
          {
            concludedAt: source.cancellation.concludedAt,
            startAt: new Date(previous.termStartSeconds * 1000),
          },
          source.cancellation.notifiedAt,
        );
      return {
        ...none,
        upfrontPence: returned === 0 ? 0 : -returned,
        feesPence: coolingOff ? 0 : previous.cancelFeePence + previous.adminFeePence,
      };
    }
    case 'ls':
      return none;
    case 'st': {
      const s = source.statement;
      if (s === null) return none;
      return {
        ...none,
        subscriptionPence: s.subscriptionPence,
        usagePence: s.usagePence,
        capsCreditPence:
          s.capCreditPence +
          s.annualCapCreditPence +
          s.freeDistanceCreditPence -
          s.minimumTopUpPence -
          s.scoreAdjustmentPence,
        creditsUsedPence: s.creditsUsedPence,
      };
    }
  }
}

/**
 * A row's money in pence: gross = upfront + subscription (an `st` row's installments billed, an `nb`
 * row's paid at binding) + usage − caps credit, split into IPT, commission and net (which add up to the
 * gross exactly); fees beside it.
 */
export function bordereauAmounts(source: BordereauSource): BordereauAmounts {
  const line = lines(source);
  const grossPence = line.upfrontPence + line.subscriptionPence + line.usagePence - line.capsCreditPence;
  return { ...line, ...splitPremium(grossPence, source.iptRate, source.commissionRate) };
}

/** The totals row after one more row: plain sums of the rows' rounded amounts, so it reconciles. */
export function addAmounts(total: BordereauAmounts, row: BordereauAmounts): BordereauAmounts {
  return {
    upfrontPence: total.upfrontPence + row.upfrontPence,
    subscriptionPence: total.subscriptionPence + row.subscriptionPence,
    usagePence: total.usagePence + row.usagePence,
    capsCreditPence: total.capsCreditPence + row.capsCreditPence,
    creditsUsedPence: total.creditsUsedPence + row.creditsUsedPence,
    feesPence: total.feesPence + row.feesPence,
    ...totalSplit([total, row]),
  };
}

/** The money columns, each summed by the totals row. */
export const AMOUNT_KEYS: ReadonlyArray<keyof BordereauAmounts> = [
  'upfrontPence',
  'subscriptionPence',
  'usagePence',
  'capsCreditPence',
  'creditsUsedPence',
  'grossPence',
  'iptPence',
  'commissionPence',
  'netPence',
  'feesPence',
];

/**
 * addAmounts in place, for a stream of a million rows (no object a row): the same sums of rounded
 * amounts.
 */
export function addAmountsInto(total: Record<keyof BordereauAmounts, number>, row: BordereauAmounts): void {
  for (const key of AMOUNT_KEYS) total[key] += row[key];
}

/** The postcode district (outward code) of a postcode as stored, or null without one: a person's district, not their address. */
export function postcodeDistrict(postcode: string | null): string | null {
  if (postcode === null) return null;
  const district = districtOf(postcode);
  return district === '' ? null : district;
}

/** The month `YYYY-MM` after `month`. */
export function nextMonth(month: string): string {
  const [year, mm] = month.split('-').map(Number);
  const y = year ?? 1970;
  const m = mm ?? 1;
  return m === 12 ? `${String(y + 1)}-01` : `${String(y)}-${String(m + 1).padStart(2, '0')}`;
}
