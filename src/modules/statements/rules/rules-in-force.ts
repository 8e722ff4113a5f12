/**
 * Which of a product's rules bill a London day or a statement's period, in the units the usage rules
 * take (metres, pence), and the calendar facts the rules' queries need. Pure: the product's versions
 * and instants come in as values.
 */
import { addDays } from '../../../platform/london-calendar.ts';
import { toPence } from '../../../platform/money.ts';
import {
  capMetres,
  freeMetres,
  productVersionAt,
  type DistanceUnit,
  type VersionInTime,
} from '../../products/rules/index.ts';
import { londonDate, londonMidnight } from './statement-period.ts';
import type { DayRules, PeriodRules } from './usage-rules.ts';

/** The rules of a product version that billing applies (distances in the product's unit, money in pounds). */
export interface BillingRules {
  readonly daily_cap_distance?: number | undefined;
  readonly annual_cap_distance?: number | undefined;
  readonly free_distance_per_statement?: number | undefined;
  readonly minimum_usage_premium?: number | undefined;
}

/** A product as billing reads it: its unit and its versions, oldest first. */
export interface BillingProduct {
  readonly usageUnit: DistanceUnit;
  readonly versions: ReadonlyArray<VersionInTime & { readonly rules: BillingRules }>;
}

/** Whether a version has any rule that billing applies. */
export const hasRules = (rules: BillingRules): boolean =>
  rules.daily_cap_distance !== undefined ||
  rules.annual_cap_distance !== undefined ||
  rules.free_distance_per_statement !== undefined ||
  rules.minimum_usage_premium !== undefined;

const least = (values: Array<number | null>): number | null => {
  const set = values.filter((v) => v !== null);
  return set.length === 0 ? null : Math.min(...set);
};

/**
 * A product's rules as the pure usage rules take them: caps per London day (the version in force at
 * its midnight), the rest per statement. Each answer is kept: a billing run asks the same of a thousand
 * statements.
 */
export function rulesInForce(product: BillingProduct) {
  const byDate = new Map<string, DayRules>();
  const byPeriod = new Map<string, PeriodRules>();
  const unit = product.usageUnit;
  const versionAt = (at: Date): BillingRules => productVersionAt(product.versions, at)?.rules ?? {};
  const caps = (rules: BillingRules): DayRules => ({
    dailyCapMetres: rules.daily_cap_distance === undefined ? null : capMetres(rules.daily_cap_distance, unit),
    annualCapMetres:
      rules.annual_cap_distance === undefined ? null : capMetres(rules.annual_cap_distance, unit),
  });
  return {
    /** The caps of a London day: the version in force at its midnight. */
    on(date: string): DayRules {
      let rules = byDate.get(date);
      if (rules === undefined) {
        rules = caps(versionAt(londonMidnight(date)));
        byDate.set(date, rules);
      }
      return rules;
    },
    /** For a statement of the days from `fromAt` to `endAt`: the least caps, and the end's free distance and minimum. */
    period(fromAt: Date, endAt: Date): PeriodRules {
      const key = `${londonDate(fromAt)}/${String(endAt.getTime())}`;
      const known = byPeriod.get(key);
      if (known !== undefined) return known;
      const from = londonMidnight(londonDate(fromAt));
      const inForce = product.versions.filter(
        (v) =>
          v === productVersionAt(product.versions, from) ||
          (v.effectiveFrom > from && v.effectiveFrom <= endAt),
      );
      const atEnd = versionAt(endAt);
      const rules: PeriodRules = {
        leastDailyCapMetres: least(inForce.map((v) => caps(v.rules).dailyCapMetres)),
        leastAnnualCapMetres: least(inForce.map((v) => caps(v.rules).annualCapMetres)),
        freeDistanceMetres:
          atEnd.free_distance_per_statement === undefined
            ? 0
            : freeMetres(atEnd.free_distance_per_statement, unit),
        minimumUsagePremiumPence:
          atEnd.minimum_usage_premium === undefined ? 0 : toPence(atEnd.minimum_usage_premium),
      };
      byPeriod.set(key, rules);
      return rules;
    },
  };
}

export type RulesInForce = ReturnType<typeof rulesInForce>;

/** The policy year (its term's start, ISO) an instant falls in, from the policy's term starts. */
export const yearOfFrom =
  (starts: readonly Date[], fallback: Date) =>
  (at: Date): string => {
    let year = starts[0] ?? fallback;
    for (const start of starts) if (start.getTime() <= at.getTime()) year = start;
    return year.toISOString();
  };

/** Whether a period after `afterAt` starts at a London midnight: then it shares no day with the one before. */
export const startsAtMidnight = (afterAt: Date | null): boolean => {
  if (afterAt === null) return true;
  const start = new Date(afterAt.getTime() + 1000);
  return londonMidnight(londonDate(start)).getTime() === start.getTime();
};

/** The instant the London day after `date` begins. */
export const dayAfter = (date: string): Date => londonMidnight(addDays(date, 1));

/**
 * Per London day of a statement's claimed journeys: what earlier statements billed on it, driven and
 * charged (after daily caps), from the journeys of those days.
 */
export function earlierDaysOf(
  journeys: ReadonlyArray<{
    readonly startAt: Date;
    readonly distanceMetres: number;
    readonly dailyCapCreditMetres: number;
    readonly claimed: boolean;
  }>,
): Map<string, { drivenMetres: number; chargedMetres: number }> {
  const days = new Set(journeys.filter((j) => j.claimed).map((j) => londonDate(j.startAt)));
  const earlierDays = new Map<string, { drivenMetres: number; chargedMetres: number }>();
  for (const j of journeys) {
    const date = londonDate(j.startAt);
    if (j.claimed || !days.has(date)) continue;
    const day = earlierDays.get(date) ?? { drivenMetres: 0, chargedMetres: 0 };
    earlierDays.set(date, {
      drivenMetres: day.drivenMetres + j.distanceMetres,
      chargedMetres: day.chargedMetres + j.distanceMetres - j.dailyCapCreditMetres,
    });
  }
  return earlierDays;
}
