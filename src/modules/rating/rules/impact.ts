import { londonDate } from '../../../platform/london-calendar.ts';
import { poundsText, toPence } from '../../../platform/money.ts';
import { Exact } from './factor-lookup.ts';
import type { QuoteInput, RateBookContent } from './rate-book.ts';
import { deriveValues } from './derived-values.ts';
import { rate, ratePremiums } from './rate.ts';
import { decide } from './underwriting.ts';

/*
 * Impact testing (issue 36, item 6): what a rate book version would do to the policies in force. Each
 * policy's current terms are re-rated on the version, and two things are compared: the fixed premium
 * for the term including IPT (the policy's `base_premium` against the version's) and the rate per unit
 * including IPT (`usage_rate` against the version's). Policies fall in bands by the change of their
 * fixed premium. Everything here is integers (pence, millionths of a pound) and mergeable, so that
 * batches tallied on several threads add up to the same answer as one pass.
 */

/** The bands of change of the fixed premium, in order. */
export const IMPACT_BANDS = [
  'below_minus_10',
  'minus_10_to_minus_5',
  'minus_5_to_0',
  'unchanged',
  '0_to_5',
  '5_to_10',
  'above_10',
] as const;
export type ImpactBand = (typeof IMPACT_BANDS)[number];

/** How many of the largest movers a report keeps. */
export const IMPACT_MOVERS = 20;

/** The pricing a policy's terms hold, as far as impact testing reads it (pounds, as stored). */
export interface StoredPricing {
  readonly base_premium?: number;
  readonly upfront_premium: number;
  readonly subscription_premium: number;
  readonly subscription_installments?: number;
  readonly usage_rate: number;
}

/** A policy's current terms: what it was rated on, and its pricing. */
export type StoredTerms = QuoteInput & { readonly pricing: StoredPricing };

export type PolicyImpact =
  | {
      readonly kind: 'rated';
      readonly currentPence: number;
      readonly newPence: number;
      /** Rates per unit in millionths of a pound (the stored rate has at most six places). */
      readonly currentRateMicros: number;
      readonly newRateMicros: number;
      readonly referred: boolean;
    }
  | { readonly kind: 'declined'; readonly reasons: readonly string[] }
  | { readonly kind: 'unrated'; readonly problems: readonly { path: string; message: string }[] };

const micros = (pounds: number): number => Math.round(pounds * 1_000_000);

/**
 * The fixed premium the terms hold, in pence: `base_premium`, or for terms priced without one what
 * the fixed payments come to (upfront plus each installment).
 */
export function currentFixedPence(pricing: StoredPricing): number {
  if (pricing.base_premium !== undefined) return toPence(pricing.base_premium);
  return (
    toPence(pricing.upfront_premium) +
    toPence(pricing.subscription_premium) * (pricing.subscription_installments ?? 0)
  );
}

/**
 * One policy re-rated on `content`: rated on the London date its current term started (the day its
 * present price was made for), so that the change is the version's alone, not a year of ageing.
 */
export function policyImpact(content: RateBookContent, terms: StoredTerms): PolicyImpact {
  const { pricing, ...rest } = terms;
  const {
    payment: _payment,
    backfill: _backfill,
    ...input
  } = rest as QuoteInput & {
    payment?: unknown;
    backfill?: unknown;
  };
  const onDate = londonDate(new Date(input.policy.start_date * 1000));
  // Derived once: underwriting and rating read the same values.
  const values = deriveValues(input, onDate);
  const decision = decide(content, input, onDate, values);
  if (decision.decision === 'decline')
    return {
      kind: 'declined',
      reasons: decision.reasons.filter((r) => r.outcome === 'decline').map((r) => r.reason),
    };
  // NOTE: only the two amounts compared, not the whole breakdown a quote stores (a million policies
  // would make tens of millions of decimal strings nobody reads); `rate` is asked why only on a miss.
  let premiums = ratePremiums(content, input, values);
  if (premiums === null) {
    const rated = rate(content, input, onDate, values);
    if (!rated.ok) return { kind: 'unrated', problems: rated.problems };
    const { base_premium: basePounds, usage_rate: usageRate } = rated.value.pricing;
    premiums = { basePence: toPence(basePounds), usageRate };
  }
  return {
    kind: 'rated',
    currentPence: currentFixedPence(pricing),
    newPence: premiums.basePence,
    currentRateMicros: micros(pricing.usage_rate),
    newRateMicros: micros(premiums.usageRate),
    referred: decision.decision === 'refer',
  };
}

