/**
 * The offline reverse geocoder: load time, memory and lookups per second.
 *
 *   npx node bench/geocoder.ts [seconds per lookup loop, default 2]
 *
 * In a fresh process: times `warm()` (the whole lazy load) while watching the event loop's delay, measures
 * memory before and after (after full garbage collections), then times lookups on one core at points where
 * journeys start and end (within ~300 m of a random live postcode) and at points anywhere in Great Britain's
 * box (sea included, where the nearest-postcode search ranges farther).
 */
import fs from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createOfflineGeocoder, DEFAULT_DATA_DIR, type Place } from '../src/integrations/geocoding/index.ts';
import { readPostcodeFile } from '../src/integrations/geocoding/postcode-file.ts';
import { seededRandom } from './support.ts';

const secondsPerLoop = Number(process.argv[2] ?? 2);

v8.setFlagsFromString('--expose-gc');
const collect = vm.runInNewContext('gc') as () => void;
const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

function settledMemory(): NodeJS.MemoryUsage {
  collect();
  collect();
  return process.memoryUsage();
}

await new Promise((resolve) => setTimeout(resolve, 100));
const before = settledMemory();
const geocoder = createOfflineGeocoder();
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const started = performance.now();
await geocoder.warm();
const loadMilliseconds = performance.now() - started;
delay.disable();
const after = settledMemory();

console.log(
  `load: ${loadMilliseconds.toFixed(0)} ms; longest event-loop stall meanwhile ${(delay.max / 1e6).toFixed(1)} ms`,
);
console.log(
  `memory: array buffers +${megabytes(after.arrayBuffers - before.arrayBuffers)}, heap used +${megabytes(after.heapUsed - before.heapUsed)}, RSS +${megabytes(after.rss - before.rss)} (RSS ${megabytes(after.rss)})`,
);

const random = seededRandom(20261121);
const { index } = readPostcodeFile(
  fs.readFileSync(path.join(DEFAULT_DATA_DIR, 'uk-postcodes/gb-postcodes.kd')),
);
const nearPostcodes: [number, number][] = Array.from({ length: 20_000 }, () => {
  const k = Math.floor(random() * index.numItems);
  return [
    (index.coords[2 * k + 1] ?? 0) + (random() - 0.5) * 0.005,
    (index.coords[2 * k] ?? 0) + (random() - 0.5) * 0.008,
  ];
});
const anywhere: [number, number][] = Array.from({ length: 20_000 }, () => [
  49.9 + random() * 8.8,
  -8.2 + random() * 10,
]);

function lookupsPerSecond(points: readonly [number, number][]): {
  perSecond: number;
  withPostcode: number;
  named: number;
} {
  let withPostcode = 0;
  let named = 0;
  for (const [lat, lng] of points.slice(0, 2000)) geocoder.lookup(lat, lng) as Place; // warm the JIT
  let lookups = 0;
  const loopStarted = performance.now();
  while (performance.now() - loopStarted < secondsPerLoop * 1000) {
    for (const [lat, lng] of points) {
      const place = geocoder.lookup(lat, lng) as Place;
      if (place.postcode !== null) withPostcode++;
      if (place.name !== null) named++;
    }
    lookups += points.length;
  }
  const perSecond = lookups / ((performance.now() - loopStarted) / 1000);
  return { perSecond, withPostcode: withPostcode / lookups, named: named / lookups };
}

const near = lookupsPerSecond(nearPostcodes);
const box = lookupsPerSecond(anywhere);
function show(label: string, result: ReturnType<typeof lookupsPerSecond>): void {
  console.log(
    `${label}: ${Math.round(result.perSecond).toLocaleString('en-GB')} lookups/s (${(1e6 / result.perSecond).toFixed(1)} µs each; ${(result.withPostcode * 100).toFixed(0)} % with a postcode, ${(result.named * 100).toFixed(0)} % named)`,
  );
}
show('near postcodes (journey ends)', near);
show("anywhere in GB's box, sea included", box);
console.log(
  `geocoder: load ${loadMilliseconds.toFixed(0)} ms, +${megabytes(after.arrayBuffers - before.arrayBuffers + after.heapUsed - before.heapUsed)} live (RSS +${megabytes(after.rss - before.rss)}), ${Math.round(near.perSecond / 1000)}k lookups/s`,
);
