import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';
import { coarsenedRoute, routeRetentionCutoff } from './rules/retention.ts';

export interface RetentionDeps {
  readonly db: Executor;
  /** ROUTE_RETENTION_DAYS: days after a journey's statement was written that its detailed route is kept. */
  readonly routeRetentionDays: number;
  /** Journeys coarsened per transaction. */
  readonly batchSize?: number;
  /** Batches per run at most: a run stays short; a backlog drains over the next runs. */
  readonly maxBatchesPerRun?: number;
}

interface RouteRow {
  id: string;
  route: string;
  route_precision: number;
  start_lat: number | null;
  start_lng: number | null;
  end_lat: number | null;
  end_lng: number | null;
}

const pointOf = (lat: number | null, lng: number | null) =>
  lat === null || lng === null ? undefined : { lat, lng };

/** Retention of location data (issue 21): see docs/data-protection.md. */
export function createRetentionService(deps: RetentionDeps) {
  const batchSize = deps.batchSize ?? 1000;
  const maxBatches = deps.maxBatchesPerRun ?? 50;

  /** One batch: journeys billed before `cutoff` with more than 2 points, coarsened. Returns how many. */
  async function coarsenBatch(cutoff: Date): Promise<number> {
    return deps.db.transaction().execute(async (trx) => {
      // NOTE: skip locked, so a second worker running the same task at once takes other journeys, and
      // a journey being voided or billed right now is simply taken next time.
      // A journey is billed by the statement that claimed it late (`statement_version_id`), else by
      // the first statement of its policy whose period ends at or after its start (periods follow one
      // another; statements are written in order, so any such statement written before the cutoff
      // means the first one was). A late upload not yet claimed is not billed yet. Voided journeys in
      // a billed period go the same way: the period is over either way.
      const rows = await sql<RouteRow>`
        select j.id, j.route, j.route_precision, j.start_lat, j.start_lng, j.end_lat, j.end_lng
        from journeys j
        where j.point_count > 2 and j.start_at < ${cutoff}
          and case when j.statement_version_id is not null then exists (
                select 1 from statements s where s.id = j.statement_version_id and s.created_at < ${cutoff})
              else not j.late and exists (
                select 1 from statements s
                where s.policy_id = j.policy_id and s.period_end_at >= j.start_at and s.created_at < ${cutoff})
              end
        limit ${batchSize}
        for update of j skip locked`.execute(trx);
      let done = 0;
      for (const row of rows.rows) {
        const route = coarsenedRoute({
          route: row.route,
          precision: row.route_precision === 6 ? 6 : 5,
          start: pointOf(row.start_lat, row.start_lng),
          end: pointOf(row.end_lat, row.end_lng),
        });
        // An unreadable route (none is stored, but the job must not stop on one) loses its points.
        await sql`
          update journeys set route = ${route ?? ''}, point_count = ${route === undefined ? 0 : 2}
          where id = ${row.id}`.execute(trx);
        done += 1;
      }
      return done;
    });
  }

  /**
   * Routes of journeys whose statement was written more than ROUTE_RETENTION_DAYS before `now`
   * become the 2-point line from their start to their end (point_count 2), in batches of `batchSize`
   * journeys, each its own transaction, at most `maxBatchesPerRun` per run. Idempotent: a coarsened
   * journey has 2 points and is not selected again. Returns the journeys coarsened.
   */
  async function applyRouteRetention(now: Date): Promise<number> {
    const cutoff = routeRetentionCutoff(now, deps.routeRetentionDays);
    let total = 0;
    for (let batch = 0; batch < maxBatches; batch += 1) {
      const done = await coarsenBatch(cutoff);
      total += done;
      if (done < batchSize) break;
    }
    return total;
  }

  return { applyRouteRetention };
}

export type RetentionService = ReturnType<typeof createRetentionService>;
