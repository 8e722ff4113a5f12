import { sql, type RawBuilder } from 'kysely';
import { METRES_PER_MILE } from '../modules/journeys/index.ts';
import { POLICY_INPUT_EXAMPLE } from '../modules/policies/index.ts';
import type { Executor } from '../schema.ts';
import type { IdPrefixes } from './ids.ts';

/** Journeys a policy at most: their ids end in the policy's index × this + the journey's number. */
export const MAX_JOURNEYS = 10_000;

/**
 * The journeys of the batch's policies (`from` to `to`, found by their ids' range), in their current
 * billing periods: from the latest billing date before today (days 29–31 fall on the last day of
 * shorter months), or the term's start if later, up to now. Each journey has its own slot of the
 * period (whole seconds): it starts in the slot's first half and lasts at most that half, so none
 * overlaps the next; 6 to 16 m/s on the way. Written in policy and start order, so the primary key
 * and the (policy_id, start_at) index grow at their right edge. How many were written.
 */
export async function insertJourneys(
  trx: Executor,
  values: {
    companyId: string;
    environment: string;
    from: number;
    to: number;
    ids: IdPrefixes;
    journeys: number;
    at: Date;
  },
): Promise<number> {
  const at = sql`${values.at}::timestamptz`;
  const idOf = (prefix: string, index: number) => `${prefix}${index.toString(16).padStart(12, '0')}`;
  // Each journey's row of journey_keys too (migration 0066), which store_journey's checks read.
  const result = await sql`
    with stored as (
    insert into journeys (id, company_id, environment, policy_id, policy_reference, policy_version_id,
      route, route_precision, point_count, start_at, end_at, distance_metres, distance_unit, usage_rate,
      usage_premium_pence, start_lat, start_lng, end_lat, end_lng, created_at)
    select (${values.ids.journey} || lpad(to_hex(t.i * ${MAX_JOURNEYS} + t.k), 12, '0'))::uuid,
      ${values.companyId}, ${values.environment}, t.id, t.policy_reference, t.version_id,
      -- A two-point route (the API keeps routes as encoded polylines).
      '_p~iF~ps|U_ulLnnqC', 5, 2, t.start_at, t.start_at + make_interval(secs => t.duration_seconds),
      t.metres, ${USAGE_UNIT}, ${USAGE_RATE}::numeric, ${ratedPence(sql`t.metres`)},
      51.3 + (t.h % 4000) / 10000.0, -0.5 + ((t.h >> 40) % 8000) / 10000.0,
      51.3 + ((t.h >> 8) % 4000) / 10000.0, -0.5 + ((t.h >> 48) % 8000) / 10000.0,
      -- Uploaded a few minutes after the journey ended.
      least(${at}, t.start_at + make_interval(secs => t.duration_seconds + 60 + (t.h >> 32) % 600))
    from (
      select p.id, p.policy_reference, p.version_id, p.i, k, draw.h,
        p.from_at + make_interval(secs => k * p.slot_seconds + draw.h % (p.slot_seconds / 2)) as start_at,
        draw.duration_seconds, draw.duration_seconds * (6 + (draw.h >> 24) % 11) as metres
      from (
        select p.id, p.policy_reference, (${values.ids.version} || right(p.id::text, 12))::uuid as version_id,
          ('x' || right(p.id::text, 12))::bit(48)::bigint as i, period.from_at,
          floor(extract(epoch from ${at} - period.from_at) / ${values.journeys})::bigint as slot_seconds
        from policies p
        cross join lateral (select (${at} at time zone 'Europe/London')::date as today_on,
          date_trunc('month', ${at} at time zone 'Europe/London')::date as month_on) d
        cross join lateral (select d.month_on + least(p.billing_day,
          extract(day from d.month_on + interval '1 month' - interval '1 day')::int) - 1 as billing_on) this_month
        cross join lateral (select greatest(p.current_start_at, (case when this_month.billing_on < d.today_on
            then this_month.billing_on
            else (d.month_on - interval '1 month')::date
              + least(p.billing_day, extract(day from d.month_on - interval '1 day')::int) - 1
          end)::timestamp at time zone 'Europe/London') as from_at) period
        where p.id between ${idOf(values.ids.policy, values.from)}::uuid and ${idOf(values.ids.policy, values.to)}::uuid
        order by p.id
      ) p
      -- Lateral, so that each policy's journeys follow it, in id order: no sort of the journeys.
      cross join lateral generate_series(0, ${values.journeys - 1} + 0 * p.i) as k
      cross join lateral (select hashint8extended(p.i * ${MAX_JOURNEYS} + k, 2) & 9223372036854775807 as h) h0
      cross join lateral (select h0.h, 1 + (h0.h >> 12) % least(p.slot_seconds / 2 - 1, 3600) as duration_seconds) draw
      where p.slot_seconds >= 4
    ) t
    returning policy_id, id, start_at, end_at)
    insert into journey_keys (policy_id, journey_id, start_at, end_at, provider_reference, live)
    select policy_id, id, start_at, end_at, null, true from stored`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

/** The seeded versions' usage rate and unit (the example's): journeys are rated at them. */
const USAGE_RATE = String(POLICY_INPUT_EXAMPLE.pricing.usage_rate);
const USAGE_UNIT = POLICY_INPUT_EXAMPLE.pricing.usage_unit;

/**
 * A journey's usage premium in pence as rating.ts computes it: rate × distance in the unit, rounded
 * once, half to even; in integers (the rate is exact decimal text: pence = metres × a / b).
 */
function ratedPence(metres: RawBuilder<unknown>): RawBuilder<number> {
  const [whole = '0', fraction = ''] = USAGE_RATE.split('.');
  const rateScaled = BigInt(whole + fraction);
  const metresPerUnitThousandths =
    USAGE_UNIT === 'km' ? 1_000_000n : BigInt(METRES_PER_MILE.replace('.', ''));
  let a = rateScaled * 100n * 1000n;
  let b = 10n ** BigInt(fraction.length) * metresPerUnitThousandths;
  const divisor = gcd(a, b);
  a /= divisor;
  b /= divisor;
  const n = sql`(${metres} * ${String(a)}::bigint)`;
  const d = sql`${String(b)}::bigint`;
  return sql<number>`(${n} / ${d} + case when 2 * (${n} % ${d}) > ${d}
    or (2 * (${n} % ${d}) = ${d} and (${n} / ${d}) % 2 = 1) then 1 else 0 end)`;
}

const gcd = (x: bigint, y: bigint): bigint => (y === 0n ? x : gcd(y, x % y));
