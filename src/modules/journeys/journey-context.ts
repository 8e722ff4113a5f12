import type { Clock } from '../../platform/clock.ts';
import type { ReverseGeocoder } from '../../integrations/geocoding/index.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import type { Prepared } from '../../platform/db/database.ts';
import type { JourneyRecord } from './journey-repository.ts';

/*
 * What the journey service's use cases share. The families are a client's journeys, one or a batch
 * (journey-ingestion-service.ts), reads (journey-read-service.ts), voids (journey-void-service.ts) and
 * the journeys the service makes itself (own-journey-service.ts); journey-service.ts composes them.
 */

/** What `createJourneyService` is given. */
export interface JourneyServiceDeps {
  db: Executor;
  prepared: Prepared;
  clock: Clock;
  geocoder: ReverseGeocoder;
  /**
   * Runs after a journey is stored (or found stored under its `provider_reference`), outside its
   * transaction: usage alerts. It must not throw; what it does is condition-based, so a crash between
   * the two is made good by the policy's next journey.
   */
  afterStored?: (tenant: Tenant, journey: JourneyRecord) => Promise<void>;
}

/** A journey reference (and a cursor's journey id) is a uuid. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
