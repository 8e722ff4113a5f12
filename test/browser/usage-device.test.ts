import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createProduct, drive, type Place } from '../support/driving.ts';
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

// The Usage and Device pages in Chromium: journeys posted by the insurer over a few days appear as bars
// of the statement period with the right totals; a budget set through the form is saved and drawn; a
// device bound by the insurer shows with the status the service gives it.
let rig: WebRig;
/** One policyholder for both pages: signing in is the slow part of each test. */
let signedIn: Awaited<ReturnType<WebRig['signedIn']>>;
before(async () => {
  if (skip !== false) return;
  rig = await startWebRig();
  // The product the example policy names, with the silent-device rule the Device page explains.
  await createProduct(rig.t.app, rig.acme.sandbox, 'pay-by-mile-car', {
    device_offline: { after_hours: 24, estimated_distance_per_day: 20, grace_days: 2 },
  });
  signedIn = await rig.signedIn('usage', 360);
});
after(async () => {
  if (skip === false) await rig.close();
});

const londonDay = (unixSeconds: number): string =>
  new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London' }).format(new Date(unixSeconds * 1000));
const miles = (metres: number): string =>
  `${new Intl.NumberFormat('en-GB', { maximumFractionDigits: 1 }).format(metres / 1609.344)} miles`;
const pounds = (pence: number): string =>
  new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'GBP' }).format(pence / 100);

test(
  'usage: bars per day with the journeys’ totals, and a budget set from the page',
  { skip, timeout: 60_000 },
  async () => {
    const { holder, page, problems } = signedIn;
    // NOTE: "no budget" is a 404 from the service, which Chromium logs as a console error; those are
    // expected, one for each such answer, and nothing else may be logged.
    let budget404s = 0;
    page.on('response', (response) => {
      if (response.status() === 404 && response.url().endsWith('/mileage-budget')) budget404s++;
    });
    const nowS = Math.floor(Date.now() / 1000);
    // Four journeys on three days (the policy started 30 days ago; no statement yet).
    const trips: Array<[number, Place, Place]> = [
      [nowS - 5 * 86_400, 'london', 'birmingham'],
      [nowS - 3 * 86_400, 'london', 'oxford'],
      [nowS - 3 * 86_400 + 3 * 3600, 'oxford', 'london'],
      [nowS - 1 * 86_400, 'london', 'centralLondon'],
    ];
    const driven = [];
    for (const [start, from, to] of trips)
      driven.push(await drive(rig.t.app, rig.acme.sandbox, holder.reference, start, from, to, 2));
    const metres = driven.reduce((sum, j) => sum + j.distance_in_metres, 0);
    const pence = driven.reduce((sum, j) => sum + Math.round(j.usage_premium * 100), 0);
    const days = new Set(driven.map((j) => londonDay(j.start_at)));
    await page.goto(`${rig.baseUrl}/app/usage`);
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    await page.getByTestId('period-distance').waitFor();
    assert.equal(await page.getByTestId('period-distance').innerText(), miles(metres));
    assert.equal(await page.getByTestId('period-cost').innerText(), pounds(pence));
    const [daily, monthly] = [page.locator('svg.chart').nth(0), page.locator('svg.chart').nth(1)];
    assert.equal(await daily.locator('rect.bar').count(), days.size, 'a bar for each day with driving');
    assert.ok((await monthly.locator('rect.bar').count()) >= 1);
    assert.match(
      (await daily.getAttribute('aria-label')) ?? '',
      new RegExp(`^Distance per day from .*: ${miles(metres)} in total, ${days.size} days with driving`),
    );
    assert.equal(await page.locator('path.budget').count(), 0, 'no budget yet, no line');

    // Cost instead of distance: the same bars, the summary in pounds.
    await page.getByRole('radio', { name: 'Cost' }).check();
    assert.match((await daily.getAttribute('aria-label')) ?? '', /Cost per day .*£/);
    assert.equal(await daily.locator('rect.bar').count(), days.size);
    await page.getByRole('radio', { name: 'Distance' }).check();
    // The budget, keyboard only: a wrong value is told in words; a good one is saved and drawn.
    await page.getByLabel('Budget a month, in miles').focus();
    await page.keyboard.type('lots');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'Enter the budget as a number of miles' }).waitFor();
    await page.getByLabel('Budget a month, in miles').fill('');
    await tabTo(page, 'input[name=distance_per_month]');
    await page.keyboard.type('500');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Saved: your budget is 500 miles a month.' }).waitFor();
    const stored = await rig.t.app.inject({
      method: 'GET',
      url: `/policys/${holder.reference}/mileage-budget`,
      headers: rig.acme.sandbox,
    });
    assert.equal(stored.statusCode, 200, stored.body);
    assert.equal(stored.json<{ distance_per_month: number }>().distance_per_month, 500);
    assert.equal(await page.locator('path.budget').count(), 2, 'the budget on both charts');
    await page.getByTestId('budget-now').filter({ hasText: '500 miles a month' }).waitFor();
    // The figures as a table, for those who cannot see the chart.
    await page.locator('details.figures summary').first().click();
    const rows = page.locator('details[open] tbody tr');
    assert.ok((await rows.count()) >= 30, 'a row for each day of the period');
    await assertFits(page, 360);
    await assertAccessible(page, 'usage');
    await shoot(page, 'usage');
    await page.setViewportSize({ width: 1280, height: 900 });
    await shoot(page, 'usage-desktop');
    assert.ok(budget404s >= 1);
    assert.deepEqual(
      problems,
      Array.from(
        { length: budget404s },
        () => 'Failed to load resource: the server responded with a status of 404 (Not Found)',
      ),
    );
  },
);

