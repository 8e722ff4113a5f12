/**
 * Price by driving score: a month's usage premium adjusted by the band its driving score falls in, in integer
 * pence. Pure: amounts, scores and the rule come in as values.
 *
 * A product's `score_pricing` rule lists bands (`min_score`, `adjustment_percent`, at most two decimals) and a
 * `cap_percent`: a month's score takes the band with the highest `min_score` at or below it (none: no
 * adjustment), its percentage capped to ±`cap_percent`. The adjustment is `usage × percent / 100`, exact, and
 * rounded once, half to even. Each statement brings a month's adjustment up to date: it charges (or credits)
 * the month's target on all its usage billed so far less what earlier statements adjusted for it, so a month
 * is never adjusted twice, and a score that changes after billing (a dispute accepted) moves the next
 * statement by the difference. A month that is not over, or has a pending dispute, is not adjusted until it
 * is over and decided.
 */

export interface ScoreBand {
  readonly min_score: number;
  /** Percent of the usage premium, negative for a discount; at most two decimals. */
  readonly adjustment_percent: number;
}

/** A product version's `score_pricing` rule. */
export interface ScorePricingRule {
  readonly bands: readonly ScoreBand[];
  /** The largest adjustment either way, percent. */
  readonly cap_percent: number;
}

/** Hundredths of a percent: a percentage of at most two decimals as an exact integer. */
const basisPoints = (percent: number): number => Math.round(percent * 100);

/** The percentage a month's score is adjusted by, in basis points (hundredths of a percent), capped. */
export function bandBasisPoints(score: number | null, rule: ScorePricingRule): number {
  if (score === null) return 0;
  let chosen: ScoreBand | undefined;
  for (const band of rule.bands)
    if (band.min_score <= score && (chosen === undefined || band.min_score > chosen.min_score)) chosen = band;
  if (chosen === undefined) return 0;
  const cap = Math.abs(basisPoints(rule.cap_percent));
  const points = Math.max(-cap, Math.min(cap, basisPoints(chosen.adjustment_percent)));
  // Never −0: a capped-to-zero discount is no adjustment, and −0 would show as "-0" in a line.
  return points === 0 ? 0 : points;
}

/** `usagePence × basisPoints / 10,000`, rounded once, half to even; integer pence in and out. */
export function adjustmentPence(usagePence: number, points: number): number {
  const product = BigInt(usagePence) * BigInt(points);
  const negative = product < 0n;
  const magnitude = negative ? -product : product;
  let quotient = magnitude / 10_000n;
  const twice = (magnitude % 10_000n) * 2n;
  if (twice > 10_000n || (twice === 10_000n && quotient % 2n === 1n)) quotient += 1n;
  const pence = Number(quotient);
  return negative && pence !== 0 ? -pence : pence;
}

/** One month as a statement finds it. */
export interface MonthToAdjust {
  /** The month's usage premium billed so far, this statement's included, less the product rules' credits. */
  readonly billedUsagePence: number;
  /** Its driving score now (null: no score that prices it). */
  readonly score: number | null;
  /** A dispute of one of its events is pending. */
  readonly disputed: boolean;
  /** The month is not over yet: its score may still move. */
  readonly provisional: boolean;
  /** What earlier statements adjusted it by. */
  readonly adjustedPence: number;
}

/**
 * What this statement adjusts a month by (positive charges, negative credits): its target less what was
 * adjusted already; `deferred` while the month is not over or a dispute of it is pending (nothing now, the
 * whole difference later).
 */
export function monthAdjustment(
  month: MonthToAdjust,
  rule: ScorePricingRule,
):
  | { readonly deferred: true }
  | { readonly deferred: false; readonly duePence: number; readonly basisPoints: number } {
  if (month.disputed || month.provisional) return { deferred: true };
  const points = bandBasisPoints(month.score, rule);
  const target = adjustmentPence(month.billedUsagePence, points);
  return { deferred: false, duePence: target - month.adjustedPence, basisPoints: points };
}

/** A month's adjustment due on a statement. */
export interface MonthDue {
  /** `YYYY-MM`. */
  readonly month: string;
  readonly duePence: number;
}

/**
 * The part of each month's due a statement applies, when it would bill `beforePence` (≥ 0) without them:
 * charges whole; credits, oldest month first, only as far as the statement has something to take them off,
 * so it never bills below zero. What a credit does not apply stays due on its month for the next statement.
 * Months with nothing applied are left out; the result sums to at least −(beforePence + the charges).
 */
export function applyDues(
  dues: readonly MonthDue[],
  beforePence: number,
): Array<{ readonly month: string; readonly appliedPence: number }> {
  const ordered = [...dues].sort((a, b) => (a.month < b.month ? -1 : a.month > b.month ? 1 : 0));
  let room = Math.max(beforePence, 0);
  for (const d of ordered) if (d.duePence > 0) room += d.duePence;
  const applied: Array<{ month: string; appliedPence: number }> = [];
  for (const d of ordered) {
    if (d.duePence > 0) applied.push({ month: d.month, appliedPence: d.duePence });
    else if (d.duePence < 0 && room > 0) {
      const credit = Math.min(-d.duePence, room);
      room -= credit;
      applied.push({ month: d.month, appliedPence: -credit });
    }
  }
  return applied.sort((a, b) => (a.month < b.month ? -1 : 1));
}
