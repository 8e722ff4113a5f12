import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { ClaimView } from '../../src/modules/claims/claim-schemas.ts';
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

// The policyholder's claims in Chromium: a crash posted by the car's device becomes a draft claim in the
// claims worker's loop (running in-process, as in the worker role); every page then shows a banner that
// leads to the answer screen, where "I've had an accident" with a photo opens the claim and "False alarm"
// withdraws it; and a claim reported with no crash, its place picked on the map with the keyboard alone.

const HENLEY = { lat: 51.5355, lon: -0.9018 };
/** Enough bytes of a JPEG for the service's check by content (its magic number). */
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(2048, 1)]);
/** A PDF named as a photo: refused by content, whatever its name and type say. */
const PDF = Buffer.from('%PDF-1.7\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n');

let rig: WebRig;
before(async () => {
  if (skip !== false) return;
  rig = await startWebRig();
  // The worker's claims loop, as ROLE=worker runs it: crashes owed a first notice become drafts.
  await rig.t.container.services.claims.registerWorkers();
});
after(async () => {
  if (skip !== false) return;
  await rig.t.container.services.claims.stopWorkers(5_000);
  await rig.close();
});

/** The policy's claims through the API, with the company's credentials. */
async function claimsOf(reference: string): Promise<ClaimView[]> {
  const r = await rig.t.app.inject({
    method: 'GET',
    url: `/policys/${reference}/claims`,
    headers: rig.acme.sandbox,
  });
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ claims: ClaimView[] }>().claims;
}

