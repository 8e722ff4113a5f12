import { createHash } from 'node:crypto';
import { decodePolyline, encodePolyline, routeDistanceMetres } from '../../platform/geo/index.ts';
import { addDays, londonMidnight } from '../../platform/london-calendar.ts';
import { fromPence } from '../../platform/money.ts';
import { totalKilometres, totalMiles, usagePremiumPence, type Journey } from '../journeys/index.ts';

/*
 * The demo policyholder's driving, for the `mock` environment: a few months of journeys around London
 * from the demo term's start up to now, made from a handful of real routes. Deterministic: the same
 * journeys for the same day (only what has ended by `now` is shown), nothing stored.
 */

export const MOCK_DEVICE_ID = 'obd-356938035643809';
/** The demo product's rate, pounds a mile, on every version of the demo policy. */
export const MOCK_USAGE_RATE = 0.045;
/** The demo product's rules, in miles: shown on the policy and applied by the demo statements. */
export const MOCK_RULES = {
  daily_cap_distance: 150,
  annual_cap_distance: 10_000,
  free_distance_per_statement: 20,
  minimum_usage_premium: 5,
  device_offline: { after_hours: 24, estimated_distance_per_day: 20, grace_days: 1 },
  mileage_budget_alerts: true,
} as const;

const DAY_SECONDS = 86_400;
const METRES_PER_MILE = 1609.344;
/** Whole metres of a distance in miles (the demo product's unit). */
export const milesToMetres = (miles: number): number => Math.round(miles * METRES_PER_MILE);

