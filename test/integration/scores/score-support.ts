import assert from 'node:assert/strict';
import {
  harshBrake,
  seeded,
  smoothDriving,
  Vehicle,
} from '../../../src/modules/scores/rules/trace-generator.ts';

/**
 * A 1 Hz drive of about 12 minutes (`smoothSeconds` of smooth driving, then each brake's 94 s) from `startIso`
 * with `brakes` harsh brakes, parked with the ignition off, as `POST /telematics/positions` takes it.
 */
export function trace(startIso: string, brakes: number, seed = 7, smoothSeconds = 240) {
  const random = seeded(seed);
  const v = new Vehicle(
    { timeS: Date.parse(startIso) / 1000, lat: 51.5, lon: -0.14, headingDegrees: 10 },
    random,
    { positionNoiseMetres: 3, speedNoiseMps: 0.1 },
  );
  smoothDriving(v, random, smoothSeconds);
  for (let b = 0; b < brakes; b++) smoothDriving(harshBrake(v, 5), random, 60);
  v.reach(0, 1.5);
  const fixes = v.fixes.map((f) => ({
    time: f.timeS,
    lat: Number(f.lat.toFixed(6)),
    lon: Number(f.lon.toFixed(6)),
    speed_kmh: Number((f.speedKmh ?? 0).toFixed(2)),
    ignition: true,
  }));
  const last = fixes.at(-1);
  assert.ok(last !== undefined);
  fixes.push({ ...last, time: last.time + 1, speed_kmh: 0, ignition: false });
  return fixes;
}
