import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { encodePolyline } from '../../../platform/geo/index.ts';
import type { PolicyTermVersion } from '../../policies/index.ts';
import {
  CLOCK_SKEW_ALLOWANCE_SECONDS,
  ROUTE_MAX_POINTS,
  checkJourneyTimes,
  coverFor,
  measureRoute,
  overlaps,
  versionInForce,
} from './journey-rules.ts';

const at = (iso: string): Date => new Date(iso);
const unix = (iso: string): number => Date.parse(iso) / 1000;

describe('measureRoute', () => {
  test('distance on the ellipsoid and both ends', () => {
    // Buckingham Palace to the Strand, two points.
    const route = encodePolyline([51.501, -0.1416, 51.5115, -0.116], 5);
    const measured = measureRoute(route, 5);
    assert.ok(measured.ok);
    assert.equal(measured.pointCount, 2);
    assert.deepEqual(measured.start, { lat: 51.501, lng: -0.1416 });
    assert.deepEqual(measured.end, { lat: 51.5115, lng: -0.116 });
    // Karney's geodesic (geographiclib) for this pair: 2,126.966 m.
    assert.equal(measured.distanceMetres, 2127);
  });

  test('precision 6 reads the same route written at 1e-6°', () => {
    const points = [55.8609, -4.2514, 55.8642, -4.2518, 55.8651, -4.2577];
    const five = measureRoute(encodePolyline(points, 5), 5);
    const six = measureRoute(encodePolyline(points, 6), 6);
    assert.ok(five.ok && six.ok);
    assert.equal(five.distanceMetres, six.distanceMetres);
  });

  test('each way a route can be unusable has its reason', () => {
    const cases: Array<[string, string]> = [
      ['', 'EMPTY'],
      ['_p~iF~ps|U_ulLnnqC_mqNvxq`@ ', 'INVALID_CHARACTER'],
      ['_p~iF~ps|U_', 'TRUNCATED'],
      [encodePolyline([51.5, -0.1], 5), 'TOO_FEW_POINTS'],
      // 95° of latitude, written by hand (the encoder refuses it): 9,500,000 → zigzag 19,000,000.
      [`${encodeValue(9_500_000)}${encodeValue(0)}${encodeValue(0)}${encodeValue(0)}`, 'OUT_OF_RANGE'],
    ];
    for (const [route, reason] of cases) {
      const measured = measureRoute(route, 5);
      assert.ok(!measured.ok, route);
      assert.equal(measured.reason, reason, route);
      assert.ok(measured.message.length > 0);
    }
  });

  test(`more than ${ROUTE_MAX_POINTS} points is too many`, () => {
    const points: number[] = [];
    for (let k = 0; k <= ROUTE_MAX_POINTS; k++) points.push(51.5 + (k % 100) * 1e-5, -0.1);
    const measured = measureRoute(encodePolyline(points, 5), 5);
    assert.ok(!measured.ok);
    assert.equal(measured.reason, 'TOO_MANY_POINTS');
  });

  test('never throws, whatever the string (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.constantFrom<5 | 6>(5, 6), (route, precision) => {
        const measured = measureRoute(route, precision);
        if (measured.ok) {
          assert.ok(Number.isSafeInteger(measured.distanceMetres) && measured.distanceMetres >= 0);
          assert.ok(measured.pointCount >= 2);
        }
      }),
    );
  });
});

function encodeValue(value: number): string {
  let rest = value < 0 ? -2 * value - 1 : 2 * value;
  let out = '';
  while (rest >= 32) {
    out += String.fromCharCode((rest % 32) + 32 + 63);
    rest = Math.floor(rest / 32);
  }
  return out + String.fromCharCode(rest + 63);
}

