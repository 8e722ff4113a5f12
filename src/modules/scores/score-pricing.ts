/**
 * Month scores as billing prices them (a product's `score_pricing` rule): for many policies at once, each
 * London month's score from its counting trips, whether it is over, final (over with 50 miles scored) and
 * disputed (an event of it awaits a decision). The same figures `GET /policys/:ref/scores` shows.
 */
import type { Executor } from '../../schema.ts';
import { METRES_PER_MILE, monthIsFinal, MONTH_MIN_MILES } from './rules/index.ts';
import { monthFigures } from './score-figures.ts';
import { monthEndAt } from './score-service.ts';

/** A month's score as pricing sees it. */
export interface PricingMonth {
  readonly score: number | null;
  /** The month has ended (London). */
  readonly over: boolean;
  /** Over, with at least 50 miles scored: the score stands. */
  readonly final: boolean;
  /** At least 50 miles scored (whether or not the month is over). */
  readonly enoughScored: boolean;
  /** An event of the month has a pending dispute. */
  readonly disputed: boolean;
}

/** Of some policies, each `YYYY-MM` month from `fromMonth` with scored trips or a pending dispute, at `now`. */
export async function pricingMonths(
  db: Executor,
  policyIds: readonly string[],
  fromMonth: string,
  now: Date,
): Promise<Map<string, Map<string, PricingMonth>>> {
  const found = new Map<string, Map<string, PricingMonth>>();
  if (policyIds.length === 0) return found;
  const [trips, disputes] = await Promise.all([
    db
      .selectFrom('trip_scores')
      .select(['policy_id', 'month', 'score', 'distance_metres'])
      .where('policy_id', 'in', [...policyIds])
      .where('month', '>=', fromMonth)
      .where('voided_at', 'is', null)
      .where('score', 'is not', null)
      .execute(),
    db
      .selectFrom('score_disputes')
      .select(['policy_id', 'month'])
      .distinct()
      .where('policy_id', 'in', [...policyIds])
      .where('state', '=', 'pending')
      .where('month', '>=', fromMonth)
      .execute(),
  ]);
  const byMonth = new Map<string, Array<{ score: number; distanceMetres: number }>>();
  for (const t of trips) {
    const key = `${t.policy_id}/${t.month}`;
    const list = byMonth.get(key) ?? [];
    list.push({ score: Number(t.score), distanceMetres: t.distance_metres });
    byMonth.set(key, list);
  }
  const disputed = new Set(disputes.map((d) => `${d.policy_id}/${d.month}`));
  for (const key of new Set([...byMonth.keys(), ...disputed])) {
    const [policyId = '', month = ''] = key.split('/');
    const figures = monthFigures(byMonth.get(key) ?? []);
    const end = monthEndAt(month);
    const months = found.get(policyId) ?? new Map<string, PricingMonth>();
    months.set(month, {
      score: figures.score,
      over: now.getTime() >= end.getTime(),
      final: monthIsFinal(end, now, figures.metres),
      enoughScored: figures.metres >= MONTH_MIN_MILES * METRES_PER_MILE,
      disputed: disputed.has(key),
    });
    found.set(policyId, months);
  }
  return found;
}
