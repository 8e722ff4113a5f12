import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { make } from './factories.ts';

/**
 * Long drives for product-rule tests: straight two-point routes between fixed places, so distances are
 * the same in every run (London to Birmingham 162,831 m, about 101 miles; London to Oxford 82,835 m).
 */
export const PLACES = {
  london: [51.5074, -0.1278],
  birmingham: [52.4862, -1.8904],
  oxford: [51.752, -1.2577],
  centralLondon: [51.5155, -0.1419],
} as const;
export type Place = keyof typeof PLACES;

export interface DrivenJourney {
  journey_reference: string;
  distance_in_metres: number;
  usage_premium: number;
  start_at: number;
}

export const unix = (iso: string): number => Date.parse(iso) / 1000;

/** POST /journeys: from `from` to `to`, starting at `start` (ISO or UNIX seconds), for `hours`; 201. */
export function drive<J = DrivenJourney>(
  app: FastifyInstance,
  headers: Record<string, string>,
  policyReference: string,
  start: string | number,
  from: Place,
  to: Place,
  hours = 2,
): Promise<J> {
  return make.journey<J>(app, headers, policyReference, start, {
    points: [...PLACES[from], ...PLACES[to]],
    durationSeconds: hours * 3600,
  });
}

/** POST /products with `rules`, distances in `unit`; 201. */
export async function createProduct(
  app: FastifyInstance,
  headers: Record<string, string>,
  reference: string,
  rules: Record<string, unknown>,
  unit: 'mile' | 'km' = 'mile',
): Promise<void> {
  const r = await app.inject({
    method: 'POST',
    url: '/products',
    headers,
    payload: { product_reference: reference, name: reference, usage_unit: unit, rules },
  });
  assert.equal(r.statusCode, 201, r.body);
}

/** POST /admin/billing-runs for a London date; 200 with the run's counts. */
export async function billingRun(
  app: FastifyInstance,
  adminHeaders: Record<string, string>,
  date: string,
): Promise<{ due: number; billed: number; already_billed: number; failed: number }> {
  const r = await app.inject({
    method: 'POST',
    url: '/admin/billing-runs',
    headers: adminHeaders,
    payload: { date },
  });
  assert.equal(r.statusCode, 200, r.body);
  return r.json();
}