describe('checkJourneyTimes', () => {
  const now = at('2025-06-01T12:00:00Z');
  const nowSeconds = unix('2025-06-01T12:00:00Z');

  test('end after start, up to the skew allowance past now', () => {
    assert.deepEqual(checkJourneyTimes(nowSeconds - 600, nowSeconds, now), { ok: true });
    assert.deepEqual(checkJourneyTimes(nowSeconds - 600, nowSeconds + CLOCK_SKEW_ALLOWANCE_SECONDS, now), {
      ok: true,
    });
  });

  test('rejections', () => {
    const same = checkJourneyTimes(nowSeconds - 60, nowSeconds - 60, now);
    assert.equal(same.ok ? undefined : same.reason, 'END_NOT_AFTER_START');
    const backwards = checkJourneyTimes(nowSeconds - 60, nowSeconds - 120, now);
    assert.equal(backwards.ok ? undefined : backwards.reason, 'END_NOT_AFTER_START');
    const future = checkJourneyTimes(nowSeconds, nowSeconds + CLOCK_SKEW_ALLOWANCE_SECONDS + 1, now);
    assert.equal(future.ok ? undefined : future.reason, 'IN_THE_FUTURE');
  });
});

// A policy bought for 2025-06-01 to 2026-06-01 at 0.045 a mile, adjusted to 0.06 from 2025-09-01,
// with statements in between (which keep the terms before them).
const term = { startDate: unix('2025-06-01T00:00:00Z'), endDate: unix('2026-06-01T00:00:00Z') };
const version = (
  sequence: number,
  versionType: PolicyTermVersion['versionType'],
  effective: string,
  usageRate = '0.045',
  overrides: Partial<PolicyTermVersion> = {},
): PolicyTermVersion => ({
  id: `v${sequence}`,
  sequence,
  versionType,
  effectiveAt: at(effective),
  ...term,
  usageRate,
  usageUnit: 'mile',
  term: versionType === 'st' ? null : 1,
  supersededAt: null,
  ...overrides,
});
const adjusted: PolicyTermVersion[] = [
  version(1, 'nb', '2025-06-01T00:00:00Z'),
  version(2, 'st', '2025-07-01T00:00:00Z'),
  version(3, 'mta', '2025-09-01T00:00:00Z', '0.06'),
  version(4, 'st', '2025-10-01T00:00:00Z', '0.06'),
];

describe('versionInForce', () => {
  test('the latest version effective at the time; statements do not count', () => {
    assert.equal(versionInForce(adjusted, at('2025-05-31T23:59:59Z')), undefined);
    assert.equal(versionInForce(adjusted, at('2025-06-01T00:00:00Z'))?.id, 'v1');
    assert.equal(versionInForce(adjusted, at('2025-07-15T00:00:00Z'))?.id, 'v1');
    assert.equal(versionInForce(adjusted, at('2025-08-31T23:59:59Z'))?.id, 'v1');
    assert.equal(versionInForce(adjusted, at('2025-09-01T00:00:00Z'))?.id, 'v3');
    assert.equal(versionInForce(adjusted, at('2025-12-01T00:00:00Z'))?.id, 'v3');
  });

  test('a back-dated adjustment, written after a later one, wins from its effective time', () => {
    // v3 is effective 2025-09-01; v5, written later, is back-dated to 2025-08-01.
    const versions = [...adjusted, version(5, 'mta', '2025-08-01T00:00:00Z', '0.05')];
    assert.equal(versionInForce(versions, at('2025-07-31T00:00:00Z'))?.id, 'v1');
    assert.equal(versionInForce(versions, at('2025-08-15T00:00:00Z'))?.id, 'v5');
    assert.equal(versionInForce(versions, at('2025-10-15T00:00:00Z'))?.id, 'v5');
  });

  test('a renewal written ahead of its term waits for it', () => {
    const next = { startDate: term.endDate, endDate: unix('2027-06-01T00:00:00Z'), term: 2 };
    const versions = [...adjusted, version(5, 'rn', '2026-06-01T00:00:00Z', '0.07', next)];
    assert.equal(versionInForce(versions, at('2026-05-31T00:00:00Z'))?.id, 'v3');
    assert.equal(versionInForce(versions, at('2026-06-01T00:00:00Z'))?.id, 'v5');
  });
});