/** A crash near Henley from a device bound to the policy, and the draft the worker opens for it. */
async function crashOf(reference: string): Promise<ClaimView> {
  const device = await make.device(rig.t.app, rig.acme, reference);
  const posted = await rig.t.app.inject({
    method: 'POST',
    url: '/telematics/events',
    headers: rig.acme.sandbox,
    payload: {
      device_id: device.device_id,
      type: 'crash',
      // A second after now: never before the device was bound (the binding is stamped to the millisecond).
      time: Math.ceil(Date.now() / 1000) + 1,
      ...HENLEY,
      speed_kmh: 48,
      peak_acceleration_g: 6.2,
    },
  });
  assert.equal(posted.statusCode, 201, posted.body);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const [draft] = await claimsOf(reference);
    if (draft !== undefined) {
      assert.equal(draft.state, 'draft');
      return draft;
    }
    assert.ok(Date.now() < deadline, 'the worker opened no draft within 20 s');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The banner, on whatever page is shown. */
async function bannerText(page: Page): Promise<string> {
  const banner = page.getByTestId('crash-banner');
  await banner.waitFor();
  return banner.innerText();
}

test(
  'a crash shows a banner on every page; "I’ve had an accident" with a photo opens the claim',
  // The first test pays for Chromium's first start and the geocoder's first load.
  { skip, timeout: 180_000 },
  async () => {
    const { holder, page, problems } = await rig.signedIn('crash-confirm');
    const draft = await crashOf(holder.reference);
    assert.ok(draft.place_name !== null, 'the geocoder names the place');

    await page.goto(`${rig.baseUrl}/app/policy`);
    assert.match(
      await bannerText(page),
      /We think you may have had an accident at \d\d:\d\d near Henley[\s\S]*are you OK\?[\s\S]*by \d+ \w+ \d{4} at \d\d:\d\d/,
    );
    await assertFits(page, 360);
    await assertAccessible(page, 'banner on the policy page');
    await shoot(page, 'claims-banner');
    // Another page: the banner stays.
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Documents' }).click();
    await page.getByRole('heading', { name: 'Documents', level: 1 }).waitFor();
    await bannerText(page);

    // Keyboard to the banner's link.
    await page.locator('body').focus();
    await tabTo(page, '.crash-banner a', 20);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Tell us what happened', level: 1 }).waitFor();
    assert.equal(await page.getByTestId('crash-banner').count(), 0, 'no banner on the answer screen itself');
    assert.match(await page.getByTestId('crash-summary').innerText(), /near Henley[\s\S]*at about 48 km\/h/);

    // Sent unanswered: each question says what it needs, and nothing is sent.
    await page.getByRole('button', { name: 'Send: I’ve had an accident' }).click();
    await page.getByRole('alert').filter({ hasText: 'Please answer the questions' }).waitFor();
    assert.match(await page.locator('.yes-no').first().innerText(), /Answer yes or no: Was anyone hurt\?/);
    assert.equal((await claimsOf(holder.reference))[0]?.state, 'draft');
    await assertAccessible(page, 'answer screen with problems');

    for (const [question, answer] of [
      ['Was anyone hurt?', 'No'],
      ['Were other vehicles involved?', 'Yes'],
      ['Did the police attend?', 'No'],
    ] as const)
      await page.getByRole('group', { name: question }).getByLabel(answer).check();
    await page.getByLabel('What happened (optional)').fill('A van pulled out of a side road.');
    await page.getByLabel('Other people involved (optional)').fill('White van, AB12 CDE');
    await page.getByLabel('Photos (optional)').setInputFiles([
      { name: 'bumper.jpg', mimeType: 'image/jpeg', buffer: JPEG },
      { name: 'scan.jpg', mimeType: 'image/jpeg', buffer: PDF },
    ]);
    await page.getByRole('button', { name: 'Send: I’ve had an accident' }).click();
    const outcome = page.getByTestId('claim-outcome');
    await outcome.getByRole('heading', { name: 'Thank you: your claim is open' }).waitFor();
    const said = await outcome.innerText();
    assert.match(said, /A handler will contact you/);
    assert.match(
      said,
      /scan\.jpg was not added: it is not a photo we can keep/,
      'the service’s 422 in words',
    );
    assert.match(said, /We have your 1 photo;/);
    await assertFits(page, 360);
    await assertAccessible(page, 'answered');
    await shoot(page, 'claims-confirmed');

    const [open] = await claimsOf(holder.reference);
    assert.equal(open?.state, 'open');
    assert.equal(open.other_vehicles, true);
    assert.equal(open.injuries, false);
    assert.equal(open.other_parties, 'White van, AB12 CDE');
    assert.deepEqual(
      open.photos.map((photo) => photo.content_type),
      ['image/jpeg'],
    );
    assert.equal(await page.getByTestId('crash-banner').count(), 0, 'the banner has gone');

    await outcome.getByRole('link', { name: 'See your claims' }).click();
    const card = page.getByTestId('claim');
    await card.waitFor();
    assert.equal(await card.getByTestId('claim-state').innerText(), 'Open');
    assert.match(await card.getByTestId('claim-photos').innerText(), /Photo 1: JPEG/);
    assert.match(await card.getByTestId('claim-next').innerText(), /claims team is looking at your claim/);
    await assertAccessible(page, 'claims page');
    // The browser logs the refused photo's answer; nothing else went wrong.
    assert.deepEqual(problems, [
      'Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)',
    ]);
  },
);

test('"False alarm" withdraws the draft, on a desktop', { skip, timeout: 60_000 }, async () => {
  const { holder, page, problems } = await rig.signedIn('crash-false-alarm', 1280);
  await crashOf(holder.reference);
  await page.goto(`${rig.baseUrl}/app/claims`);
  await bannerText(page);
  const card = page.getByTestId('claim');
  assert.equal(await card.getByTestId('claim-state').innerText(), 'Waiting for your answer');
  assert.match(await card.getByTestId('claim-next').innerText(), /Tell us whether you had an accident by /);
  await assertAccessible(page, 'claims page with a draft');
  await page.getByTestId('crash-banner').getByRole('link', { name: 'Tell us what happened' }).click();
  await page.getByRole('button', { name: 'It was a false alarm' }).click();
  const outcome = page.getByTestId('claim-outcome');
  await outcome.getByRole('heading', { name: 'Thank you: we have closed this as a false alarm' }).waitFor();
  assert.match(await outcome.innerText(), /withdrawn: nothing more will happen/);
  assert.equal((await claimsOf(holder.reference))[0]?.state, 'withdrawn');
  await assertFits(page, 1280);
  await assertAccessible(page, 'false alarm');
  await shoot(page, 'claims-false-alarm');
  await outcome.getByRole('link', { name: 'See your claims' }).click();
  await card.waitFor();
  assert.equal(await card.getByTestId('claim-state').innerText(), 'Withdrawn');
  assert.equal(await page.getByTestId('crash-banner').count(), 0);
  assert.deepEqual(problems, []);
});

test(
  'a claim reported with no crash, the place picked on the map with the keyboard alone',
  { skip, timeout: 90_000 },
  async () => {
    const { holder, page, problems } = await rig.signedIn('claim-report');
    await page.goto(`${rig.baseUrl}/app/claims`);
    await page.getByRole('heading', { name: 'Claims', level: 1 }).waitFor();
    assert.match(await page.locator('main').innerText(), /You have no claims\./);

    await page.locator('body').focus();
    await tabTo(page, 'main a[href*="claim-report"]', 30);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Report an accident', level: 1 }).waitFor();
    // Sent empty: each field says what it needs, and nothing is sent.
    await page.getByRole('button', { name: 'Report the accident' }).click();
    await page.getByRole('alert').filter({ hasText: 'Please check the details marked below.' }).waitFor();
    const form = await page.locator('form.claim-report').innerText();
    assert.match(form, /Enter the date as day\/month\/year/);
    assert.match(form, /Mark where it happened on the map\./);
    assert.match(form, /Tell us what happened, in a few words\./);
    await assertAccessible(page, 'report form with problems');
    await page.locator('body').focus();
    // Yesterday at 14:30 in London, typed into the date and time fields.
    const yesterday = new Date(Date.now() - 86_400_000);
    const [year, month, day] = yesterday.toISOString().slice(0, 10).split('-') as [string, string, string];
    await tabTo(page, '#report-date', 30);
    await page.keyboard.type(`${day}/${month}/${year}`);
    await tabTo(page, '#report-time', 5);
    await page.keyboard.type('14:30');

    // The map: the first arrow marks its middle, + zooms in on the marker, arrows move it.
    await tabTo(page, '[data-testid=place-picker]', 5);
    const picked = page.getByTestId('picked-place');
    assert.equal(await picked.innerText(), 'No place marked yet.');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('+');
    await page.keyboard.press('+');
    await page.keyboard.press('Shift+ArrowLeft');
    await page.keyboard.press('ArrowUp');
    await page.getByTestId('picked-marker').waitFor();
    await picked.filter({ hasText: /^Marked near .+: \d+\.\d{4}° N, \d+\.\d{4}° W\.$/ }).waitFor();
    const [, latText, lonText] = /(\d+\.\d{4})° N, (\d+\.\d{4})° W/.exec(await picked.innerText()) ?? [];
    await assertAccessible(page, 'report form with a place picked');
    await assertFits(page, 360);
    await shoot(page, 'claims-report-map');

    // The three questions: Tab into each group, the arrow keys choose.
    await tabTo(page, 'input[type=radio]', 5);
    await page.keyboard.press('Space'); // Was anyone hurt? Yes
    await page.keyboard.press('ArrowRight'); // … No
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space'); // Other vehicles? Yes
    await page.keyboard.press('ArrowRight'); // … No
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space'); // Police? Yes
    await page.keyboard.press('ArrowRight'); // … No
    await page.keyboard.press('Tab');
    await page.keyboard.type('Scraped a wall in a narrow lane.');
    await tabTo(page, 'button[type=submit]', 6);
    // The first report reaches the service and its answer is lost: pressed again, the same report is
    // sent under the same reference, and one claim is open.
    let lost = false;
    await page.route(`${rig.baseUrl}/policys/${holder.reference}/claims`, async (route) => {
      if (route.request().method() !== 'POST' || lost) return route.fallback();
      lost = true;
      assert.equal((await route.fetch()).status(), 201);
      return route.abort('connectionreset');
    });
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: /./ }).waitFor();
    await page.getByRole('button', { name: 'Report the accident' }).focus();
    await page.keyboard.press('Enter');
    const outcome = page.getByTestId('claim-outcome');
    await outcome.getByRole('heading', { name: 'Thank you: your claim is open' }).waitFor();
    await assertAccessible(page, 'reported');
    await shoot(page, 'claims-reported');

    const claims = await claimsOf(holder.reference);
    assert.equal(claims.length, 1, 'one claim for the report sent twice');
    const [reported] = claims;
    assert.ok(reported !== undefined);
    assert.equal(reported.state, 'open');
    assert.equal(reported.source, 'reported');
    assert.equal(reported.injuries, false);
    assert.equal(reported.other_vehicles, false);
    assert.equal(reported.police_attended, false);
    assert.equal(reported.description, 'Scraped a wall in a narrow lane.');
    assert.ok(Math.abs((reported.lat ?? 0) - Number(latText)) < 0.0001, 'the latitude picked');
    assert.ok(Math.abs((reported.lon ?? 0) + Number(lonText)) < 0.0001, 'the longitude picked (west)');
    assert.equal(
      Date.parse(reported.occurred_at),
      Date.parse(`${year}-${month}-${day}T14:30:00${londonOffset(`${year}-${month}-${day}`)}`),
    );
    // The lost answer, as the browser logs it.
    assert.deepEqual(
      problems.filter((p) => !/Failed to load resource: net::ERR_CONNECTION_RESET/.test(p)),
      [],
    );
  },
);

/** London's offset from UTC on a day at 14:30: +01:00 in summer time, Z in winter. */
function londonOffset(day: string): string {
  const noon = new Date(`${day}T12:00:00Z`);
  const hour = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Europe/London',
    hour: '2-digit',
    hourCycle: 'h23',
  }).format(noon);
  return hour === '13' ? '+01:00' : 'Z';
}
