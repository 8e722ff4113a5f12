/**
 * Disputes through a re-cut: when late positions replace a trip, a dispute of one of its events follows
 * the event into the replacement trip (decision and all), and an accepted one keeps the event out of the
 * replacement's score. A dispute whose event the re-cut no longer finds stays with the voided trip's event.
 */
import type { Executor } from '../../schema.ts';
import { tripScore, type ScoringRules } from './rules/index.ts';
import {
  findTripForRescore,
  listTripDisputes,
  listTripEvents,
  moveDispute,
  updateTripScore,
} from './dispute-repository.ts';

/**
 * How far apart in time a re-cut may find a disputed event again (same kind). A late fix can move where a
 * derived event is detected by a second or two; events of one kind are at least a minute apart
 * (REPEAT_SECONDS), so this cannot match the wrong one.
 */
export const DISPUTE_MATCH_SECONDS = 5;

type EventKind = Parameters<typeof tripScore>[0][number]['kind'];

/** Rewrites a trip's score from its events that still count (none accepted in a dispute). */
export async function rescoreTrip(
  trx: Executor,
  policyId: string,
  journeyId: string,
  rulesAt: (startAt: Date) => ScoringRules,
): Promise<void> {
  const trip = await findTripForRescore(trx, policyId, journeyId);
  if (trip === undefined) return;
  const events = trip.counting as Array<{ kind: EventKind }>;
  const score = tripScore(events, trip.nightMetres, trip.distanceMetres, rulesAt(trip.startAt).weights);
  await updateTripScore(trx, policyId, journeyId, score);
}

/**
 * Moves the disputes of the `replaced` trips' events to the same events of the `replacements` (same kind,
 * within DISPUTE_MATCH_SECONDS, the nearest first, one dispute an event), in the re-cut's transaction, and
 * rescores the replacements that received an accepted one.
 */
export async function carryDisputes(
  trx: Executor,
  policyId: string,
  trips: { replaced: readonly string[]; replacements: readonly string[] },
  rulesAt: (startAt: Date) => ScoringRules,
): Promise<void> {
  const disputes = await listTripDisputes(trx, policyId, trips.replaced);
  if (disputes.length === 0) return;
  const events = await listTripEvents(trx, policyId, trips.replacements);
  const taken = new Set<string>();
  const rescore = new Set<string>();
  for (const dispute of disputes) {
    let best: (typeof events)[number] | undefined;
    let bestMs = DISPUTE_MATCH_SECONDS * 1000;
    for (const event of events) {
      const apartMs = Math.abs(event.occurredAt.getTime() - dispute.occurredAt.getTime());
      if (event.kind !== dispute.kind || taken.has(event.id) || apartMs > bestMs) continue;
      best = event;
      bestMs = apartMs;
    }
    // NOTE: no match: the event is gone from the re-cut trip, so its dispute stays on record against the
    // voided trip's event (a pending one is still decided by staff; the decision changes no score).
    if (best === undefined) continue;
    taken.add(best.id);
    await moveDispute(trx, policyId, dispute.id, {
      eventId: best.id,
      journeyId: best.journeyId,
      month: best.month,
    });
    if (dispute.state === 'accepted') rescore.add(best.journeyId);
  }
  for (const journeyId of rescore) await rescoreTrip(trx, policyId, journeyId, rulesAt);
}
