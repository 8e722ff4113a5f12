import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  axisLabels,
  MIN_STEP,
  niceAxis,
  niceCeiling,
  niceFloor,
  scaleBar,
  type AxisUnit,
} from '../../web/shared/axis-ticks.ts';

// The web app's axis ticks and scale bars (web/shared/axis-ticks.ts): round steps, labels that never
// repeat, and ticks that cover what is drawn.

describe('chart axes', () => {
  const cases: ReadonlyArray<[string, number, AxisUnit, string[]]> = [
    ['1.3 miles: halves, with a decimal', 1.3, 'mile', ['0.0 mi', '0.5 mi', '1.0 mi', '1.5 mi']],
    ['1.5 miles exactly: the top is 1.5', 1.5, 'mile', ['0.0 mi', '0.5 mi', '1.0 mi', '1.5 mi']],
    ['4 miles: whole miles', 4, 'mile', ['0 mi', '1 mi', '2 mi', '3 mi', '4 mi']],
    ['87 miles: steps of 50', 87, 'mile', ['0 mi', '50 mi', '100 mi']],
    ['0.3 km: tenths', 0.3, 'km', ['0.0 km', '0.1 km', '0.2 km', '0.3 km']],
    ['a few metres: a hundredth is the least step', 0.004, 'mile', ['0.00 mi', '0.01 mi']],
    ['12,345 km: thousands grouped', 12_345, 'km', ['0 km', '5,000 km', '10,000 km', '15,000 km']],
    ['£1.20: 50p steps, pence shown', 1.2, 'GBP', ['£0.00', '£0.50', '£1.00', '£1.50']],
    ['£0.03: steps of a penny', 0.03, 'GBP', ['£0.00', '£0.01', '£0.02', '£0.03']],
    ['£0.001: never below a penny', 0.001, 'GBP', ['£0.00', '£0.01']],
    ['£2,400: steps of £1,000', 2400, 'GBP', ['£0.00', '£1,000.00', '£2,000.00', '£3,000.00']],
    ['nothing driven: 0 to 4', 0, 'mile', ['0 mi', '1 mi', '2 mi', '3 mi', '4 mi']],
  ];
  for (const [name, max, unit, labels] of cases)
    test(name, () => {
      assert.deepEqual(axisLabels(niceAxis(max, 4, MIN_STEP[unit]), unit), labels);
    });

  test('round numbers above and below', () => {
    assert.deepEqual(
      [0.7, 3, 120, 0.2, 0.30000000000000004, 1000, 9.99].map(niceCeiling),
      [1, 5, 200, 0.2, 0.5, 1000, 10],
    );
    assert.deepEqual(
      [0.7, 3, 120, 0.2, 1000, 999.9999999999999].map(niceFloor),
      [0.5, 2, 100, 0.2, 1000, 500],
    );
  });

  test('any data: labels distinct, ticks round and covering it, at most the intervals asked for', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.double({ min: 0, max: 1e9, noNaN: true }),
          fc.integer({ min: 0, max: 100_000 }).map((pence) => pence / 100),
          fc.integer({ min: 0, max: 10_000 }).map((tenths) => tenths / 10),
        ),
        fc.integer({ min: 2, max: 10 }),
        fc.constantFrom<AxisUnit>('mile', 'km', 'GBP'),
        (max, intervals, unit) => {
          const axis = niceAxis(max, intervals, MIN_STEP[unit]);
          const labels = axisLabels(axis, unit);
          assert.equal(new Set(labels).size, labels.length, `labels repeat: ${labels.join(', ')}`);
          assert.equal(axis.ticks[0], 0);
          assert.ok(axis.top >= max, `the top ${axis.top} covers ${max}`);
          assert.ok(axis.ticks.length - 1 <= intervals || axis.ticks.length === 2);
          const mantissa = axis.step / 10 ** Math.floor(Math.log10(axis.step) + 1e-9);
          assert.ok(
            [1, 2, 5].some((m) => Math.abs(mantissa - m) < 1e-9),
            `a round step: ${axis.step}`,
          );
          assert.ok(axis.step >= MIN_STEP[unit]);
          axis.ticks.forEach((tick, i) => {
            assert.ok(Math.abs(tick - i * axis.step) <= axis.step * 1e-9, `tick ${i} is ${i} steps`);
          });
          // Each label reads back as its tick.
          labels.forEach((label, i) => {
            assert.equal(Number(label.replace(/[£,]|\s.*$/g, '')), axis.ticks[i]);
          });
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('map scale bars', () => {
  const cases: ReadonlyArray<[string, number, number, 'mile' | 'km', string]> = [
    ['a town: a fraction of a mile', 10, 100, 'mile', '0.5 miles'],
    ['a county: miles', 200, 100, 'mile', '10 miles'],
    ['exactly a mile fits', 16.09344, 100, 'mile', '1 mile'],
    ['metres below a kilometre', 6, 100, 'km', '500 m'],
    ['kilometres', 150, 90, 'km', '10 km'],
  ];
  for (const [name, metresPerPx, maxPx, unit, label] of cases)
    test(name, () => {
      const bar = scaleBar(metresPerPx, maxPx, unit);
      assert.equal(bar.label, label);
      assert.ok(bar.px <= maxPx + 1e-9 && bar.px > maxPx / 2.5, `${bar.px} px of at most ${maxPx}`);
    });
});
