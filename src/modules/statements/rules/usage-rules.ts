/**
 * The pay-by-mile rules of a statement: daily caps, the annual cap, free distance and the minimum usage
 * premium. Pure: journeys, rules and what earlier statements charged come in as values.
 *
 * Journeys keep the premium they were rated at; a rule credits part of it, at the journey's own rate, so
 * the statement's `usage_premium` stays the sum of its journeys'. The rules act in this order:
 * 1. Daily cap, per Europe/London day of a journey's start. What earlier statements charged on the day
 *    stands; this statement's journeys of the day fill the room left under the cap, and the distance
 *    beyond it is credited from the latest journeys first. A day is never charged beyond its cap.
 * 2. Annual cap, per policy year: the distance still charged, in journey order, counts towards the
 *    year; what goes beyond the cap is credited.
 * 3. Free distance: the first of the distance still charged, in journey order.
 * 4. Minimum: a usage premium left below the minimum is topped up to it.
 */
import { usagePremiumPence } from '../../journeys/rules/index.ts';
import type { UsageUnit } from '../../policies/rules/index.ts';
import { londonDate } from './statement-period.ts';

export interface RuleJourney {
  readonly id: string;
  readonly startAt: Date;
  readonly distanceMetres: number;
  readonly usagePremiumPence: number;
  /** Money per unit of distance, exact decimal text. */
  readonly usageRate: string;
  readonly usageUnit: UsageUnit;
}

/** The caps of one London day, in metres (null: no such cap). */
export interface DayRules {
  readonly dailyCapMetres: number | null;
  readonly annualCapMetres: number | null;
}

export type RuleName = 'daily_cap' | 'annual_cap' | 'free_distance';

/** Distance of one journey a rule did not charge, and its premium. */
export interface RuleCredit {
  readonly journeyId: string;
  readonly rule: RuleName;
  /** The London day of the journey's start. */
  readonly date: string;
  readonly distanceMetres: number;
  readonly creditPence: number;
}

export interface CappedDay {
  readonly date: string;
  /** Everything driven that day, earlier statements' journeys included. */
  readonly drivenMetres: number;
  readonly chargedMetres: number;
  /** What this statement credits for the day. */
  readonly creditPence: number;
}

export interface StatementRulesInput {
  /** The journeys this statement bills: those of its period and the late uploads it claims. */
  readonly journeys: readonly RuleJourney[];
  /** Per London day: distance earlier statements billed on it, driven and charged (after daily caps). */
  readonly earlierDays: ReadonlyMap<
    string,
    { readonly drivenMetres: number; readonly chargedMetres: number }
  >;
  /** The caps of each London day (`YYYY-MM-DD`). */
  readonly rulesOn: (date: string) => DayRules;
  /** The policy year a journey's start falls in (a key: the year's start). */
  readonly yearOf: (at: Date) => string;
  /** Distance counted towards each policy year's cap by earlier statements. */
  readonly yearCountedMetres: ReadonlyMap<string, number>;
  readonly freeDistanceMetres: number;
  readonly minimumUsagePremiumPence: number;
}

export interface StatementRulesResult {
  readonly cappedDays: CappedDay[];
  readonly capCreditPence: number;
  readonly annualCapCreditPence: number;
  readonly freeDistanceCreditPence: number;
  readonly minimumTopUpPence: number;
  readonly credits: RuleCredit[];
  /** Distance counted towards each policy year this statement touched, after it. */
  readonly yearCountedMetres: Map<string, number>;
}

/** Journey order: by start, then by id, whatever order they were uploaded or read in. */
const byStart = (a: RuleJourney, b: RuleJourney) =>
  a.startAt.getTime() - b.startAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The premium of the next `metres` of a journey credited after `creditedMetres` of it: the difference of
 * the premiums of the two distances, each rounded once. So a journey's credits always add up to the
 * premium of the distance credited (its whole premium when all of it is), and crediting more distance
 * never credits less money.
 */
function premiumOf(journey: RuleJourney, creditedMetres: number, metres: number): number {
  const premium = (m: number) =>
    m >= journey.distanceMetres
      ? journey.usagePremiumPence
      : Math.min(usagePremiumPence(journey.usageRate, m, journey.usageUnit), journey.usagePremiumPence);
  return premium(creditedMetres + metres) - premium(creditedMetres);
}

