/**
 * Odometer readings in a statement's transaction: reads the readings around the periods (one query for
 * a whole billing chunk, and nothing more when none of its policies has any), compares them with the GPS
 * distance, stores what the product's `billing_distance_source` reconciles as a journey of the period
 * (before the period's journeys are claimed, so the statement bills it), and after the statements are
 * inserted keeps each comparison and records `telematics.odometer_discrepancy` where it is beyond the
 * product's threshold.
 */
import { sql } from 'kysely';
import { recordEvent } from '../../platform/events.ts';
import type { Executor } from '../../schema.ts';
import { jsonRows } from '../../platform/db/json-rows.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import type { JourneyService } from '../journeys/index.ts';
import { findProducts, productVersionAt, type ProductRules } from '../products/index.ts';
import {
  chooseReadings,
  compareOdometer,
  discrepancyPercent,
  exceedsThreshold,
  reconciliationAt,
  READING_WINDOW_SECONDS,
  type Reading,
} from './rules/odometer.ts';

export interface StatementOdometerTables {
  statement_odometers: {
    statement_id: string;
    policy_id: string;
    start_metres: number;
    start_at: Date;
    end_metres: number;
    end_at: Date;
    gps_metres: number;
  };
}

/** What a statement keeps of the readings it compared. */
export interface StatementOdometer {
  readonly statementId: string;
  readonly policyId: string;
  readonly start: Reading;
  readonly end: Reading;
  readonly gpsMetres: number;
}

/** A statement being written, with what the odometer needs of its policy. */
export interface OdometerStatement {
  readonly statementId: string;
  readonly policyId: string;
  readonly policyReference: string;
  readonly companyId: string;
  readonly environment: string;
  readonly productReference: string | null;
  /** The previous statement's end (null before the first). */
  readonly afterAt: Date | null;
  readonly periodStartAt: Date;
  readonly periodEndAt: Date;
}

/** A comparison made for a statement, to keep once the statement is inserted. */
export interface PlannedOdometer extends StatementOdometer {
  readonly policyReference: string;
  readonly companyId: string;
  readonly environment: string;
  /** The product's `odometer_discrepancy_percent` at the period's end, if any. */
  readonly thresholdPercent: number | undefined;
}

export type StoreJourneys = Pick<JourneyService, 'storeIn'>['storeIn'];

const WINDOW_MS = READING_WINDOW_SECONDS * 1000;

/**
 * Compares the readings around each statement's period with its GPS distance and stores the
 * reconciliations the products' rules call for (journeys at one instant inside the period, claimed by
 * the statement like any other). Returns the comparisons for `keepOdometers`.
 */
export async function reconcileOdometers(
  trx: Executor,
  statements: readonly OdometerStatement[],
  storeJourneys: StoreJourneys,
  at: Date,
): Promise<PlannedOdometer[]> {
  if (statements.length === 0) return [];
  const readings = await readingsAround(trx, statements);
  if (readings.size === 0) return [];
  const withReadings = statements.filter((s) => readings.has(s.policyId));
  const previous = await previousEnds(trx, withReadings);
  const rules = await rulesAtEnd(trx, withReadings);

  const chosen: Array<{ statement: OdometerStatement; start: Reading; end: Reading }> = [];
  for (const s of withReadings) {
    const choice = chooseReadings({
      readings: readings.get(s.policyId) ?? [],
      previousEnd: previous.get(s.policyId) ?? null,
      periodStartAt: s.periodStartAt,
      periodEndAt: s.periodEndAt,
    });
    if (choice.ok) chosen.push({ statement: s, start: choice.start, end: choice.end });
  }
  if (chosen.length === 0) return [];
  const gps = await gpsDistances(
    trx,
    chosen.map((c) => ({ key: c.statement.statementId, policyId: c.statement.policyId, ...c })),
  );

  const planned: PlannedOdometer[] = [];
  for (const { statement: s, start, end } of chosen) {
    const product = rules.get(s.statementId) ?? {};
    const gpsMetres = gps.get(s.statementId) ?? 0;
    const comparison = compareOdometer({
      start,
      end,
      gpsMetres,
      source: product.billing_distance_source ?? 'gps',
    });
    const reconcileAt = reconciliationAt(end.at, s.periodStartAt, s.periodEndAt);
    if (comparison.reconciliationMetres > 0 && reconcileAt !== undefined) {
      // NOTE: one at most per statement; named after it, so it can never collide with another.
      // A reconciliation the journeys refuse (a policy's cover ended before the instant) is not billed.
      await storeJourneys(
        trx,
        asTenant(s.companyId, s.environment as DataEnvironment),
        { id: s.policyId, reference: s.policyReference },
        [
          {
            providerReference: `odometer:${s.statementId}`,
            source: 'odometer_reconciliation',
            deviceId: null,
            startAt: reconcileAt,
            endAt: reconcileAt,
            distanceMetres: comparison.reconciliationMetres,
            place: null,
          },
        ],
        at,
      );
    }
    planned.push({
      statementId: s.statementId,
      policyId: s.policyId,
      policyReference: s.policyReference,
      companyId: s.companyId,
      environment: s.environment,
      start,
      end,
      gpsMetres,
      thresholdPercent: product.odometer_discrepancy_percent,
    });
  }
  return planned;
}

