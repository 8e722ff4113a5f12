import { sql, type Kysely } from 'kysely';

/**
 * `devices.offline_after_seconds`: the silence after which the worker found the device offline, kept
 * with `offline_since` (null while online). A batch of positions from an offline device is stored by the
 * one statement an online device's is, which returns this, so the transaction that brings the device
 * online runs only when the batch can end its silence; data from days ago, which cannot, costs no more
 * round trips than an online device's. Owned by the telematics module.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table devices
      add column offline_after_seconds integer,
      add constraint devices_offline_after_seconds_check check (offline_after_seconds > 0)`.execute(db);
}