const sum = (values: Iterable<number>): number => {
  let total = 0;
  for (const v of values) total += v;
  return total;
};

/** The rules' lines of one statement and the credits behind them. */
export function applyStatementRules(input: StatementRulesInput): StatementRulesResult {
  const journeys = [...input.journeys].sort(byStart);
  // What each journey still has charged as the rules take their parts.
  const left = new Map(journeys.map((j) => [j.id, { metres: j.distanceMetres, pence: j.usagePremiumPence }]));
  const credits: RuleCredit[] = [];
  const credit = (journey: RuleJourney, rule: RuleName, date: string, metres: number): number => {
    const rest = left.get(journey.id) ?? { metres: 0, pence: 0 };
    const pence = premiumOf(journey, journey.distanceMetres - rest.metres, metres);
    left.set(journey.id, { metres: rest.metres - metres, pence: rest.pence - pence });
    credits.push({ journeyId: journey.id, rule, date, distanceMetres: metres, creditPence: pence });
    return pence;
  };
  const dates = new Map(journeys.map((j) => [j.id, londonDate(j.startAt)]));
  const dateOf = (j: RuleJourney) => dates.get(j.id) ?? londonDate(j.startAt);

  // 1. Daily caps.
  const byDay = new Map<string, RuleJourney[]>();
  for (const j of journeys) byDay.set(dateOf(j), [...(byDay.get(dateOf(j)) ?? []), j]);
  const cappedDays: CappedDay[] = [];
  for (const [date, ofDay] of byDay) {
    const cap = input.rulesOn(date).dailyCapMetres;
    if (cap === null) continue;
    const earlier = input.earlierDays.get(date) ?? { drivenMetres: 0, chargedMetres: 0 };
    const driven = sum(ofDay.map((j) => j.distanceMetres));
    const room = Math.max(cap - earlier.chargedMetres, 0);
    let excess = Math.max(driven - room, 0);
    if (excess === 0) continue;
    const chargedMetres = earlier.chargedMetres + driven - excess;
    let creditPence = 0;
    for (const j of [...ofDay].reverse()) {
      if (excess === 0) break;
      const metres = Math.min(excess, j.distanceMetres);
      if (metres === 0) continue;
      creditPence += credit(j, 'daily_cap', date, metres);
      excess -= metres;
    }
    cappedDays.push({ date, drivenMetres: earlier.drivenMetres + driven, chargedMetres, creditPence });
  }
  cappedDays.sort((a, b) => (a.date < b.date ? -1 : 1));

  // 2. The annual cap, in journey order.
  const yearCounted = new Map<string, number>();
  let annualCapCreditPence = 0;
  for (const j of journeys) {
    const year = input.yearOf(j.startAt);
    const counted = yearCounted.get(year) ?? input.yearCountedMetres.get(year) ?? 0;
    const charged = left.get(j.id)?.metres ?? 0;
    const cap = input.rulesOn(dateOf(j)).annualCapMetres;
    const over = cap === null ? 0 : Math.min(charged, Math.max(counted + charged - cap, 0));
    if (over > 0) annualCapCreditPence += credit(j, 'annual_cap', dateOf(j), over);
    yearCounted.set(year, counted + charged - over);
  }

  // 3. Free distance, the first still charged.
  let free = input.freeDistanceMetres;
  let freeDistanceCreditPence = 0;
  for (const j of journeys) {
    if (free === 0) break;
    const metres = Math.min(free, left.get(j.id)?.metres ?? 0);
    if (metres === 0) continue;
    freeDistanceCreditPence += credit(j, 'free_distance', dateOf(j), metres);
    free -= metres;
  }

  // 4. The minimum usage premium.
  const capCreditPence = sum(cappedDays.map((d) => d.creditPence));
  const usageLeftPence = sum([...left.values()].map((l) => l.pence));
  return {
    cappedDays,
    capCreditPence,
    annualCapCreditPence,
    freeDistanceCreditPence,
    minimumTopUpPence: Math.max(input.minimumUsagePremiumPence - usageLeftPence, 0),
    credits,
    yearCountedMetres: yearCounted,
  };
}

/**
 * Whether a statement needs its journeys one by one, from its sums alone: no when no day can pass its
 * cap, the year cannot pass its cap, there is no free distance and every journey falls in one policy
 * year. Then `withoutJourneys` gives exactly what `applyStatementRules` would.
 */