/**
 * Keeps the comparisons (their statements inserted already) and records a discrepancy event for each
 * beyond its product's threshold, in the statements' transaction.
 */
export async function keepOdometers(
  trx: Executor,
  planned: readonly PlannedOdometer[],
  at: Date,
): Promise<void> {
  if (planned.length === 0) return;
  await trx
    .insertInto('statement_odometers')
    .values(
      planned.map((p) => ({
        statement_id: p.statementId,
        policy_id: p.policyId,
        start_metres: p.start.readingMetres,
        start_at: p.start.at,
        end_metres: p.end.readingMetres,
        end_at: p.end.at,
        gps_metres: p.gpsMetres,
      })),
    )
    .execute();
  for (const p of planned) {
    const odometerMetres = p.end.readingMetres - p.start.readingMetres;
    const percent = discrepancyPercent(odometerMetres, p.gpsMetres);
    if (percent === null || p.thresholdPercent === undefined) continue;
    if (!exceedsThreshold(percent, p.thresholdPercent)) continue;
    const tenant: Tenant = asTenant(p.companyId, p.environment as DataEnvironment);
    await recordEvent(
      trx,
      tenant,
      'telematics.odometer_discrepancy',
      {
        policy_reference: p.policyReference,
        policy_version_reference: p.statementId,
        start_reading_metres: p.start.readingMetres,
        start_reading_time: p.start.at.toISOString(),
        end_reading_metres: p.end.readingMetres,
        end_reading_time: p.end.at.toISOString(),
        odometer_distance_in_metres: odometerMetres,
        gps_distance_in_metres: p.gpsMetres,
        discrepancy_percent: percent,
        odometer_discrepancy_percent: p.thresholdPercent,
      },
      at,
    );
  }
}

