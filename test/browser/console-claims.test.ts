import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { make } from '../support/factories.ts';
import { assertAccessible, shoot, skipWithoutChromium as skip, tabTo } from './browser-support.ts';
import { startConsoleRig, unexpected, type ConsoleRig } from './console-support.ts';

// A crash reported by a device becomes a draft claim in the console's queue (the real claims worker
// loop opens it); the claim page shows the crash file on a map with the impact marked and the speed
// trace; a claims handler opens the claim, adds an exposure, is refused a payment above the reserve
// (the 409's message shown in the dialog), pays partially and finally, settles the claim, notes it
// by keyboard alone and assigns it. A viewer reads the same claim with no action offered.

// The page's globals, as far as the functions run in it use them (the root tsconfig has no DOM lib).
declare const document: { activeElement: { textContent: string | null } | null };

/** Tabs until the focused element reads `text` (keyboard only, as a person would). */
async function tabToText(page: Page, text: string, most = 12): Promise<void> {
  for (let i = 0; i < most; i++) {
    if (await page.evaluate((t) => document.activeElement?.textContent === t, text)) return;
    await page.keyboard.press('Tab');
  }
  assert.fail(`“${text}” was not reached with ${String(most)} presses of Tab`);
}

let rig: ConsoleRig;
before(async () => {
  if (skip !== false) return;
  rig = await startConsoleRig();
  await rig.t.container.services.claims.registerWorkers();
});
after(async () => {
  if (skip !== false) return;
  await rig.t.container.services.claims.stopWorkers(5_000);
  await rig.close();
});

/** A one-pixel PNG: a photo whose type the service tells from its bytes. */
const PIXEL_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** The page's console errors less the 409 the test provokes on purpose (a payment above the reserve). */
const problemsOf = (problems: readonly string[]) =>
  unexpected(problems).filter((problem) => !/status of 409\b/.test(problem));

/**
 * A crash on Brighton's seafront: the device is bound now, so the crash is put 62 s ahead (a device's
 * clock may lead the server's by 5 minutes) with a minute of driving west at 50 km/h before it and a
 * stop after, every second.
 */
async function crashOf(policyReference: string): Promise<void> {
  const device = await make.device(rig.t.app, rig.acme, policyReference);
  const boundS = Math.ceil(Date.parse(device.bindings[0]?.bound_at ?? new Date().toISOString()) / 1000);
  const crashS = boundS + 62;
  const positions = Array.from({ length: 90 }, (_, i) => {
    const time = boundS + 2 + i;
    const before = time < crashS;
    const moved = Math.min(time, crashS) - boundS;
    return {
      time,
      lat: 50.8195,
      lon: -0.137 - moved * 0.0002,
      speed_kmh: before ? 50 - (time > crashS - 3 ? 10 : 0) : 0,
    };
  });
  const stored = await rig.t.app.inject({
    method: 'POST',
    url: '/telematics/positions',
    headers: rig.acme.sandbox,
    payload: { device_id: device.device_id, positions },
  });
  assert.equal(stored.statusCode, 202, stored.body);
  const crash = await rig.t.app.inject({
    method: 'POST',
    url: '/telematics/events',
    headers: rig.acme.sandbox,
    payload: {
      device_id: device.device_id,
      type: 'crash',
      time: crashS,
      lat: 50.8195,
      lon: -0.137 - 60 * 0.0002,
      speed_kmh: 40,
      peak_acceleration_g: 7.4,
      delta_v_kmh: 38,
      airbag_deployed: true,
    },
  });
  assert.equal(crash.statusCode, 201, crash.body);
}

/** Waits for the worker's draft in the queue, refreshing it as staff would; answers the claim link. */
async function draftInQueue(page: Page, policyReference: string) {
  const row = page.getByTestId('claims-queue').getByRole('row').filter({ hasText: policyReference });
  for (let tries = 0; tries < 30 && (await row.count()) === 0; tries++) {
    await page.waitForTimeout(500);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Loading/ })
      .waitFor({ state: 'detached' });
  }
  await row.waitFor();
  return row;
}

/** Confirms an action's dialog and waits for the notice it leaves. */
async function confirm(page: Page, dialogName: string | RegExp, button: string, notice: string | RegExp) {
  await page.getByRole('dialog', { name: dialogName }).getByRole('button', { name: button }).click();
  await page.getByRole('status').filter({ hasText: notice }).waitFor();
}