/**
 * The band of a change from `currentPence` to `newPence`: a change of exactly 5 % or 10 % either way
 * falls in the band nearer zero; from nothing to something is above 10 %. Integer comparisons only.
 */
export function bandOf(currentPence: number, newPence: number): number {
  const change = newPence - currentPence;
  if (change === 0) return 3;
  if (currentPence <= 0) return change > 0 ? 6 : 0;
  const hundredfold = change * 100;
  if (change < 0) return hundredfold < -10 * currentPence ? 0 : hundredfold < -5 * currentPence ? 1 : 2;
  return hundredfold <= 5 * currentPence ? 4 : hundredfold <= 10 * currentPence ? 5 : 6;
}

export interface BandTally {
  policies: number;
  currentPence: number;
  newPence: number;
  currentRateMicros: number;
  newRateMicros: number;
}

export interface Mover {
  readonly policyReference: string;
  readonly currentPence: number;
  readonly newPence: number;
  readonly currentRateMicros: number;
  readonly newRateMicros: number;
}

/** Counts and sums over any number of policies; plain data, so it crosses threads as it is. */
export interface ImpactTally {
  policies: number;
  rated: number;
  referred: number;
  bands: BandTally[];
  declined: number;
  declineReasons: Record<string, number>;
  unrated: number;
  /** By the path of what could not be rated: how many policies, and one message as an example. */
  unratedReasons: Record<string, { count: number; message: string }>;
  movers: Mover[];
}

export function emptyTally(): ImpactTally {
  return {
    policies: 0,
    rated: 0,
    referred: 0,
    bands: IMPACT_BANDS.map(() => ({
      policies: 0,
      currentPence: 0,
      newPence: 0,
      currentRateMicros: 0,
      newRateMicros: 0,
    })),
    declined: 0,
    declineReasons: {},
    unrated: 0,
    unratedReasons: {},
    movers: [],
  };
}

/** Largest change in pounds first (either way); equal changes by policy reference. */
const byMove = (a: Mover, b: Mover): number =>
  Math.abs(b.newPence - b.currentPence) - Math.abs(a.newPence - a.currentPence) ||
  (a.policyReference < b.policyReference ? -1 : a.policyReference > b.policyReference ? 1 : 0);

/** Keeps the largest movers only, in order (a sort of at most twice their number). */
function keepLargest(movers: Mover[]): Mover[] {
  return movers.sort(byMove).slice(0, IMPACT_MOVERS);
}

/** Adds one policy to `tally` (in place). */
export function addToTally(tally: ImpactTally, policyReference: string, impact: PolicyImpact): void {
  tally.policies++;
  if (impact.kind === 'declined') {
    tally.declined++;
    for (const reason of impact.reasons)
      tally.declineReasons[reason] = (tally.declineReasons[reason] ?? 0) + 1;
    return;
  }
  if (impact.kind === 'unrated') {
    tally.unrated++;
    for (const problem of impact.problems) {
      const seen = tally.unratedReasons[problem.path];
      if (seen === undefined) tally.unratedReasons[problem.path] = { count: 1, message: problem.message };
      else seen.count++;
    }
    return;
  }
  tally.rated++;
  if (impact.referred) tally.referred++;
  const band = tally.bands[bandOf(impact.currentPence, impact.newPence)];
  if (band === undefined) return;
  band.policies++;
  band.currentPence += impact.currentPence;
  band.newPence += impact.newPence;
  band.currentRateMicros += impact.currentRateMicros;
  band.newRateMicros += impact.newRateMicros;
  const mover: Mover = {
    policyReference,
    currentPence: impact.currentPence,
    newPence: impact.newPence,
    currentRateMicros: impact.currentRateMicros,
    newRateMicros: impact.newRateMicros,
  };
  const last = tally.movers[IMPACT_MOVERS - 1];
  if (last !== undefined && byMove(mover, last) >= 0) return;
  tally.movers.push(mover);
  if (tally.movers.length > IMPACT_MOVERS * 2) tally.movers = keepLargest(tally.movers);
  else if (tally.movers.length >= IMPACT_MOVERS) tally.movers.sort(byMove);
}