/** Deterministic UUID-shaped id of a name (hex of its SHA-256, version 4 and variant bits set). */
export function mockUuid(name: string): string {
  const hex = createHash('sha256').update(`milepost-mock:${name}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

interface Place {
  readonly name: string;
  readonly postcode: string;
}
const HOME: Place = { name: 'City of London', postcode: 'EC1A 1BB' };
const PLACES = {
  work: { name: 'Canary Wharf', postcode: 'E14 5AB' },
  camden: { name: 'Camden Town', postcode: 'NW1 8NH' },
  richmond: { name: 'Richmond', postcode: 'TW9 1DN' },
  greenwich: { name: 'Greenwich', postcode: 'SE10 9HT' },
  wimbledon: { name: 'Wimbledon', postcode: 'SW19 7NB' },
  bath: { name: 'Bath', postcode: 'BA1 1LT' },
} as const satisfies Record<string, Place>;
type Destination = keyof typeof PLACES;

/** Each destination's route from home along its roads ([lat, lng, …] degrees), and a typical speed. */
const ROUTES: Record<Destination, { readonly points: readonly number[]; readonly kmh: number }> = {
  work: {
    kmh: 22,
    points: [
      51.5152, -0.0972, 51.5168, -0.0905, 51.5142, -0.0755, 51.5133, -0.0717, 51.5108, -0.0652, 51.5098,
      -0.062, 51.5105, -0.0532, 51.5113, -0.044, 51.5105, -0.035, 51.5098, -0.027, 51.5062, -0.0223, 51.5045,
      -0.019,
    ],
  },
  camden: {
    kmh: 18,
    points: [
      51.5152, -0.0972, 51.5205, -0.0985, 51.5238, -0.1004, 51.527, -0.103, 51.532, -0.1057, 51.5338, -0.1122,
      51.5355, -0.118, 51.536, -0.13, 51.5375, -0.1385, 51.539, -0.1426,
    ],
  },
  richmond: {
    kmh: 26,
    points: [
      51.5152, -0.0972, 51.5115, -0.104, 51.5075, -0.1225, 51.501, -0.124, 51.492, -0.127, 51.4875, -0.1445,
      51.4845, -0.16, 51.4905, -0.1765, 51.495, -0.19, 51.4935, -0.207, 51.4925, -0.224, 51.4928, -0.25,
      51.493, -0.275, 51.487, -0.288, 51.478, -0.293, 51.4695, -0.2985, 51.4613, -0.3037,
    ],
  },
  greenwich: {
    kmh: 21,
    points: [
      51.5152, -0.0972, 51.5113, -0.0921, 51.508, -0.0877, 51.501, -0.087, 51.4985, -0.078, 51.4975, -0.064,
      51.4935, -0.048, 51.4885, -0.0385, 51.485, -0.03, 51.48, -0.018, 51.4826, -0.0077,
    ],
  },
  wimbledon: {
    kmh: 24,
    points: [
      51.5152, -0.0972, 51.509, -0.104, 51.499, -0.105, 51.4925, -0.1145, 51.486, -0.124, 51.4795, -0.138,
      51.473, -0.153, 51.4675, -0.167, 51.462, -0.18, 51.452, -0.195, 51.435, -0.201, 51.4214, -0.2064,
    ],
  },
  bath: {
    kmh: 88,
    points: [
      51.5152, -0.0972, 51.495, -0.19, 51.493, -0.275, 51.4885, -0.36, 51.487, -0.47, 51.5, -0.6, 51.503,
      -0.74, 51.4615, -0.89, 51.435, -0.97, 51.4445, -1.12, 51.449, -1.297, 51.468, -1.545, 51.528, -1.72,
      51.5245, -1.925, 51.52, -2.13, 51.5, -2.33, 51.43, -2.36, 51.3811, -2.359,
    ],
  },
};

interface Leg {
  readonly route: string;
  readonly distanceMetres: number;
  readonly durationSeconds: number;
  readonly start: { lat: number; lng: number };
  readonly end: { lat: number; lng: number };
}

/** A route as an encoded polyline and measured as POST /journeys measures one (the decoded points). */
function leg(points: readonly number[], kmh: number): Leg {
  const route = encodePolyline(points, 5);
  const decoded = decodePolyline(route, 5);
  if (!decoded.ok) throw new Error(`demo route does not decode: ${decoded.message}`);
  const p = decoded.points;
  const n = decoded.count;
  const distanceMetres = routeDistanceMetres(p, n);
  return {
    route,
    distanceMetres,
    durationSeconds: Math.round((distanceMetres / 1000 / kmh) * 3600),
    start: { lat: p[0] ?? 0, lng: p[1] ?? 0 },
    end: { lat: p[2 * n - 2] ?? 0, lng: p[2 * n - 1] ?? 0 },
  };
}

/** [lat, lng, …] in the other direction. */
function reversed(points: readonly number[]): number[] {
  const out: number[] = [];
  for (let k = points.length - 2; k >= 0; k -= 2) out.push(points[k] ?? 0, points[k + 1] ?? 0);
  return out;
}

let legs: Record<Destination, { out: Leg; back: Leg }> | undefined;
/** Measured once: the routes never change. */
function demoLegs(): Record<Destination, { out: Leg; back: Leg }> {
  legs ??= Object.fromEntries(
    Object.entries(ROUTES).map(([to, { points, kmh }]) => [
      to,
      { out: leg(points, kmh), back: leg(reversed(points), kmh) },
    ]),
  ) as Record<Destination, { out: Leg; back: Leg }>;
  return legs;
}

/** A small deterministic generator of minutes of delay, seeded by the day. */
function jitter(seed: number): (maxMinutes: number) => number {
  let state = seed >>> 0 || 1;
  return (maxMinutes) => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return (state % (maxMinutes + 1)) * 60;
  };
}

/** One planned trip of a day: where to, which way, leaving at seconds after (London) midnight. */
interface Trip {
  readonly to: Destination;
  readonly home: boolean;
  readonly leaveAt: number;
}

const at = (hours: number, minutes = 0) => hours * 3600 + minutes * 60;
const out = (to: Destination, leaveAt: number): Trip => ({ to, home: false, leaveAt });
const back = (to: Destination, leaveAt: number): Trip => ({ to, home: true, leaveAt });

/** The day of the week of a date, `YYYY-MM-DD` (0 is Sunday). */
export const weekdayOf = (date: string): number => new Date(`${date}T12:00:00Z`).getUTCDay();

/** The everyday pattern: commuting on weekdays, a Wednesday evening out, a weekend trip. */
function plannedTrips(date: string): Trip[] {
  const dayNumber = Date.parse(`${date}T00:00:00Z`) / (DAY_SECONDS * 1000);
  const minutes = jitter(dayNumber * 2_654_435_761);
  const weekday = weekdayOf(date);
  if (weekday === 6) {
    const to = (['richmond', 'greenwich', 'wimbledon'] as const)[Math.floor(dayNumber / 7) % 3] ?? 'richmond';
    return [out(to, at(10, 15) + minutes(40)), back(to, at(15) + minutes(60))];
  }
  if (weekday === 0) return [out('camden', at(11) + minutes(30)), back('camden', at(13, 30) + minutes(30))];
  const trips = [out('work', at(7, 45) + minutes(25)), back('work', at(17, 30) + minutes(45))];
  if (weekday === 3)
    trips.push(out('camden', at(19, 15) + minutes(20)), back('camden', at(22) + minutes(20)));
  return trips;
}

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
  const routes = demoLegs();
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

  const trip = (day: string, { to, home, leaveAt }: Trip, voidReason?: string) => {
    const way = home ? routes[to].back : routes[to].out;
    const [from, dest] = home ? [PLACES[to], HOME] : [HOME, PLACES[to]];
    const startAt = midnightOf(day) + leaveAt;
    push(day, startAt, {
      route: way.route,
      distance_in_metres: way.distanceMetres,
      start_lat: way.start.lat,
      start_long: way.start.lng,
      end_lat: way.end.lat,
      end_long: way.end.lng,
      start_name: from.name,
      end_name: dest.name,
      start_postcode: from.postcode,
      end_postcode: dest.postcode,
      source: 'device',
      provider_reference: `trip:${MOCK_DEVICE_ID}:${String(startAt)}`,
      endAt: startAt + way.durationSeconds,
      ...(voidReason === undefined ? {} : { voidReason }),
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
    const trips =
      day === days.cappedDay ? [out('bath', at(7, 40)), back('bath', at(16, 50))] : plannedTrips(day);
    for (const planned of trips) trip(day, planned);
    if (day === days.voidDay)
      trip(day, out('greenwich', at(12, 10)), 'Driven by the garage during a service');
  }
  return journeys.sort((a, b) => a.start_at - b.start_at);
}
