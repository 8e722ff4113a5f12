/**
 * Synthetic 1 Hz traces for the scores' tests and benchmark: a vehicle integrated second by second (speed,
 * heading, position), with seeded Gaussian noise on the positions and speeds it reports. Pure: the random
 * source is passed in.
 */
import type { ScoreFix } from './driving-events.ts';

const RAD = Math.PI / 180;
const METRES_PER_DEGREE = 6_371_008.8 * RAD;

export interface TraceOptions {
  /** Standard deviation of the reported position, metres on each axis. */
  readonly positionNoiseMetres?: number;
  /** Standard deviation of the reported speed, m/s. */
  readonly speedNoiseMps?: number;
  readonly reportSpeed?: boolean;
  readonly reportHeading?: boolean;
}

/** A seeded uniform source in [0, 1) (mulberry32). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A vehicle that reports a fix a second. */
export class Vehicle {
  readonly fixes: ScoreFix[] = [];
  private lat: number;
  private lon: number;
  private headingDegrees: number;
  private speedMps = 0;
  private timeS: number;
  private readonly gaussian: () => number;
  private readonly random: () => number;
  private readonly options: TraceOptions;

  constructor(
    start: { timeS: number; lat: number; lon: number; headingDegrees: number },
    random: () => number,
    options: TraceOptions = {},
  ) {
    this.random = random;
    this.options = options;
    this.lat = start.lat;
    this.lon = start.lon;
    this.headingDegrees = start.headingDegrees;
    this.timeS = start.timeS;
    this.gaussian = () => {
      const u = 1 - this.random();
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.random());
    };
    this.report();
  }

  get speed(): number {
    return this.speedMps;
  }

  get time(): number {
    return this.timeS;
  }

  /** `seconds` seconds changing speed by `accelerationMps2` (never below 0) and turning `yawDegreesPerS`. */
  drive(seconds: number, accelerationMps2 = 0, yawDegreesPerS = 0): this {
    for (let s = 0; s < seconds; s++) {
      const before = this.speedMps;
      this.speedMps = Math.max(0, this.speedMps + accelerationMps2);
      this.headingDegrees += yawDegreesPerS;
      const metres = (before + this.speedMps) / 2;
      this.lat += (metres * Math.cos(this.headingDegrees * RAD)) / METRES_PER_DEGREE;
      this.lon +=
        (metres * Math.sin(this.headingDegrees * RAD)) / (METRES_PER_DEGREE * Math.cos(this.lat * RAD));
      this.timeS += 1;
      this.report();
    }
    return this;
  }

  /** Changes speed to `targetMps` at `rateMps2` (positive), a second at a time. */
  reach(targetMps: number, rateMps2: number, yawDegreesPerS = 0): this {
    while (Math.abs(this.speedMps - targetMps) > 1e-9) {
      const step = Math.min(rateMps2, Math.abs(targetMps - this.speedMps));
      this.drive(1, targetMps > this.speedMps ? step : -step, yawDegreesPerS);
    }
    return this;
  }

  /** Lets `seconds` pass without a fix (the device asleep, the vehicle parked). */
  pause(seconds: number): this {
    this.speedMps = 0;
    this.timeS += seconds;
    return this;
  }

  /** Stands still for `seconds`, reporting as it does. */
  park(seconds: number): this {
    return this.reach(0, 1.5).drive(seconds);
  }

  private report(): void {
    const noise = this.options.positionNoiseMetres ?? 0;
    const north = noise * this.gaussian();
    const east = noise * this.gaussian();
    const speedNoise = this.options.speedNoiseMps ?? 0;
    const fix: {
      timeS: number;
      lat: number;
      lon: number;
      speedKmh?: number;
      heading?: number;
    } = {
      timeS: this.timeS,
      lat: this.lat + north / METRES_PER_DEGREE,
      lon: this.lon + east / (METRES_PER_DEGREE * Math.cos(this.lat * RAD)),
    };
    if (this.options.reportSpeed !== false)
      fix.speedKmh = Math.max(0, this.speedMps + speedNoise * this.gaussian()) * 3.6;
    if (this.options.reportHeading === true) fix.heading = ((this.headingDegrees % 360) + 360) % 360;
    this.fixes.push(fix);
  }
}

/**
 * Smooth driving for about `seconds`: speeds between 8 and 30 m/s changed at no more than 1 m/s², bends
 * of at most 2°/s (under 1.1 m/s² sideways), and now and then a gentle stop at 1.5 m/s².
 */
export function smoothDriving(vehicle: Vehicle, random: () => number, seconds: number): Vehicle {
  const end = vehicle.time + seconds;
  while (vehicle.time < end) {
    const roll = random();
    if (roll < 0.1) vehicle.reach(0, 1.5).drive(5 + Math.floor(random() * 40));
    else
      vehicle
        .reach(8 + random() * 22, 0.3 + random() * 0.7, (random() - 0.5) * 4)
        .drive(10 + Math.floor(random() * 60), 0, (random() - 0.5) * 4);
  }
  return vehicle;
}

/** A harsh brake: from at least 20 m/s, `rateMps2` for 4 s (5 s when `long`), then smooth for 90 s. */
export function harshBrake(vehicle: Vehicle, rateMps2: number, long = false): Vehicle {
  vehicle.reach(Math.max(vehicle.speed, 25), 1).drive(10);
  vehicle.drive(long ? 5 : 4, -rateMps2);
  return vehicle.drive(20).reach(20, 0.8).drive(60);
}
