/**
 * A product's distances (caps, free distance, budgets) in whole metres, the unit journeys are measured
 * in. Pure. Through exact decimals, never binary floats (0.1 km is 100 m, not 100.00000000000001).
 */
import { Decimal } from '../../../platform/money.ts';

export type DistanceUnit = 'mile' | 'km';

/** The international mile and the kilometre, exactly. */
export const METRES_PER = { mile: '1609.344', km: '1000' } as const satisfies Record<DistanceUnit, string>;

const exactMetres = (distance: number | string, unit: DistanceUnit): Decimal =>
  new Decimal(String(distance)).times(METRES_PER[unit]);

/**
 * A limit (a cap, a budget) as whole metres, rounded down: journey distances are whole metres, so a
 * distance exceeds the exact limit exactly when it exceeds this (241,402 m is over 150 miles =
 * 241,401.6 m; 241,401 m is not), and a capped distance never exceeds the exact cap.
 */
export function capMetres(distance: number | string, unit: DistanceUnit): number {
  return exactMetres(distance, unit).floor().toNumber();
}

/** An allowance (free distance) as whole metres, rounded up: in the policyholder's favour. */
export function freeMetres(distance: number | string, unit: DistanceUnit): number {
  return exactMetres(distance, unit).ceil().toNumber();
}
