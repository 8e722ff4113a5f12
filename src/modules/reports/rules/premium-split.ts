import { Decimal } from '../../../platform/money.ts';

/*
 * How a premium transaction's gross divides for the bordereau (issue 21): the premium is
 * IPT-inclusive, so IPT = gross × rate ÷ (100 + rate); the broker's commission is its rate of the
 * premium net of IPT; the underwriter is due the rest. Each amount is rounded once, half to even, and
 * the net is what is left, so the three always add up to the gross to the penny, on every row and
 * therefore on any total of rows. Pure: rates come as the exact decimals the versions hold.
 */

export interface PremiumSplit {
  readonly grossPence: number;
  readonly iptPence: number;
  readonly commissionPence: number;
  /** Due to the underwriter: gross − IPT − commission. */
  readonly netPence: number;
}

/** A percentage as the versions hold it (`12`, `12.5`, `"9.5"`); null or absent counts as 0. */
export type Percent = number | string | null | undefined;

/** A rate as an exact fraction: `units / scale` percent (12.5 → 125 / 10). */
interface ExactRate {
  readonly units: bigint;
  readonly scale: bigint;
}

/** Rates repeat from row to row (a bordereau has a handful): each is parsed once. */
const parsedRates = new Map<string, ExactRate>();

const percent = (rate: Percent): ExactRate => {
  const text = rate === null || rate === undefined ? '0' : String(rate);
  let parsed = parsedRates.get(text);
  if (parsed === undefined) {
    // Decimal reads every form a rate comes in (`1e-7` too); the fraction is then exact integers.
    const value = new Decimal(text);
    if (!value.isFinite() || value.isNegative() || value.greaterThan(100))
      throw new RangeError(`a rate must be a percentage from 0 to 100, not ${String(rate)}`);
    const places = value.decimalPlaces();
    parsed = {
      units: BigInt(value.times(new Decimal(10).pow(places)).toFixed(0)),
      scale: 10n ** BigInt(places),
    };
    if (parsedRates.size > 1_000) parsedRates.clear();
    parsedRates.set(text, parsed);
  }
  return parsed;
};

/** numerator ÷ denominator (both ≥ 0, denominator > 0) rounded once, half to even, exactly. */
function divideHalfEven(numerator: bigint, denominator: bigint): number {
  const quotient = numerator / denominator;
  const twice = 2n * (numerator % denominator);
  const up = twice > denominator || (twice === denominator && quotient % 2n === 1n);
  return Number(up ? quotient + 1n : quotient);
}

/**
 * The split of `grossPence` (negative for a refund or a credit: the split is the mirror of the
 * positive one, so a refund undoes its charge exactly). Integer arithmetic on the exact rates: a
 * bordereau splits a million rows.
 */
export function splitPremium(grossPence: number, iptRate: Percent, commissionRate: Percent): PremiumSplit {
  if (!Number.isSafeInteger(grossPence))
    throw new RangeError(`gross must be whole pence, not ${String(grossPence)}`);
  const ipt = percent(iptRate);
  const commission = percent(commissionRate);
  const magnitude = Math.abs(grossPence);
  // IPT = gross × r ÷ (100 + r), with r = units ÷ scale: gross × units ÷ (100 × scale + units).
  const iptPence = divideHalfEven(BigInt(magnitude) * ipt.units, 100n * ipt.scale + ipt.units);
  const commissionPence = divideHalfEven(
    BigInt(magnitude - iptPence) * commission.units,
    100n * commission.scale,
  );
  const sign = grossPence < 0 ? -1 : 1;
  const signed = (pence: number) => (pence === 0 ? 0 : sign * pence);
  return {
    grossPence,
    iptPence: signed(iptPence),
    commissionPence: signed(commissionPence),
    netPence: signed(magnitude - iptPence - commissionPence),
  };
}

/** The totals row: sums of the rows' rounded amounts (so it reconciles with them to the penny). */
export function totalSplit(rows: Iterable<PremiumSplit>): PremiumSplit {
  let grossPence = 0;
  let iptPence = 0;
  let commissionPence = 0;
  let netPence = 0;
  for (const row of rows) {
    grossPence += row.grossPence;
    iptPence += row.iptPence;
    commissionPence += row.commissionPence;
    netPence += row.netPence;
  }
  return { grossPence, iptPence, commissionPence, netPence };
}
