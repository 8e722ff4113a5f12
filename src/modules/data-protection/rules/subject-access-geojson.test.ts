import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { encodePolyline } from '../../../platform/geo/index.ts';
import { journeyFeature, type RoutedJourney } from './subject-access-geojson.ts';

const journey = (route: string, precision: number): RoutedJourney => ({
  journey_reference: 'j-1',
  policy_reference: 'acre-bold-cabin',
  route,
  route_precision: precision,
  start_at: new Date('2025-06-10T08:00:00Z'),
  end_at: new Date('2025-06-10T08:30:00Z'),
  distance_metres: 1234,
  source: 'api',
  is_void: false,
});

describe('journeyFeature', () => {
  test('a LineString in [longitude, latitude] order, with the journey’s fields', () => {
    const feature = journeyFeature(journey(encodePolyline([51.5074, -0.1278, 51.5155, -0.1419], 5), 5));
    assert.deepEqual(feature, {
      type: 'Feature',
      geometry: {
        type: 'LineString',
        coordinates: [
          [-0.1278, 51.5074],
          [-0.1419, 51.5155],
        ],
      },
      properties: {
        journey_reference: 'j-1',
        policy_reference: 'acre-bold-cabin',
        start_at: '2025-06-10T08:00:00.000Z',
        end_at: '2025-06-10T08:30:00.000Z',
        distance_metres: 1234,
        source: 'api',
        is_void: false,
      },
    });
  });

  test('each journey decodes at its own precision', () => {
    const points = [51.123456, -0.654321, 51.223456, -0.554321];
    assert.deepEqual(journeyFeature(journey(encodePolyline(points, 6), 6))?.geometry.coordinates, [
      [-0.654321, 51.123456],
      [-0.554321, 51.223456],
    ]);
    // The same text read at 5 would put the points ten times further out: precision is not guessed.
    assert.notDeepEqual(journeyFeature(journey(encodePolyline(points, 6), 5))?.geometry.coordinates, [
      [-0.654321, 51.123456],
      [-0.554321, 51.223456],
    ]);
  });

  test('no feature for a journey without a route (an estimate) or with one that does not decode', () => {
    assert.equal(journeyFeature(journey('', 5)), undefined);
    assert.equal(journeyFeature(journey('_p~iF', 5)), undefined);
  });

  test('any route round-trips through encoding at 5 and 6 decimal places', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(5 as const, 6 as const),
        fc.array(
          fc.tuple(fc.integer({ min: -90_000, max: 90_000 }), fc.integer({ min: -180_000, max: 180_000 })),
          {
            minLength: 2,
            maxLength: 50,
          },
        ),
        (precision, thousandths) => {
          const points = thousandths.flatMap(([lat, lng]) => [lat / 1000, lng / 1000]);
          const feature = journeyFeature(journey(encodePolyline(points, precision), precision));
          assert.deepEqual(
            feature?.geometry.coordinates,
            thousandths.map(([lat, lng]) => [lng / 1000, lat / 1000]),
          );
        },
      ),
    );
  });
});
