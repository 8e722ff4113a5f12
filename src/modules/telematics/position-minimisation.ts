/**
 * Data minimisation of raw positions (EDPB Guidelines 01/2020 on connected vehicles, §2.1.1 and §2.1.3:
 * process only what the purpose needs, and prefer data processed to raw data kept). A company that sets
 * it keeps each trip's journey (its coarsened route), driving events and score, and the trip's raw
 * positions are deleted in the transaction that stores and scores it. Positions arriving late inside a
 * minimised trip's span are dropped: there is nothing left to re-cut the trip from, and a fragment must
 * not replace the trip that was scored whole. The positions of a crash's file (60 s before it to 30 s
 * after) are kept for the claim it opens.
 */
import { sql } from 'kysely';
import type { Executor } from '../../schema.ts';

/** Whether the company deletes its trips' raw positions once they are cut and scored (default: no). */
export async function minimisesPositions(db: Executor, companyId: string): Promise<boolean> {
  const row = await db
    .selectFrom('telematics_settings')
    .select('minimise_positions')
    .where('company_id', '=', companyId)
    .executeTakeFirst();
  return row?.minimise_positions ?? false;
}

/** Sets the company's choice; returns it. */
export async function setMinimisesPositions(
  db: Executor,
  companyId: string,
  minimise: boolean,
  at: Date,
): Promise<boolean> {
  await db
    .insertInto('telematics_settings')
    .values({ company_id: companyId, minimise_positions: minimise, updated_at: at })
    .onConflict((oc) =>
      oc.constraint('telematics_settings_pkey').doUpdateSet({ minimise_positions: minimise, updated_at: at }),
    )
    .execute();
  return minimise;
}

/**
 * Deletes the raw positions of trips just stored (each `[startAt, endAt]` on the device), and records their
 * spans, in the caller's transaction (the one storing and scoring them). Idempotent.
 */
export async function minimiseTrips(
  trx: Executor,
  deviceRowId: string,
  trips: ReadonlyArray<{ readonly startAt: Date; readonly endAt: Date }>,
  at: Date,
): Promise<void> {
  for (const trip of trips) {
    const deleted = await trx
      .deleteFrom('positions')
      .where('device_id', '=', deviceRowId)
      .where('time', '>=', trip.startAt)
      .where('time', '<=', trip.endAt)
      // NOTE: a crash's file (60 s before it to 30 s after) is kept for the claim it opens.
      .where(
        sql<boolean>`not exists (
          select 1 from crash_events c
          where c.device_id = ${deviceRowId}
            and positions.time between c.occurred_at - interval '60 seconds' and c.occurred_at + interval '30 seconds')`,
      )
      .executeTakeFirst();
    await trx
      .insertInto('minimised_trips')
      .values({
        device_id: deviceRowId,
        start_at: trip.startAt,
        end_at: trip.endAt,
        positions_deleted: Number(deleted.numDeletedRows),
        minimised_at: at,
      })
      .onConflict((oc) => oc.constraint('minimised_trips_pkey').doNothing())
      .execute();
  }
}

/** The minimised trips' spans of a device ending at or after `from`. */
export async function listMinimisedSpans(
  db: Executor,
  deviceRowId: string,
  from: Date,
): Promise<Array<{ startMs: number; endMs: number }>> {
  const rows = await db
    .selectFrom('minimised_trips')
    .select(['start_at', 'end_at'])
    .where('device_id', '=', deviceRowId)
    .where('end_at', '>=', from)
    .execute();
  return rows.map((r) => ({ startMs: r.start_at.getTime(), endMs: r.end_at.getTime() }));
}

/** Deletes late positions of a device that fell inside minimised spans; returns how many. */
export async function dropLatePositions(
  db: Executor,
  deviceRowId: string,
  spans: ReadonlyArray<{ startMs: number; endMs: number }>,
): Promise<number> {
  let dropped = 0;
  for (const span of spans) {
    const deleted = await db
      .deleteFrom('positions')
      .where('device_id', '=', deviceRowId)
      .where('time', '>=', new Date(span.startMs))
      .where('time', '<=', new Date(span.endMs))
      .executeTakeFirst();
    dropped += Number(deleted.numDeletedRows);
  }
  return dropped;
}

/** Deletes the spans of devices ever bound to some policies (their policyholder's erasure). */
export async function eraseMinimisedSpans(trx: Executor, policyIds: readonly string[]): Promise<void> {
  if (policyIds.length === 0) return;
  await trx
    .deleteFrom('minimised_trips')
    .where('device_id', 'in', (eb) =>
      eb.selectFrom('device_bindings').select('device_id').where('policy_id', 'in', policyIds),
    )
    .execute();
}