/** `into` with `other` added (in place): the order in which batches are merged never matters. */
export function mergeTally(into: ImpactTally, other: ImpactTally): void {
  into.policies += other.policies;
  into.rated += other.rated;
  into.referred += other.referred;
  into.declined += other.declined;
  into.unrated += other.unrated;
  other.bands.forEach((band, i) => {
    const target = into.bands[i];
    if (target === undefined) return;
    target.policies += band.policies;
    target.currentPence += band.currentPence;
    target.newPence += band.newPence;
    target.currentRateMicros += band.currentRateMicros;
    target.newRateMicros += band.newRateMicros;
  });
  for (const [reason, count] of Object.entries(other.declineReasons))
    into.declineReasons[reason] = (into.declineReasons[reason] ?? 0) + count;
  for (const [path, seen] of Object.entries(other.unratedReasons)) {
    const mine = into.unratedReasons[path];
    if (mine === undefined) into.unratedReasons[path] = { ...seen };
    else mine.count += seen.count;
  }
  into.movers = keepLargest([...into.movers, ...other.movers]);
}

const pounds = (pence: number): number => Number(poundsText(pence));

/** A change as a percentage of `fromPence`, two places half to even; null from nothing. */
function percent(fromPence: number, toPenceValue: number): number | null {
  if (fromPence === 0) return null;
  return new Exact(toPenceValue - fromPence)
    .times(100)
    .dividedBy(fromPence)
    .toDecimalPlaces(2, Exact.ROUND_HALF_EVEN)
    .toNumber();
}

/** The mean of rates summed in millionths of a pound, in pounds to four places (half to even). */
function meanRate(sumMicros: number, count: number): number | null {
  if (count === 0) return null;
  return new Exact(sumMicros)
    .dividedBy(count)
    .dividedBy(1_000_000)
    .toDecimalPlaces(4, Exact.ROUND_HALF_EVEN)
    .toNumber();
}

const rateOf = (rateMicros: number): number => rateMicros / 1_000_000;

/** Sums of pounds and the mean rates per unit, for a band or the whole book. */
function amounts(sums: BandTally) {
  return {
    policies: sums.policies,
    current_premium: pounds(sums.currentPence),
    new_premium: pounds(sums.newPence),
    change: pounds(sums.newPence - sums.currentPence),
    change_percent: percent(sums.currentPence, sums.newPence),
    current_usage_rate_mean: meanRate(sums.currentRateMicros, sums.policies),
    new_usage_rate_mean: meanRate(sums.newRateMicros, sums.policies),
  };
}

/** The report's body (pounds at the edge), from a whole book's tally. */
export function impactReport(tally: ImpactTally) {
  const total: BandTally = {
    policies: 0,
    currentPence: 0,
    newPence: 0,
    currentRateMicros: 0,
    newRateMicros: 0,
  };
  for (const band of tally.bands) {
    total.policies += band.policies;
    total.currentPence += band.currentPence;
    total.newPence += band.newPence;
    total.currentRateMicros += band.currentRateMicros;
    total.newRateMicros += band.newRateMicros;
  }
  const byCount = <T extends { count: number }>(a: T & { key: string }, b: T & { key: string }) =>
    b.count - a.count || (a.key < b.key ? -1 : 1);
  return {
    policies: tally.policies,
    rated: tally.rated,
    referred: tally.referred,
    bands: IMPACT_BANDS.map((band, i) => ({
      band,
      ...amounts(tally.bands[i] ?? total),
    })),
    total: amounts(total),
    declined: {
      policies: tally.declined,
      reasons: Object.entries(tally.declineReasons)
        .map(([key, count]) => ({ key, count }))
        .sort(byCount)
        .map(({ key, count }) => ({ reason: key, policies: count })),
    },
    unrated: {
      policies: tally.unrated,
      reasons: Object.entries(tally.unratedReasons)
        .map(([key, seen]) => ({ key, count: seen.count, message: seen.message }))
        .sort(byCount)
        .map(({ key, count, message }) => ({ path: key, message, policies: count })),
    },
    movers: keepLargest([...tally.movers]).map((m) => ({
      policy_reference: m.policyReference,
      current_premium: pounds(m.currentPence),
      new_premium: pounds(m.newPence),
      change: pounds(m.newPence - m.currentPence),
      change_percent: percent(m.currentPence, m.newPence),
      current_usage_rate: rateOf(m.currentRateMicros),
      new_usage_rate: rateOf(m.newRateMicros),
    })),
  };
}

export type ImpactReport = ReturnType<typeof impactReport>;
