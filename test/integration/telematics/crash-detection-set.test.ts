import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { DEFAULT_CRASH_THRESHOLDS, detectCrashes } from '../../../src/modules/telematics/rules/index.ts';
import {
  CRASH_TRACE_COUNT,
  decodeTrace,
  encodeTrace,
  makeTrace,
  ORDINARY_TRIP_COUNT,
  type Trace,
} from '../../support/crash-traces.ts';

/**
 * The committed test set (test/fixtures/crash-traces.txt.gz, made by `npm run fixtures:crashes`) through
 * the default thresholds: recall on the crash traces and false crashes per 1,000 ordinary trips.
 */
const FIXTURE = new URL('../../fixtures/crash-traces.txt.gz', import.meta.url);
const lines = gunzipSync(readFileSync(FIXTURE)).toString('utf8').trimEnd().split('\n');
const traces = lines.map(decodeTrace);

/** A crash is found when a detection lies from 1 s before the impact to 1 s after the drop window. */
const found = (trace: Trace, atS: number): boolean =>
  trace.impactS !== null &&
  atS >= trace.impactS - 1 &&
  atS <= trace.impactS + DEFAULT_CRASH_THRESHOLDS.dropWindowSeconds + 1;

test('the committed set is what the generator makes, of the size and variety it claims', () => {
  const crashes = traces.filter((t) => t.kind === 'crash');
  const ordinary = traces.filter((t) => t.kind === 'ordinary');
  assert.equal(crashes.length, CRASH_TRACE_COUNT);
  assert.equal(ordinary.length, ORDINARY_TRIP_COUNT);
  // At least 100 crashes and 10,000 ordinary trips: the constants are 120 and 10,000.
  const withoutSpeed = (set: Trace[]) => set.filter((t) => t.fixes.every((f) => f.speedKmh === undefined));
  assert.ok(withoutSpeed(crashes).length >= 10 && withoutSpeed(ordinary).length >= 1000);
  const fast = (set: Trace[]) => set.filter((t) => (t.fixes[1]?.timeS ?? 0) - (t.fixes[0]?.timeS ?? 0) < 0.9);
  assert.ok(fast(crashes).length >= 10 && fast(ordinary).length >= 500);
  // Regenerate a spread of traces: the file is the seeded generator's output, not hand-edited.
  for (let i = 0; i < CRASH_TRACE_COUNT; i += 17)
    assert.equal(lines[i], encodeTrace(makeTrace('crash', i)), `crash ${i}`);
  for (let i = 0; i < ORDINARY_TRIP_COUNT; i += 997)
    assert.equal(lines[CRASH_TRACE_COUNT + i], encodeTrace(makeTrace('ordinary', i)), `ordinary ${i}`);
});

test('recall ≥ 95 % on the crash traces, ≤ 1 false crash per 1,000 ordinary trips', (t) => {
  let crashes = 0;
  let recalled = 0;
  let recalledWithoutSpeed = 0;
  let withoutSpeed = 0;
  let falseCrashes = 0;
  let ordinary = 0;
  let falseInCrashTraces = 0;
  for (const trace of traces) {
    const detected = detectCrashes(trace.fixes, DEFAULT_CRASH_THRESHOLDS);
    const hasSpeed = trace.fixes.every((f) => f.speedKmh !== undefined);
    if (trace.kind === 'ordinary') {
      ordinary++;
      falseCrashes += detected.length;
      continue;
    }
    crashes++;
    const hit = detected.some((c) => found(trace, c.at.getTime() / 1000));
    if (hit) recalled++;
    if (!hasSpeed) {
      withoutSpeed++;
      if (hit) recalledWithoutSpeed++;
    }
    falseInCrashTraces += detected.filter((c) => !found(trace, c.at.getTime() / 1000)).length;
  }
  const recallPercent = (100 * recalled) / crashes;
  const falsePerThousand = (1000 * falseCrashes) / ordinary;
  t.diagnostic(
    `recall ${recallPercent.toFixed(1)} % (${recalled}/${crashes}; without device speeds ` +
      `${recalledWithoutSpeed}/${withoutSpeed}); false crashes ${falsePerThousand.toFixed(2)} per 1,000 ` +
      `ordinary trips (${falseCrashes}/${ordinary}); detections away from the impact ${falseInCrashTraces}`,
  );
  assert.ok(recallPercent >= 95, `recall ${recallPercent} %`);
  assert.ok(falsePerThousand <= 1, `${falsePerThousand} false crashes per 1,000`);
  assert.equal(falseInCrashTraces, 0);
});
