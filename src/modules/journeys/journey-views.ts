import { fromPence } from '../../platform/money.ts';
import type { JourneyEvent, JourneyRecord, NewJourney } from './journey-repository.ts';
import type { Journey } from './journey-schemas.ts';
import { distanceUnitsLabel, totalKilometres, totalMiles } from './rules/index.ts';

const seconds = (at: Date): number => Math.floor(at.getTime() / 1000);

/** The journey as the interface shows it. */
export function journeyView(journey: JourneyRecord): Journey {
  return {
    journey_reference: journey.id,
    provider_reference: journey.providerReference,
    policy_reference: journey.policyReference,
    policy_version_reference: journey.policyVersionId,
    route: journey.route,
    precision: journey.precision,
    distance_in_metres: journey.distanceMetres,
    distance_units: distanceUnitsLabel(journey.distanceUnit),
    total_miles: totalMiles(journey.distanceMetres),
    total_kms: totalKilometres(journey.distanceMetres),
    duration_in_seconds: seconds(journey.endAt) - seconds(journey.startAt),
    usage_rate: Number(journey.usageRate),
    usage_premium: fromPence(journey.usagePremiumPence),
    start_lat: journey.start.lat,
    start_long: journey.start.lng,
    end_lat: journey.end.lat,
    end_long: journey.end.lng,
    start_at: seconds(journey.startAt),
    end_at: seconds(journey.endAt),
    start_name: journey.start.name,
    end_name: journey.end.name,
    start_postcode: journey.start.postcode,
    end_postcode: journey.end.postcode,
    is_void: journey.isVoid,
    void_reason: journey.voidReason,
    voided_at: journey.voidedAt?.toISOString() ?? null,
    statement_version_reference: journey.statementVersionId,
    created_at: journey.createdAt.toISOString(),
    source: journey.source,
    device_id: journey.deviceId,
    is_estimated: journey.source === 'estimate',
    gap_distance_in_metres: journey.gapDistanceMetres,
  };
}

/** The `journey.created` event stored with a journey (a client's or the service's own). */
export function journeyCreatedEvent(journey: NewJourney & { readonly id: string }): JourneyEvent {
  return {
    type: 'journey.created',
    data: {
      journey_reference: journey.id,
      provider_reference: journey.providerReference,
      policy_reference: journey.policyReference,
      policy_version_reference: journey.policyVersionId,
      start_at: journey.startAt.toISOString(),
      end_at: journey.endAt.toISOString(),
      distance_in_metres: journey.distanceMetres,
      usage_premium: fromPence(journey.usagePremiumPence),
      source: journey.source,
      device_id: journey.deviceId,
    },
  };
}
