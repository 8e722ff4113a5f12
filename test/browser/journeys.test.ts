import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext } from 'playwright-core';
import { buildApp } from '../../src/app.ts';
import { encodePolyline } from '../../src/platform/geo/index.ts';
import { createMetricsRegistry } from '../../src/platform/http/observability.ts';
import { make } from '../support/factories.ts';
import {
  assertAccessible,
  assertFits,
  shoot,
  skipWithoutChromium as skip,
  startWebRig,
  tabTo,
  type WebRig,
} from './browser-support.ts';

// The Journeys page in Chromium: journeys posted through the API for a new policyholder, listed by
// day with distance and cost, a void one marked, and a route drawn offline in SVG over the outline of
// Great Britain with the places it passes and a scale; then, with MAP_TILE_URL set, over tiles from a
// tile server (a local one here).

interface PostedJourney {
  journey_reference: string;
  start_name: string | null;
  end_name: string | null;
}

const OXFORD: [number, number] = [51.752, -1.2577];
const HENLEY: [number, number] = [51.5355, -0.9018];
const LONDON: [number, number] = [51.5074, -0.1278];
const BRIGHTON: [number, number] = [50.8225, -0.1372];
const WORTHING: [number, number] = [50.8179, -0.3729];
const CHICHESTER: [number, number] = [50.8365, -0.7792];

/** A road-like route through `via`: each leg sampled every few hundred metres, as a tracker would. */
function route(...via: Array<[number, number]>): string {
  const points: number[] = [];
  via.forEach(([lat, lng], leg) => {
    const next = via[leg + 1];
    if (next === undefined) return void points.push(lat, lng);
    for (let k = 0; k < 30; k++)
      points.push(
        lat + ((next[0] - lat) * k) / 30,
        lng + ((next[1] - lng) * k) / 30 + 0.004 * Math.sin(k / 3),
      );
  });
  return encodePolyline(points, 5);
}

/** Yesterday at `hour`:00 UTC, UNIX seconds: inside the test policy's term (it began 30 days ago). */
const yesterdayAt = (hour: number): number =>
  Math.floor(Date.now() / 86_400_000) * 86_400 - 86_400 + hour * 3600;

let rig: WebRig;
before(async () => {
  if (skip === false) rig = await startWebRig();
});
after(async () => {
  if (skip === false) await rig.close();
});

/** An hour's drive through `via`, starting at `start` (UNIX seconds). */
const drive = (policyReference: string, start: number, via: Array<[number, number]>) =>
  make.journey<PostedJourney>(rig.t.app, rig.acme, policyReference, start, {
    route: route(...via),
    durationSeconds: 3600,
  });

test(
  'journeys by day with distance and cost, a void one marked, a route drawn in SVG with places and a scale',
  { skip, timeout: 60_000 },
  async () => {
    const { holder, page, problems } = await rig.signedIn('journeys');
    // Along the south coast, so the map shows the coastline and the sea.
    const morning = await drive(holder.reference, yesterdayAt(8), [BRIGHTON, WORTHING, CHICHESTER]);
    const evening = await drive(holder.reference, yesterdayAt(17), [LONDON, HENLEY, OXFORD]);
    const voided = await rig.t.app.inject({
      method: 'POST',
      url: `/journeys/${evening.journey_reference}/void`,
      headers: rig.acme.sandbox,
      payload: { reason: 'Driven by a named driver on another policy' },
    });
    assert.equal(voided.statusCode, 200, voided.body);
    assert.ok(morning.start_name !== null && morning.end_name !== null, 'the geocoder names both ends');

    await page.goto(`${rig.baseUrl}/app/journeys`);
    await page.getByRole('heading', { name: 'Journeys', level: 1 }).waitFor();
    // A first load leaves focus at the document's start (readers announce the title): the first Tab
    // reaches the skip link.
    assert.equal(await page.locator('main:focus').count(), 0, 'the first page does not take focus');
    await page.keyboard.press('Tab');
    assert.equal(await page.locator('a.skip:focus').count(), 1, 'the first Tab reaches the skip link');
    const day = page.locator('section.journey-day');
    await day.first().waitFor();
    assert.equal(await day.count(), 1, 'both journeys on one day');
    const text = await day.innerText();
    assert.match(text, /2 journeys, 1 void · [\d.,]+ miles · £\d+\.\d\d/, 'the day’s totals');
    assert.match(text, new RegExp(`${morning.start_name}[\\s\\S]*${morning.end_name}`));
    assert.match(text, /\d+(\.\d)? miles[\s\S]*£\d+\.\d\d/, 'each journey’s distance and cost');
    assert.equal(await page.getByRole('alert').count(), 0, 'journeys and statements (capped days) loaded');
    const voidItem = page.locator('li.journey-void');
    assert.equal(await voidItem.count(), 1);
    assert.match(await voidItem.innerText(), /Void — not charged/);
    await assertFits(page, 360);
    await assertAccessible(page, 'journeys');
    await shoot(page, 'journeys');

    // Keyboard only: Tab to the morning journey's disclosure (the newest is listed first) and open it.
    await page.locator('body').focus();
    await tabTo(page, 'li.journey:not(.journey-void) button[aria-expanded=false]', 20);
    await page.keyboard.press('Enter');
    const map = page.getByRole('img', { name: `Route from ${morning.start_name} to ${morning.end_name}` });
    await map.waitFor();
    const d = await page.getByTestId('route-path').getAttribute('d');
    assert.ok(d !== null && /^M[\d.]+ [\d.]+(L[\d.-]+ [\d.-]+)+$/.test(d), `a drawn route path (d=${d})`);
    await page.locator('.route-map path.land').first().waitFor();
    // The places the route passes near, from the service's gazetteer (GET /places), beside the ends.
    const near = map.getByTestId('near-place');
    await near.first().waitFor();
    const nearNames = await near.locator('text').allTextContents();
    assert.ok(nearNames.length >= 2, `places along the coast: ${nearNames.join(', ')}`);
    assert.ok(
      nearNames.every((name) => name !== morning.start_name && name !== morning.end_name),
      'the ends are not named twice',
    );
    const ends = await map.locator('text.place').allTextContents();
    assert.deepEqual(ends, [morning.start_name, morning.end_name], 'the start and end named on the map');
    assert.match((await map.getAttribute('aria-label')) ?? '', /, passing .+/);
    // A scale bar in the policy's unit, and the names' credit.
    assert.match((await map.getByTestId('scale-bar').textContent()) ?? '', /^\d+(\.\d+)? miles?$/);
    assert.match(await page.locator('.map-note').first().innerText(), /GeoNames/);
    assert.equal(
      await page.locator('li.journey:not(.journey-void) button').getAttribute('aria-expanded'),
      'true',
    );
    await assertFits(page, 360);
    await assertAccessible(page, 'journey map');
    await shoot(page, 'journey-map');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByTestId('route-path').waitFor();
    await shoot(page, 'journeys-desktop');

    // A change of page moves focus to the new page, for keyboard and reader users.
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'My policy' }).click();
    await page.getByTestId('policy-reference').waitFor();
    assert.equal(await page.locator('main#content:focus').count(), 1, 'focus moved to the new page');
    assert.deepEqual(problems, []);
  },
);

