import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import type { JourneyServiceDeps } from './journey-context.ts';
import { createJourneyIngestion, type BatchItem, type BatchOutcome } from './journey-ingestion-service.ts';
import { createJourneyReads } from './journey-read-service.ts';
import type { JourneyRecord } from './journey-repository.ts';
import type { Journey, JourneyInput } from './journey-schemas.ts';
import { voidJourney } from './journey-void-service.ts';
import { journeyView } from './journey-views.ts';
import {
  replaceOwnJourneys,
  storeOwnJourneys,
  type RefusedJourney,
  type ServiceJourney,
} from './own-journey-service.ts';

export type { BatchItem, BatchOutcome } from './journey-ingestion-service.ts';
export type { RefusedJourney, ServiceJourney } from './own-journey-service.ts';

/**
 * Journeys: ingestion (route → distance, places, premium), reads for clients and policyholders, voids, and
 * the journeys the service makes itself. The database keeps a policy's journeys from overlapping
 * (`store_journey` checks under the policy's row lock) and a provider reference from being stored twice (a
 * unique key), in the one statement that stores the journey, so ingestion takes no lock of its own and
 * checks nothing first.
 */
export function createJourneyService(deps: JourneyServiceDeps) {
  const { clock, geocoder } = deps;
  const ingestion = createJourneyIngestion(deps);

  return {
    /**
     * POST /journeys: measures the route on the WGS84 ellipsoid, names its ends, rates it on the version in
     * force at its start and stores it (created). The same `provider_reference` again for the policy gives
     * the stored journey (not created). Rejections: 422 (route, times, outside cover), 404 (policy), 409
     * (cancelled or lapsed, overlap).
     */
    async create(tenant: Tenant, input: JourneyInput): Promise<{ created: boolean; journey: Journey }> {
      const result = await ingestion.create(tenant, input);
      return { created: result.created, journey: journeyView(result.journey) };
    },

    /**
     * POST /journeys/batch: each item on its own, in order, each in its own transaction, so one item's
     * failure never undoes another's success. Unexpected failures are reported on the item (5xx) with the
     * cause for the caller to log.
     */
    createBatch: (tenant: Tenant, items: readonly BatchItem[]): Promise<BatchOutcome[]> =>
      ingestion.createBatch(tenant, items),

    ...createJourneyReads(deps.db),

    /**
     * POST /journeys/:journey_reference/void: marks the journey void with an audit record and a
     * `journey.voided` event saying whether it had been billed (then the next statement credits it).
     * Voiding a void journey changes nothing and answers with it as it is.
     */
    void: (
      tenant: Tenant,
      reference: string,
      input: { reason: string },
      context: { requestId?: string } = {},
    ): Promise<Journey> => voidJourney(deps, tenant, reference, input, context),

    /**
     * The service's own journeys for one policy, in one transaction: voids `voids` (credited by the next
     * statement when billed, as any void), then stores `store`, each rated on the version in force at its
     * start, as a client's journey is. One that cannot be stored (outside cover, overlapping another, a
     * route that does not decode) is left out and reported; one stored already under its provider reference
     * is answered as stored. VERSIONS_CHANGED (a policy change raced this) fails the whole with CONFLICT, to
     * be tried again. `within` runs in the same transaction once they are stored.
     */
    replace: (
      tenant: Tenant,
      policy: { readonly id: string; readonly reference: string },
      change: {
        readonly voids: ReadonlyArray<{ readonly id: string; readonly reason: string }>;
        readonly store: readonly ServiceJourney[];
        readonly within?: (trx: Executor, stored: readonly JourneyRecord[]) => Promise<void>;
      },
    ): Promise<{ stored: JourneyRecord[]; voided: JourneyRecord[]; refused: RefusedJourney[] }> =>
      replaceOwnJourneys(deps, tenant, policy, change),

    /**
     * The service's own journeys for one policy in the caller's transaction, which may hold the policy's
     * row already (a statement being written stores its odometer reconciliation so, before claiming the
     * period's journeys). Rated and refused as in `replace`; `afterStored` is not run (the caller's
     * transaction has not committed; usage alerts catch up with the policy's next journey).
     */
    storeIn: (
      trx: Executor,
      tenant: Tenant,
      policy: { readonly id: string; readonly reference: string },
      items: readonly ServiceJourney[],
      now: Date = clock.now(),
    ): Promise<{ stored: JourneyRecord[]; refused: RefusedJourney[] }> =>
      storeOwnJourneys(geocoder, trx, tenant, policy, items, now),
  };
}

export type JourneyService = ReturnType<typeof createJourneyService>;