export interface StatementSums {
  readonly distanceMetres: number;
  readonly usagePremiumPence: number;
  /** The most distance of one London day of the statement, earlier statements' charged part included. */
  readonly busiestDayMetres: number;
  /** The statement's journeys all start in this policy year (null: some start in another). */
  readonly year: string | null;
}

export interface PeriodRules {
  /** The least daily and annual caps of the versions in force over the statement's days. */
  readonly leastDailyCapMetres: number | null;
  readonly leastAnnualCapMetres: number | null;
  readonly freeDistanceMetres: number;
  readonly minimumUsagePremiumPence: number;
}

export function needsJourneys(
  sums: StatementSums,
  rules: PeriodRules,
  yearCountedMetres: ReadonlyMap<string, number>,
): boolean {
  if (sums.distanceMetres === 0) return false;
  if (sums.year === null || rules.freeDistanceMetres > 0) return true;
  if (rules.leastDailyCapMetres !== null && sums.busiestDayMetres > rules.leastDailyCapMetres) return true;
  return (
    rules.leastAnnualCapMetres !== null &&
    (yearCountedMetres.get(sums.year) ?? 0) + sums.distanceMetres > rules.leastAnnualCapMetres
  );
}

/** The rules' result for a statement that `needsJourneys` says no rule but the minimum touches. */
export function withoutJourneys(
  sums: StatementSums,
  rules: PeriodRules,
  yearCountedMetres: ReadonlyMap<string, number>,
): StatementRulesResult {
  const counted = new Map<string, number>();
  if (sums.year !== null && sums.distanceMetres > 0)
    counted.set(sums.year, (yearCountedMetres.get(sums.year) ?? 0) + sums.distanceMetres);
  return {
    cappedDays: [],
    capCreditPence: 0,
    annualCapCreditPence: 0,
    freeDistanceCreditPence: 0,
    minimumTopUpPence: Math.max(rules.minimumUsagePremiumPence - sums.usagePremiumPence, 0),
    credits: [],
    yearCountedMetres: counted,
  };
}

/** A billed journey of a capped day, with the daily-cap credit it has had. */
export interface CreditedJourney extends RuleJourney {
  readonly dailyCapCreditMetres: number;
  readonly dailyCapCreditPence: number;
}

/**
 * A capped day after some of its billed journeys were voided: the room the voids freed under the cap is
 * given back to the day's other journeys that the cap credited (earliest first), as negative credits,
 * so the day is charged what it would have been without the voided journeys. Never more than the voided
 * journeys were paid: the policyholder is never charged more for a day because a journey was voided
 * (then nothing is given back).
 */
export function dayAfterVoids(input: {
  readonly date: string;
  readonly remaining: readonly CreditedJourney[];
  readonly dailyCapMetres: number | null;
  readonly voidedPaidPence: number;
}): { credits: RuleCredit[]; chargedBackPence: number; chargedBackMetres: number } {
  const journeys = [...input.remaining].sort(byStart);
  const driven = sum(journeys.map((j) => j.distanceMetres));
  const charged = driven - sum(journeys.map((j) => j.dailyCapCreditMetres));
  const ideal = input.dailyCapMetres === null ? driven : Math.min(input.dailyCapMetres, driven);
  let giveBack = Math.max(ideal - charged, 0);
  const credits: RuleCredit[] = [];
  for (const j of journeys) {
    if (giveBack === 0) break;
    const metres = Math.min(giveBack, j.dailyCapCreditMetres);
    if (metres === 0) continue;
    const pence = Math.min(premiumOf(j, j.dailyCapCreditMetres - metres, metres), j.dailyCapCreditPence);
    credits.push({
      journeyId: j.id,
      rule: 'daily_cap',
      date: input.date,
      distanceMetres: -metres,
      creditPence: -pence,
    });
    giveBack -= metres;
  }
  const chargedBackPence = sum(credits.map((c) => -c.creditPence));
  if (chargedBackPence > input.voidedPaidPence)
    return { credits: [], chargedBackPence: 0, chargedBackMetres: 0 };
  return { credits, chargedBackPence, chargedBackMetres: sum(credits.map((c) => -c.distanceMetres)) };
}
