/**
 * Reads of journeys other modules make: the journeys each statement billed (statements) and a
 * policy's distance between two instants (usage). The journeys table is this module's; these are its
 * reads for them, the SQL they ran before unchanged.
 */
import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';
import { billedByStatement, type JourneySource } from './journey-repository.ts';

export interface BilledJourney {
  readonly id: string;
  readonly providerReference: string | null;
  readonly policyReference: string;
  readonly policyVersionId: string;
  readonly route: string;
  /** The route's polyline precision: 5 (1e-5°) or 6. */
  readonly precision: 5 | 6;
  readonly startAt: Date;
  readonly endAt: Date;
  readonly distanceMetres: number;
  readonly distanceUnit: string;
  readonly usageRate: string;
  readonly usagePremiumPence: number;
  readonly startLat: number | null;
  readonly startLng: number | null;
  readonly endLat: number | null;
  readonly endLng: number | null;
  readonly startName: string | null;
  readonly endName: string | null;
  readonly startPostcode: string | null;
  readonly endPostcode: string | null;
  readonly isVoid: boolean;
  readonly source: JourneySource;
}

const journeyColumns = [
  'id',
  'provider_reference',
  'policy_reference',
  'policy_version_id',
  'route',
  'route_precision',
  'start_at',
  'end_at',
  'distance_metres',
  'distance_unit',
  'usage_rate',
  'usage_premium_pence',
  'start_lat',
  'start_lng',
  'end_lat',
  'end_lng',
  'start_name',
  'end_name',
  'start_postcode',
  'end_postcode',
  'is_void',
  'source',
] as const;

type JourneyRow = {
  id: string;
  provider_reference: string | null;
  policy_reference: string;
  policy_version_id: string;
  route: string;
  route_precision: number;
  start_at: Date;
  end_at: Date;
  distance_metres: number;
  distance_unit: string;
  usage_rate: string;
  usage_premium_pence: number;
  start_lat: number | null;
  start_lng: number | null;
  end_lat: number | null;
  end_lng: number | null;
  start_name: string | null;
  end_name: string | null;
  start_postcode: string | null;
  end_postcode: string | null;
  is_void: boolean;
  source: JourneySource;
};

const toJourney = (r: JourneyRow): BilledJourney => ({
  id: r.id,
  providerReference: r.provider_reference,
  policyReference: r.policy_reference,
  policyVersionId: r.policy_version_id,
  route: r.route,
  precision: r.route_precision === 6 ? 6 : 5,
  startAt: r.start_at,
  endAt: r.end_at,
  distanceMetres: r.distance_metres,
  distanceUnit: r.distance_unit,
  usageRate: r.usage_rate,
  usagePremiumPence: r.usage_premium_pence,
  startLat: r.start_lat,
  startLng: r.start_lng,
  endLat: r.end_lat,
  endLng: r.end_lng,
  startName: r.start_name,
  endName: r.end_name,
  startPostcode: r.start_postcode,
  endPostcode: r.end_postcode,
  source: r.source,
  isVoid: r.is_void,
});

/**
 * The journeys of some statements of one policy, by statement, each list by start: those that start in
 * the statements' periods (a range of the (policy_id, start_at) index) and the late uploads they claimed
 * (the partial index on late ones), each given to its statement by `journey_statement` (migration 0014),
 * the rule billing follows. Reads nothing outside those periods however long the policy's history.
 */
export async function listStatementJourneys(
  db: Executor,
  policyId: string,
  statements: ReadonlyArray<{ id: string; period_start_at: Date; period_end_at: Date }>,
): Promise<Map<string, BilledJourney[]>> {
  const byStatement = new Map<string, BilledJourney[]>(statements.map((st) => [st.id, []]));
  if (statements.length === 0) return byStatement;
  const ids = statements.map((st) => st.id);
  const journeys = db
    .selectFrom('journeys')
    .select([...journeyColumns, billedByStatement.as('billed_by')])
    .where('policy_id', '=', policyId);
  // One after the other: `db` may be a transaction, one connection.
  const inPeriods = await journeys
    .where('start_at', '>=', new Date(Math.min(...statements.map((st) => st.period_start_at.getTime()))))
    .where('start_at', '<=', new Date(Math.max(...statements.map((st) => st.period_end_at.getTime()))))
    .execute();
  const lateUploads = await journeys
    .where('late', '=', true)
    .where('statement_version_id', 'in', ids)
    .execute();
  const rows = new Map([...inPeriods, ...lateUploads].map((row) => [row.id, row]));
  for (const row of [...rows.values()].sort((a, b) => a.start_at.getTime() - b.start_at.getTime()))
    if (row.billed_by !== null) byStatement.get(row.billed_by)?.push(toJourney(row));
  return byStatement;
}

/** Non-void distance of a policy's journeys starting in `[fromAt, toAt)`. */
export async function sumJourneyMetres(
  db: Executor,
  policyId: string,
  fromAt: Date,
  toAt: Date,
): Promise<number> {
  const row = await db
    .selectFrom('journeys')
    .select(sql<number>`coalesce(sum(distance_metres), 0)::bigint`.as('metres'))
    .where('policy_id', '=', policyId)
    .where('is_void', '=', false)
    .where('start_at', '>=', fromAt)
    .where('start_at', '<', toAt)
    .executeTakeFirstOrThrow();
  return row.metres;
}