describe('coverFor', () => {
  test('inside the term: the version in force', () => {
    const early = coverFor(adjusted, at('2025-06-10T08:00:00Z'));
    assert.ok(early.ok);
    assert.equal(early.version.usageRate, '0.045');
    const late = coverFor(adjusted, at('2025-09-10T08:00:00Z'));
    assert.ok(late.ok);
    assert.equal(late.version.usageRate, '0.06');
  });

  test('before the first start or from the current end: outside cover', () => {
    for (const when of ['2025-05-31T23:59:59Z', '2026-06-01T00:00:00Z', '2030-01-01T00:00:00Z']) {
      const result = coverFor(adjusted, at(when));
      assert.ok(!result.ok, when);
      assert.equal(result.reason, 'OUTSIDE_COVER', when);
    }
  });

  test('a renewal extends cover to the new term', () => {
    const next = { startDate: term.endDate, endDate: unix('2027-06-01T00:00:00Z'), term: 2 };
    const versions = [...adjusted, version(5, 'rn', '2026-06-01T00:00:00Z', '0.07', next)];
    const result = coverFor(versions, at('2026-07-01T00:00:00Z'));
    assert.ok(result.ok);
    assert.equal(result.version.id, 'v5');
  });

  test('a cancellation ends cover at its effective time; earlier journeys are still rated', () => {
    const versions = [...adjusted, version(5, 'cn', '2025-11-15T00:00:00Z', '0.06')];
    const before = coverFor(versions, at('2025-11-14T23:59:59Z'));
    assert.ok(before.ok);
    assert.equal(before.version.id, 'v3', 'rated on the version in force, not the cn version');
    for (const when of ['2025-11-15T00:00:00Z', '2025-12-01T00:00:00Z', '2030-01-01T00:00:00Z']) {
      const after = coverFor(versions, at(when));
      assert.ok(!after.ok);
      assert.equal(after.reason, 'POLICY_NOT_ACTIVE');
      assert.match(after.message, /cancelled/);
    }
  });

  test('a lapse ends cover at the end of the term', () => {
    const versions = [...adjusted, version(5, 'ls', '2026-06-01T00:00:00Z', '0.06')];
    assert.ok(coverFor(versions, at('2026-05-31T23:00:00Z')).ok);
    const after = coverFor(versions, at('2026-06-01T00:00:00Z'));
    assert.ok(!after.ok);
    assert.equal(after.reason, 'POLICY_NOT_ACTIVE');
    assert.match(after.message, /lapsed/);
  });

  test('no versions: outside cover', () => {
    const result = coverFor([], at('2025-06-10T00:00:00Z'));
    assert.equal(result.ok ? undefined : result.reason, 'OUTSIDE_COVER');
  });
});

describe('overlaps', () => {
  const span = (from: number, to: number) => ({ startAt: new Date(from * 1000), endAt: new Date(to * 1000) });

  test('touching is not overlapping', () => {
    assert.equal(overlaps(span(0, 10), span(10, 20)), false);
    assert.equal(overlaps(span(10, 20), span(0, 10)), false);
    assert.equal(overlaps(span(0, 10), span(9, 20)), true);
    assert.equal(overlaps(span(0, 30), span(10, 20)), true);
  });

  test('symmetric, and the same as sharing an instant (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 1, max: 20 }),
        (s1, d1, s2, d2) => {
          const a = span(s1, s1 + d1);
          const b = span(s2, s2 + d2);
          let shared = false;
          for (let t = 0; t < 100; t++) if (t >= s1 && t < s1 + d1 && t >= s2 && t < s2 + d2) shared = true;
          assert.equal(overlaps(a, b), overlaps(b, a));
          assert.equal(overlaps(a, b), shared);
        },
      ),
    );
  });
});