/** The kept comparisons of some statements, by statement id (absent: the statement had none). */
export async function listStatementOdometers(
  db: Executor,
  statementIds: readonly string[],
): Promise<Map<string, StatementOdometer>> {
  if (statementIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('statement_odometers')
    .selectAll()
    .where('statement_id', 'in', [...statementIds])
    .execute();
  return new Map(
    rows.map((r) => [
      r.statement_id,
      {
        statementId: r.statement_id,
        policyId: r.policy_id,
        start: { readingMetres: r.start_metres, at: r.start_at },
        end: { readingMetres: r.end_metres, at: r.end_at },
        gpsMetres: r.gps_metres,
      },
    ]),
  );
}

/** Each policy's readings within ±3 days of its period, in one query for all; absent: none. */
async function readingsAround(
  trx: Executor,
  statements: readonly OdometerStatement[],
): Promise<Map<string, Reading[]>> {
  const result = await sql<{ policy_id: string; reading_metres: number; time: Date }>`
    select r.policy_id, r.reading_metres, r.time
    from json_to_recordset(${jsonRows(
      statements.map((s) => ({
        policy_id: s.policyId,
        from_at: new Date(s.periodStartAt.getTime() - WINDOW_MS),
        to_at: new Date(s.periodEndAt.getTime() + WINDOW_MS),
      })),
    )}::json) as c(policy_id uuid, from_at timestamptz, to_at timestamptz)
    join odometer_readings r on r.policy_id = c.policy_id and r.time >= c.from_at and r.time <= c.to_at
    order by r.policy_id, r.time`.execute(trx);
  const byPolicy = new Map<string, Reading[]>();
  for (const r of result.rows) {
    const list = byPolicy.get(r.policy_id) ?? [];
    list.push({ readingMetres: r.reading_metres, at: r.time });
    byPolicy.set(r.policy_id, list);
  }
  return byPolicy;
}

/** The end reading of each policy's previous statement, where that statement kept a comparison. */
async function previousEnds(
  trx: Executor,
  statements: readonly OdometerStatement[],
): Promise<Map<string, Reading>> {
  const after = statements.filter((s) => s.afterAt !== null);
  if (after.length === 0) return new Map();
  const result = await sql<{ policy_id: string; end_metres: number; end_at: Date }>`
    select s.policy_id, o.end_metres, o.end_at
    from unnest(${after.map((s) => s.policyId)}::uuid[], ${after.map((s) => s.afterAt)}::timestamptz[])
      as c(policy_id, end_at)
    join statements s on s.policy_id = c.policy_id and s.period_end_at = c.end_at
    join statement_odometers o on o.statement_id = s.id`.execute(trx);
  return new Map(result.rows.map((r) => [r.policy_id, { readingMetres: r.end_metres, at: r.end_at }]));
}

/** The product rules in force at each statement's end, by statement id (absent: no product). */
async function rulesAtEnd(
  trx: Executor,
  statements: readonly OdometerStatement[],
): Promise<Map<string, ProductRules>> {
  const byTenant = new Map<string, OdometerStatement[]>();
  for (const s of statements) {
    if (s.productReference === null) continue;
    const key = `${s.companyId}/${s.environment}`;
    byTenant.set(key, [...(byTenant.get(key) ?? []), s]);
  }
  const rules = new Map<string, ProductRules>();
  for (const group of byTenant.values()) {
    const first = group[0];
    if (first === undefined) continue;
    const tenant = asTenant(first.companyId, first.environment as DataEnvironment);
    const products = await findProducts(trx, tenant, [
      ...new Set(group.flatMap((s) => (s.productReference === null ? [] : [s.productReference]))),
    ]);
    const byReference = new Map(products.map((p) => [p.reference, p]));
    for (const s of group) {
      const product = byReference.get(s.productReference ?? '');
      const version = product === undefined ? undefined : productVersionAt(product.versions, s.periodEndAt);
      if (version !== undefined) rules.set(s.statementId, version.rules);
    }
  }
  return rules;
}

/**
 * The GPS distance between each pair of readings: the policy's journeys that are not void, other than
 * reconciliations, starting in [start reading, end reading), one query for all.
 */
async function gpsDistances(
  trx: Executor,
  spans: ReadonlyArray<{ key: string; policyId: string; start: Reading; end: Reading }>,
): Promise<Map<string, number>> {
  const result = await sql<{ key: string; metres: string }>`
    select c.key, coalesce(sum(j.distance_metres), 0)::text as metres
    from unnest(${spans.map((s) => s.key)}::text[], ${spans.map((s) => s.policyId)}::uuid[],
      ${spans.map((s) => s.start.at)}::timestamptz[], ${spans.map((s) => s.end.at)}::timestamptz[])
      as c(key, policy_id, from_at, to_at)
    left join journeys j on j.policy_id = c.policy_id and j.start_at >= c.from_at and j.start_at < c.to_at
      and not j.is_void and j.source <> 'odometer_reconciliation'
    group by c.key`.execute(trx);
  return new Map(result.rows.map((r) => [r.key, Number(r.metres)]));
}