test(
  'usage: a short drive’s axis ticks at round steps, each label once (0.0, 0.5, 1.0, 1.5 mi)',
  { skip, timeout: 60_000 },
  async () => {
    const { holder, page, problems } = await rig.signedIn('usage-axis', 360);
    // 2,100 m due north (about 1.3 miles), yesterday.
    const startS = Math.floor(Date.now() / 1000) - 86_400;
    const posted = await make.journey(rig.t.app, rig.acme, holder.reference, startS, {
      points: [51.5, -0.12, 51.5094, -0.12, 51.5189, -0.12],
      durationSeconds: 900,
    });
    assert.ok(Math.abs(posted.total_miles - 1.3) < 0.05, JSON.stringify(posted));
    await page.goto(`${rig.baseUrl}/app/usage`);
    await page.getByTestId('period-distance').filter({ hasText: '1.3 miles' }).waitFor();
    for (const chart of [0, 1]) {
      const labels = await page.locator('svg.chart-axis').nth(chart).locator('text').allTextContents();
      assert.deepEqual(labels, ['0.0 mi', '0.5 mi', '1.0 mi', '1.5 mi'], `chart ${chart}'s axis`);
    }
    // In pounds: pence, each label once.
    await page.getByRole('radio', { name: 'Cost' }).check();
    const pounds = await page.locator('svg.chart-axis').first().locator('text').allTextContents();
    assert.equal(new Set(pounds).size, pounds.length, pounds.join(', '));
    assert.ok(
      pounds.every((label) => /^£\d+\.\d\d$/.test(label)),
      pounds.join(', '),
    );
    await assertFits(page, 360);
    await shoot(page, 'usage-short-drive');
    assert.deepEqual(
      problems.filter((problem) => !problem.includes('404')),
      [],
      'nothing logged but the budget’s 404',
    );
  },
);

test('device: none linked, then the bound device with its status', { skip, timeout: 60_000 }, async () => {
  const { holder, page, problems } = signedIn;
  const logged = problems.length;
  await page.setViewportSize({ width: 360, height: 740 });
  await page.goto(`${rig.baseUrl}/app/device`);
  await page.getByTestId('no-device').filter({ hasText: 'No device is linked to your policy' }).waitFor();
  await assertAccessible(page, 'device (none)');

  const { status } = await make.device(rig.t.app, rig.acme, holder.reference, {
    deviceId: 'obd-usage-device-1',
  });

  await page.reload();
  await page.getByRole('heading', { name: 'OBD dongle' }).waitFor();
  assert.equal(
    await page.getByTestId('device-status').innerText(),
    status === 'online' ? 'Online' : 'Offline',
  );
  const text = await page.locator('main').innerText();
  assert.match(text, /obd-usage-device-1/);
  assert.match(text, /Linked since\s+\d{1,2} [A-Z][a-z]{2,} \d{4}\n/);
  assert.match(text, /Nothing received yet/);

  // A position now: last seen as an en-GB date-time and how long ago.
  const sent = await rig.t.app.inject({
    method: 'POST',
    url: '/telematics/positions',
    headers: rig.acme.sandbox,
    payload: {
      device_id: 'obd-usage-device-1',
      // After the binding (a position before it belongs to no policy), within the service's 5 minutes' skew.
      positions: [{ time: Math.ceil(Date.now() / 1000) + 1, lat: 51.5, lon: -0.12 }],
    },
  });
  assert.equal(sent.statusCode, 202, sent.body);
  assert.equal(sent.json<{ accepted: number }>().accepted, 1, sent.body);
  await page.reload();
  await page.getByTestId('last-seen').filter({ hasText: /\(/ }).waitFor();
  // The app's one date style, with the time: "28 November 2026 at 17:11".
  assert.match(
    await page.getByTestId('last-seen').innerText(),
    /^\d{1,2} (January|February|March|April|May|June|July|August|September|October|November|December) \d{4} at \d{2}:\d{2} \((just now|1 minute ago)\)$/,
  );

  await assertFits(page, 360);
  await assertAccessible(page, 'device');
  await shoot(page, 'device');

  // A day later without data the service calls it offline; the page warns, with the product's rule.
  await rig.t.container.services.telematics.checkSilentDevices(new Date(Date.now() + 25 * 3600_000));
  const device = await rig.t.app.inject({
    method: 'GET',
    url: '/devices/obd-usage-device-1',
    headers: rig.acme.sandbox,
  });
  assert.equal(device.json<{ status: string }>().status, 'offline');
  await page.reload();
  await page.getByRole('heading', { name: 'Your device is offline' }).waitFor();
  assert.equal(await page.getByTestId('device-status').innerText(), 'Offline');
  assert.match(await page.getByTestId('offline-rule').innerText(), /after 2 days without data.* 20 miles/);
  await assertFits(page, 360);
  await assertAccessible(page, 'device offline');
  await shoot(page, 'device-offline');
  assert.deepEqual(problems.slice(logged), []);
});
