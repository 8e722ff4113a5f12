/** Odometer readings of policies, one a policy and second. */
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import type { OdometerSource } from './telematics-repository.ts';

export interface OdometerReadingRecord {
  readonly id: string;
  readonly policyId: string;
  readonly deviceId: string | null;
  readonly readingMetres: number;
  readonly time: Date;
  readonly source: OdometerSource;
  readonly createdAt: Date;
}

const readingColumns = [
  'id',
  'policy_id',
  'device_id',
  'reading_metres',
  'time',
  'source',
  'created_at',
] as const;

const toReading = (r: {
  id: string;
  policy_id: string;
  device_id: string | null;
  reading_metres: number;
  time: Date;
  source: OdometerSource;
  created_at: Date;
}): OdometerReadingRecord => ({
  id: r.id,
  policyId: r.policy_id,
  deviceId: r.device_id,
  readingMetres: r.reading_metres,
  time: r.time,
  source: r.source,
  createdAt: r.created_at,
});

/** Stores a policy's reading; undefined when the policy has one for that second already. */
export async function insertOdometerReading(
  db: Executor,
  tenant: Tenant,
  values: {
    policyId: string;
    deviceId: string | null;
    readingMetres: number;
    time: Date;
    source: OdometerSource;
    at: Date;
  },
): Promise<OdometerReadingRecord | undefined> {
  const row = await db
    .insertInto('odometer_readings')
    .values({
      company_id: tenant.companyId,
      environment: tenant.environment,
      policy_id: values.policyId,
      device_id: values.deviceId,
      reading_metres: values.readingMetres,
      time: values.time,
      source: values.source,
      created_at: values.at,
    })
    .onConflict((oc) => oc.constraint('odometer_readings_policy_time_key').doNothing())
    .returning(readingColumns)
    .executeTakeFirst();
  return row === undefined ? undefined : toReading(row);
}

/** The policy's reading at a second, or the nearest before and after it (either may be absent). */
export async function readingsNear(
  db: Executor,
  policyId: string,
  time: Date,
): Promise<{
  at: OdometerReadingRecord | undefined;
  before: OdometerReadingRecord | undefined;
  after: OdometerReadingRecord | undefined;
}> {
  const of = () =>
    db.selectFrom('odometer_readings').select(readingColumns).where('policy_id', '=', policyId);
  const at = await of().where('time', '=', time).executeTakeFirst();
  const before = await of().where('time', '<', time).orderBy('time', 'desc').limit(1).executeTakeFirst();
  const after = await of().where('time', '>', time).orderBy('time').limit(1).executeTakeFirst();
  return {
    at: at === undefined ? undefined : toReading(at),
    before: before === undefined ? undefined : toReading(before),
    after: after === undefined ? undefined : toReading(after),
  };
}

/** A policy's readings by time, after `after` (exclusive), at most `limit`. */
export async function listOdometerReadings(
  db: Executor,
  policyId: string,
  page: { after?: Date | undefined; limit: number },
): Promise<OdometerReadingRecord[]> {
  let query = db
    .selectFrom('odometer_readings')
    .select(readingColumns)
    .where('policy_id', '=', policyId)
    .orderBy('time')
    .limit(page.limit);
  if (page.after !== undefined) query = query.where('time', '>', page.after);
  return (await query.execute()).map(toReading);
}