test(
  'a crash becomes a draft in the queue; a claims handler takes it to settled; a viewer only reads',
  { skip, timeout: 180_000 },
  async () => {
    const policy = await rig.newPolicy('claims');
    await crashOf(policy.reference);
    const handler = await rig.signedInStaff('claims-handler', 'claims');
    const { page } = handler;
    page.setDefaultTimeout(10_000);

    await page.goto(`${rig.baseUrl}/console/claims`);
    await page.getByRole('heading', { name: 'Claims', level: 1 }).waitFor();
    const row = await draftInQueue(page, policy.reference);
    assert.match(await row.innerText(), /new first notice[\s\S]*just now|new first notice[\s\S]*second/);
    assert.match(await row.innerText(), /Crash detected/);
    await assertAccessible(page, 'console claims queue');
    await shoot(page, 'console-claims-queue');

    // The filters: no referred drafts yet; the drafts hold this one.
    await page.getByLabel('Referred to staff').selectOption('yes');
    await page.getByText(/^No claims match/).waitFor();
    await page.getByLabel('Referred to staff').selectOption('any');
    await page.getByLabel('State').selectOption('draft');
    await row.waitFor();

    // The policyholder's photo, sent through the API; the claim page shows it as a thumbnail.
    const queue = await rig.t.app.inject({ url: '/claims', headers: rig.acme.sandbox });
    const claim = queue
      .json<{ claims: Array<{ claim_reference: string; policy_reference: string }> }>()
      .claims.find((c) => c.policy_reference === policy.reference);
    assert.ok(claim !== undefined);
    const photo = await rig.t.app.inject({
      method: 'POST',
      url: `/policys/${policy.reference}/claims/${claim.claim_reference}/photos`,
      headers: { ...rig.acme.sandbox, 'content-type': 'image/png' },
      payload: PIXEL_PNG,
    });
    assert.equal(photo.statusCode, 201, photo.body);

    await row.getByRole('link').first().click();
    await page.getByRole('heading', { name: /^Claim /, level: 1 }).waitFor();
    // The crash file: the route before and after on the map with the impact marked, and the speed.
    const map = page.getByTestId('crash-map').getByRole('img', { name: /with the impact marked/ });
    await map.waitFor();
    assert.equal(await page.getByTestId('route-mark').count(), 1);
    const trace = page.getByRole('img', { name: /Speed against time around the impact/ });
    assert.match(
      (await trace.getAttribute('aria-label')) ?? '',
      /50 km\/h [\s\S]*before[\s\S]*0 km\/h [\s\S]*after/,
    );
    assert.equal(await page.getByTestId('speed-impact').count(), 1);
    assert.match(await page.getByTestId('claim-cover').innerText(), /In force\s+Yes/);
    const thumbnail = page.getByRole('img', { name: 'Photo 1 of the claim' });
    await thumbnail.waitFor();
    assert.match((await thumbnail.getAttribute('src')) ?? '', /^data:image\/png;base64,/);
    await assertAccessible(page, 'console claim draft');
    await shoot(page, 'console-claim-draft');

    // Only the states the API lists next are offered.
    const actions = page.getByTestId('claim-actions');
    for (const name of ['Open the claim', 'Withdraw', 'Reject'])
      assert.equal(await actions.getByRole('button', { name, exact: true }).count(), 1, name);
    assert.equal(await actions.getByRole('button', { name: 'Close', exact: true }).count(), 0);

    await actions.getByRole('button', { name: 'Open the claim' }).click();
    await page
      .getByRole('dialog', { name: 'Open the claim?' })
      .getByLabel('Reason (kept as a note)')
      .fill('Confirmed by phone');
    await confirm(page, 'Open the claim?', 'Open the claim', 'The claim is open.');

    await page.getByRole('button', { name: 'Add an exposure' }).click();
    const exposure = page.getByRole('dialog', { name: 'Add an exposure' });
    await exposure.getByLabel('What it covers').selectOption('own_vehicle');
    await exposure.getByLabel('Reserve in pounds').fill('1200');
    await assertAccessible(page, 'console claim exposure dialog');
    await confirm(page, 'Add an exposure', 'Add the exposure', /reserve of £1,200\.00 was added/);

    // Above the reserve: the service's 409 is told in the dialog, which stays open.
    await page.getByRole('button', { name: 'Pay Own vehicle' }).click();
    const pay = page.getByRole('dialog', { name: 'Pay on the own vehicle exposure' });
    await pay.getByLabel('Amount in pounds').fill('1500');
    await pay.getByLabel('Payee').fill('Seafront Motors');
    await pay.getByRole('button', { name: 'Make the payment' }).click();
    const refusal = pay.getByRole('alert');
    await refusal.waitFor();
    assert.match(await refusal.innerText(), /reserve/i);
    await pay.getByLabel('Amount in pounds').fill('400');
    await confirm(
      page,
      'Pay on the own vehicle exposure',
      'Make the payment',
      'A payment of £400.00 was made',
    );

    await page.getByRole('button', { name: 'Pay Own vehicle' }).click();
    await pay.getByLabel('Amount in pounds').fill('800');
    await pay.getByLabel('Payee').fill('Seafront Motors');
    await pay.getByLabel('Final: settles the exposure').check();
    await confirm(page, 'Pay on the own vehicle exposure', 'Make the payment', /exposure is settled/);
    // The totals come with the claim read again after the payment: wait for that answer.
    await page
      .getByTestId('claim-totals')
      .filter({ hasText: /Reserved £1,200\.00 · paid £1,200\.00 · outstanding £0\.00/ })
      .waitFor();
    assert.equal((await page.getByTestId('claim-payments').getByRole('row').count()) - 1, 2);
    // Each dialog sent its payment with a reference of its own, so a resend could not pay twice.
    const paid = await rig.t.app.inject({
      url: `/claims/${claim.claim_reference}`,
      headers: rig.acme.sandbox,
    });
    const references = paid
      .json<{ payments: Array<{ payment_reference: string | null }> }>()
      .payments.map((p) => p.payment_reference ?? '');
    assert.ok(
      references.every((r) => r.startsWith('console-')),
      references.join(),
    );
    assert.equal(new Set(references).size, 2);

    await page.getByRole('button', { name: 'Mark settled' }).click();
    await confirm(page, 'Mark settled?', 'Mark settled', 'The claim is settled.');
    await page.locator('.lead').getByText('settled', { exact: true }).waitFor();

    // A note by keyboard alone: Tab to the button, Enter, type, Tab to the confirmation, Enter.
    await page.getByRole('button', { name: 'Close', exact: true }).focus();
    await tabToText(page, 'Add a note');
    await page.keyboard.press('Enter');
    const note = page.getByRole('dialog', { name: 'Add a note' });
    await note.getByLabel('Note').waitFor();
    await tabTo(page, 'textarea[name="text"]');
    await page.keyboard.type('Repairs booked; the policyholder is content.');
    await tabTo(page, 'dialog button[type="submit"]');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'The note was added.' }).waitFor();
    // The claim is read again after the note is added: the list shows it once that answer arrives.
    await page
      .getByTestId('claim-notes')
      .getByText(/Repairs booked/)
      .waitFor();

    await page.getByRole('button', { name: 'Assign a handler' }).click();
    await page
      .getByRole('dialog', { name: 'Assign a handler' })
      .getByLabel('Handler')
      .selectOption({ label: `${handler.email} (claims)` });
    await confirm(page, 'Assign a handler', 'Assign', `The claim is assigned to ${handler.email}.`);
    await page.getByTestId('claim-handler').filter({ hasText: handler.email }).waitFor();

    const timeline = await page.getByTestId('claim-timeline').innerText();
    assert.match(
      timeline,
      /Crash at 40 km\/h[\s\S]*First notice of loss[\s\S]*new first notice → open[\s\S]*Payment of £400\.00[\s\S]*Final payment of £800\.00[\s\S]*open → settled/,
    );
    await assertAccessible(page, 'console claim settled');
    await shoot(page, 'console-claim-settled');
    const claimUrl = page.url();

    // The policy page lists the claim, linking back to it.
    await page.getByRole('link', { name: policy.reference }).first().click();
    await page.getByRole('heading', { name: `Policy ${policy.reference}`, level: 1 }).waitFor();
    const listed = page.getByTestId('policy-claims');
    assert.match(await listed.innerText(), /settled/);
    await listed.getByRole('link').first().click();
    await page.waitForURL(claimUrl);
    assert.deepEqual(problemsOf(handler.problems), []);
    await handler.context.close();

    // A viewer reads the claim and is offered nothing to do.
    const viewer = await rig.signedInStaff('claims-viewer', 'viewer');
    viewer.page.setDefaultTimeout(10_000);
    await viewer.page.goto(claimUrl);
    await viewer.page.getByTestId('claim-read-only').waitFor();
    await viewer.page.getByTestId('claim-exposures').waitFor();
    assert.equal(await viewer.page.getByTestId('claim-actions').count(), 0);
    for (const name of [/^Pay/, /^Set reserve/, 'Add a note', 'Assign a handler', 'Close', 'Reopen'])
      assert.equal(await viewer.page.getByRole('button', { name }).count(), 0, String(name));
    await assertAccessible(viewer.page, 'console claim as viewer');
    assert.deepEqual(unexpected(viewer.problems), []);
    await viewer.context.close();
  },
);
