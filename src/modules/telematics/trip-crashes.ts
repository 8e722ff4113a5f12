/**
 * Crashes detected in the trips cut from a device's positions: each trip's kept fixes go through the pure
 * rule `detectCrashes` with the thresholds of the policy's product version in force at the trip's start,
 * and each crash found is stored as a device's report is (`insertCrash`), in the transaction that stores
 * the trip. So the trigger that keeps one crash a device in any 2 minutes makes a re-cut trip's crash the
 * crash already stored, and the trigger that records the first notice of loss owed opens its draft claim.
 */
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { policyUsageTermsQuery } from '../policies/index.ts';
import { findProducts, productVersionAt, type ProductRecord } from '../products/index.ts';
import { insertCrash } from './crash-repository.ts';
import { crashThresholds, detectCrashes } from './rules/crash-detection.ts';
import type { PlannedTrip } from './rules/trip-journeys.ts';

/** What the crash rows name: the device's row and the policy the trips' positions were assigned to. */
export interface TripCrashOwner {
  readonly deviceRowId: string;
  readonly policyId: string;
  readonly policyReference: string;
}

/**
 * Detects crashes in `trips` and stores each (source `detected`) in `trx`; how many were stored (a crash
 * within 2 minutes of one the device already has is that crash, not counted).
 */
export async function recordTripCrashes(
  trx: Executor,
  tenant: Tenant,
  owner: TripCrashOwner,
  trips: readonly PlannedTrip[],
  receivedAt: Date,
): Promise<number> {
  if (trips.length === 0) return 0;
  const policy = await policyUsageTermsQuery(trx).where('p.id', '=', owner.policyId).executeTakeFirst();
  let product: ProductRecord | undefined;
  if (policy?.product_reference != null)
    [product] = await findProducts(trx, tenant, [policy.product_reference]);
  let stored = 0;
  for (const trip of trips) {
    const version = product === undefined ? undefined : productVersionAt(product.versions, trip.startAt);
    for (const crash of detectCrashes(trip.fixes, crashThresholds(version?.rules.crash_detection))) {
      const id = await insertCrash(trx, {
        companyId: tenant.companyId,
        environment: tenant.environment,
        deviceRowId: owner.deviceRowId,
        policyId: owner.policyId,
        policyReference: owner.policyReference,
        source: 'detected',
        occurredAt: crash.at,
        lat: crash.lat,
        lon: crash.lon,
        // NOTE: the speed of the crash file is the speed at impact, the last one before the drop.
        speedKmh: crash.speedBeforeKmh,
        // A position-derived crash has no accelerometer: its force is the deceleration the fixes show,
        // and its delta-v the fall in speed they show.
        peakAccelerationG: crash.decelerationG,
        deltaVKmh: crash.dropKmh,
        airbagDeployed: null,
        receivedAt,
      });
      if (id !== undefined) stored++;
    }
  }
  return stored;
}
