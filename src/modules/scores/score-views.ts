import { STANDARD_GRAVITY_MPS2 } from './rules/driving-events.ts';
import type { StoredEvent } from './score-repository.ts';
import type { DrivingEventView } from './score-schemas.ts';

const KMH_PER_MPH = 1.609344;

/** A stored event as the API shows it: mph to 1 decimal, g to 2. */
export function drivingEventView(e: StoredEvent): DrivingEventView {
  return {
    event_reference: e.id,
    kind: e.kind,
    occurred_at: e.occurredAt.toISOString(),
    lat: e.lat,
    lng: e.lng,
    speed_mph: Math.round((e.speedKmh / KMH_PER_MPH) * 10) / 10,
    acceleration_g:
      e.accelerationMps2 === null
        ? null
        : Math.round((e.accelerationMps2 / STANDARD_GRAVITY_MPS2) * 100) / 100,
    duration_seconds: e.durationSeconds,
    dispute: e.dispute === null ? null : { dispute_reference: e.dispute.id, state: e.dispute.state },
  };
}
