import { addDays, londonMidnight } from '../../platform/london-calendar.ts';
import { fromPence } from '../../platform/money.ts';
import { totalKilometres, totalMiles, usagePremiumPence, type Journey } from '../journeys/index.ts';
import {
  HOME,
  milesToMetres,
  MOCK_DEVICE_ID,
  MOCK_RULES,
  MOCK_USAGE_RATE,
  mockUuid,
  tripsOn,
} from './rules/index.ts';

/*
 * The demo policyholder's driving, for the `mock` environment: a few months of journeys around London
 * from the demo term's start up to now, made from a handful of real routes (rules/demo-driving.ts)
 * and rated as the journeys module rates them. Deterministic: the same journeys for the same day (only
 * what has ended by `now` is shown), nothing stored.
 */

const DAY_SECONDS = 86_400;

export interface DemoJourney extends Journey {
  /** The Europe/London day it started, `YYYY-MM-DD`. */
  readonly day: string;
  /** `usage_premium` in pence (not shown: the routes' schemas serialise only their own fields). */
  readonly usagePremiumPence: number;
}

/** The version of the demo policy that rates a journey: the latest in force at its start. */
export interface DemoVersion {
  readonly reference: string;
  readonly effectiveAt: number;
}

/** London days, `YYYY-MM-DD`. */
export interface DemoDays {
  /** The demo term's first day. */
  readonly termStart: string;
  /** The day whose trip out of town goes over the daily cap. */
  readonly cappedDay: string;
  /** The day the device sent nothing. */
  readonly estimatedDay: string;
  /** The day with a void trip. */
  readonly voidDay: string;
}

const midnightOf = (date: string): number => londonMidnight(date).getTime() / 1000;

/**
 * Every demo journey from the term's start to `nowSeconds`, oldest first: device trips, one capped day
 * (to Bath and back), one estimated day (the device silent), one void trip. `versions` oldest first;
 * `statementOf` names the statement that billed a journey starting at a time (null: not billed yet).
 */
export function demoJourneys(
  policyReference: string,
  days: DemoDays,
  versions: readonly DemoVersion[],
  statementOf: (startAt: number) => string | null,
  nowSeconds: number,
): DemoJourney[] {
  const journeys: DemoJourney[] = [];
  // A handful of distinct distances: each rated once (exact decimal rating is not cheap).
  const premiums = new Map<number, { pence: number; pounds: number }>();
  const premiumOf = (metres: number): { pence: number; pounds: number } => {
    let premium = premiums.get(metres);
    if (premium === undefined) {
      const pence = usagePremiumPence(MOCK_USAGE_RATE, metres, 'mile');
      premium = { pence, pounds: fromPence(pence) };
      premiums.set(metres, premium);
    }
    return premium;
  };
  const versionAt = (startAt: number): string =>
    versions.findLast((v) => v.effectiveAt <= startAt)?.reference ?? versions[0]?.reference ?? '';

  const push = (
    day: string,
    startAt: number,
    fields: Pick<
      Journey,
      | 'route'
      | 'distance_in_metres'
      | 'start_lat'
      | 'start_long'
      | 'end_lat'
      | 'end_long'
      | 'start_name'
      | 'end_name'
      | 'start_postcode'
      | 'end_postcode'
      | 'source'
      | 'provider_reference'
    > & { endAt: number; voidReason?: string },
  ) => {
    const { endAt, voidReason, ...rest } = fields;
    if (endAt > nowSeconds) return;
    const isVoid = voidReason !== undefined;
    const premium = premiumOf(fields.distance_in_metres);
    journeys.push({
      ...rest,
      day,
      usagePremiumPence: premium.pence,
      journey_reference: mockUuid(`journey:${String(startAt)}`),
      policy_reference: policyReference,
      policy_version_reference: versionAt(startAt),
      precision: 5,
      distance_units: 'miles',
      total_miles: totalMiles(fields.distance_in_metres),
      total_kms: totalKilometres(fields.distance_in_metres),
      duration_in_seconds: endAt - startAt,
      usage_rate: MOCK_USAGE_RATE,
      usage_premium: premium.pounds,
      start_at: startAt,
      end_at: endAt,
      is_void: isVoid,
      void_reason: voidReason ?? null,
      voided_at: isVoid ? new Date((endAt + DAY_SECONDS) * 1000).toISOString() : null,
      statement_version_reference: isVoid ? null : statementOf(startAt),
      // Received a couple of minutes after it ended (the device uploads when the ignition goes off).
      created_at: new Date((endAt + 120) * 1000).toISOString(),
      device_id: MOCK_DEVICE_ID,
      is_estimated: fields.source === 'estimate',
      gap_distance_in_metres: 0,
    });
  };

  for (let day = days.termStart; midnightOf(day) <= nowSeconds; day = addDays(day, 1)) {
    if (day === days.estimatedDay) {
      const midnight = midnightOf(day);
      // NOTE: the device sent nothing all day: the product's device_offline rule bills an estimate,
      // without a route, at the place last known (home).
      push(day, midnight, {
        route: '',
        distance_in_metres: milesToMetres(MOCK_RULES.device_offline.estimated_distance_per_day),
        start_lat: 51.5152,
        start_long: -0.0972,
        end_lat: 51.5152,
        end_long: -0.0972,
        start_name: HOME.name,
        end_name: HOME.name,
        start_postcode: HOME.postcode,
        end_postcode: HOME.postcode,
        source: 'estimate',
        provider_reference: `estimate:${MOCK_DEVICE_ID}:${day}`,
        endAt: midnightOf(addDays(day, 1)),
      });
      continue;
    }
    for (const { from, to, way, leaveAt, voidReason } of tripsOn(day, days.cappedDay, days.voidDay)) {
      const startAt = midnightOf(day) + leaveAt;
      push(day, startAt, {
        route: way.route,
        distance_in_metres: way.distanceMetres,
        start_lat: way.start.lat,
        start_long: way.start.lng,
        end_lat: way.end.lat,
        end_long: way.end.lng,
        start_name: from.name,
        end_name: to.name,
        start_postcode: from.postcode,
        end_postcode: to.postcode,
        source: 'device',
        provider_reference: `trip:${MOCK_DEVICE_ID}:${String(startAt)}`,
        endAt: startAt + way.durationSeconds,
        ...(voidReason === undefined ? {} : { voidReason }),
      });
    }
  }
  return journeys.sort((a, b) => a.start_at - b.start_at);
}
