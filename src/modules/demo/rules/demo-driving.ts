import { createHash } from 'node:crypto';
import { decodePolyline, encodePolyline, routeDistanceMetres } from '../../../platform/geo/index.ts';

/*
 * Where the demo policyholder drives, for the `mock` environment: a handful of real routes around
 * London from home, measured as POST /journeys measures a route, and the everyday pattern of trips
 * (commuting, an evening out, a weekend trip). Deterministic: the same trips for the same day.
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

export interface Place {
  readonly name: string;
  readonly postcode: string;
}
export const HOME: Place = { name: 'City of London', postcode: 'EC1A 1BB' };
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

export interface Leg {
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

/** A trip of a demo day as driven: its places, its measured way and when it leaves. */
export interface DemoTrip {
  readonly from: Place;
  readonly to: Place;
  readonly way: Leg;
  /** Seconds after (London) midnight. */
  readonly leaveAt: number;
  readonly voidReason?: string;
}

function driven({ to, home, leaveAt }: Trip, voidReason?: string): DemoTrip {
  const routes = demoLegs();
  return {
    from: home ? PLACES[to] : HOME,
    to: home ? HOME : PLACES[to],
    way: home ? routes[to].back : routes[to].out,
    leaveAt,
    ...(voidReason === undefined ? {} : { voidReason }),
  };
}

/**
 * The trips of a day, `YYYY-MM-DD`: on `cappedDay` to Bath and back (over the daily cap), else the
 * everyday pattern; on `voidDay` also a trip the garage drove (void).
 */
export function tripsOn(date: string, cappedDay: string, voidDay: string): DemoTrip[] {
  const planned =
    date === cappedDay ? [out('bath', at(7, 40)), back('bath', at(16, 50))] : plannedTrips(date);
  const trips = planned.map((trip) => driven(trip));
  if (date === voidDay)
    trips.push(driven(out('greenwich', at(12, 10)), 'Driven by the garage during a service'));
  return trips;
}