test(
  'with MAP_TILE_URL, the route is drawn with Leaflet over the tile server’s tiles',
  { skip, timeout: 60_000 },
  async () => {
    // A one-pixel PNG for any tile, from a server of the test's own.
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
      'base64',
    );
    const tileRequests: string[] = [];
    const tiles: Server = createServer((request, response) => {
      tileRequests.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' });
      response.end(png);
    });
    await new Promise<void>((resolve) => tiles.listen(0, '127.0.0.1', resolve));
    const { port } = tiles.address() as AddressInfo;
    // The service as startWebRig builds it, with a tile server named.
    const { config } = rig.t.container;
    const tiled: FastifyInstance = await buildApp({
      ...rig.t.container,
      config: Object.freeze({
        ...config,
        defaultClientId: rig.acme.client_id,
        app: { ...config.app, mapTileUrl: `http://127.0.0.1:${port}/{z}/{x}/{y}.png` },
      }),
      metrics: createMetricsRegistry(),
    });
    let context: BrowserContext | undefined;
    try {
      const baseUrl = await tiled.listen({ port: 0, host: '127.0.0.1' });
      const signed = await rig.signedIn('journeys-tiled', 1024);
      const { holder, page, problems } = signed;
      context = signed.context;
      await page.goto(`${baseUrl}/app/journeys`);
      await page.getByText('No journeys yet.').waitFor();
      const journey = await drive(holder.reference, yesterdayAt(9), [OXFORD, HENLEY, LONDON]);
      await page.reload();
      await page.getByRole('button', { name: /Show route/ }).click();
      await page
        .getByRole('region', { name: `Map of the route from ${journey.start_name} to ${journey.end_name}` })
        .waitFor();
      await page.locator('img.leaflet-tile-loaded').first().waitFor();
      assert.ok(
        tileRequests.some((url) => /^\/\d+\/\d+\/\d+\.png$/.test(url)),
        'tiles fetched from MAP_TILE_URL',
      );
      assert.ok(
        (await page.locator('path.leaflet-interactive').count()) >= 2,
        'the route drawn over the tiles',
      );
      await page
        .getByText(journey.start_name ?? '', { exact: true })
        .first()
        .waitFor();
      // Leaflet's scale, in miles (the policy's unit).
      assert.match(await page.locator('.leaflet-control-scale-line').first().innerText(), /\d+ (mi|ft)/);
      await assertAccessible(page, 'journey tile map');
      await shoot(page, 'journey-tile-map');
      assert.deepEqual(problems, []);
    } finally {
      // The browser's keep-alive and in-flight tile requests would hold both servers' close open.
      await context?.close();
      tiled.server.closeAllConnections();
      await tiled.close();
      tiles.closeAllConnections();
      await new Promise<void>((resolve) => {
        tiles.close(() => {
          resolve();
        });
      });
    }
  },
);
