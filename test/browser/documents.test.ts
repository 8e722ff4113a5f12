import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PNG } from 'pngjs';
import {
  assertAccessible,
  assertFits,
  shoot,
  skipWithoutChromium as skip,
  tabTo,
} from './browser-support.ts';
import { startConsoleRig, unexpected, type ConsoleRig } from './console-support.ts';

// Documents in the browser: the policyholder's Documents page (the current certificate first, one
// opened by keyboard: the answer is the PDF), the console's documents panel on a policy (a reissue adds
// one) and its document templates page (a version added with a PNG logo, shown back; an SVG with a
// script refused with the service's reason shown).

// The page's globals, as far as the functions run in it use them (the root tsconfig has no DOM lib).
declare const document: { querySelectorAll(selector: string): { length: number } };

let rig: ConsoleRig;
before(async () => {
  if (skip === false) rig = await startConsoleRig();
});
after(async () => {
  if (skip === false) await rig.close();
});

function pngLogo(): Buffer {
  const image = new PNG({ width: 90, height: 30 });
  for (let i = 0; i < image.data.length; i += 4) image.data.set([0xa0, 0x1b, 0x2c, 0xff], i);
  return PNG.sync.write(image);
}

test(
  'the console’s document templates: a version with a PNG logo is added and its logo shown; an SVG with a script is refused, saying why',
  { skip, timeout: 60_000 },
  async () => {
    const { context, page, problems } = await rig.signedInStaff('templates-admin', 'admin');
    page.setDefaultTimeout(10_000);
    await page.goto(`${rig.baseUrl}/console/document-templates`);
    await page.getByRole('heading', { name: 'Document templates', level: 1 }).waitFor();
    await page.getByText(/has no templates in sandbox: documents use the defaults/).waitFor();
    await assertAccessible(page, 'console document templates, none');

    await page.getByRole('button', { name: 'Add a version' }).click();
    let dialog = page.getByRole('dialog', { name: 'Add a template version' });
    assert.equal(await dialog.getByLabel('Company name').inputValue(), 'Acme', 'the defaults are offered');
    await dialog.getByLabel('Insurer name').fill('Acme Insurance Company Limited');
    await dialog.getByLabel('Colour').fill('#a01b2c');
    await dialog
      .getByLabel(/^Logo/)
      .setInputFiles({ name: 'acme.png', mimeType: 'image/png', buffer: pngLogo() });
    await dialog.getByRole('img', { name: 'The chosen logo, acme.png' }).waitFor();
    await assertAccessible(page, 'console template dialog');
    await dialog.getByRole('button', { name: 'Add the version' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Version 1 \(company-wide\) applies from/ })
      .waitFor();
    const table = page.getByRole('region', { name: 'Template versions' });
    await table.getByRole('img', { name: /Logo of version 1 \(PNG, 90×30\)/ }).waitFor();
    assert.match(await table.innerText(), /in effect[\s\S]*Acme Insurance Company Limited[\s\S]*#a01b2c/);
    const shown = (await table.getByRole('img').first().getAttribute('src')) ?? '';
    assert.ok(shown.startsWith('data:image/png;base64,'), 'the logo as read back from the service');
    assert.deepEqual(Buffer.from(shown.split(',')[1] ?? '', 'base64'), pngLogo());

    await page.getByRole('button', { name: 'Add a version' }).click();
    dialog = page.getByRole('dialog', { name: 'Add a template version' });
    await dialog.getByLabel(/^Logo/).setInputFiles({
      name: 'bad.svg',
      mimeType: 'image/svg+xml',
      buffer: Buffer.from(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><script>alert(1)</script></svg>',
      ),
    });
    await dialog.getByRole('img', { name: 'The chosen logo, bad.svg' }).waitFor();
    await dialog.getByRole('button', { name: 'Add the version' }).click();
    const refusal = dialog.getByRole('alert');
    await refusal.waitFor();
    assert.match(await refusal.innerText(), /The logo is refused: the SVG holds a script element/);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await table.getByRole('row').count(), 2, 'nothing was added: the heading row and version 1');

    await assertAccessible(page, 'console document templates');
    await shoot(page, 'console-document-templates');
    await page.setViewportSize({ width: 360, height: 740 });
    await assertFits(page, 360);
    await shoot(page, 'console-document-templates-360');
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  },
);

test(
  'the app’s Documents page: the current certificate first; opened by keyboard, the answer is the PDF',
  { skip, timeout: 60_000 },
  async () => {
    const { holder, context, page, problems } = await rig.signedIn('documents');
    await rig.t.container.services.documents.runPending();
    page.setDefaultTimeout(10_000);
    await page.goto(`${rig.baseUrl}/app/documents`);
    await page.getByRole('heading', { name: 'Documents', level: 1 }).waitFor();
    const list = page.getByTestId('documents');
    await list.waitFor();
    const headings = await list.getByRole('heading').allInnerTexts();
    assert.match(headings[0] ?? '', /^Certificate of motor insurance\s*current$/, headings.join(' | '));
    assert.ok(
      headings.some((h) => h.startsWith('Policy schedule')),
      headings.join(' | '),
    );
    await assertAccessible(page, 'app documents');
    await assertFits(page, 360);
    await shoot(page, 'app-documents-360');

    // From the document's start, where a loaded page leaves focus, past the header by the skip link.
    await tabTo(page, 'a.skip', 2);
    await page.keyboard.press('Enter');
    await tabTo(page, '[data-testid="documents"] button.secondary');
    const answer = page.waitForResponse((response) => /\/documents\/[0-9a-f-]{36}$/.test(response.url()));
    const opened = context.waitForEvent('page');
    await page.keyboard.press('Enter');
    const pdf = await answer;
    assert.equal(pdf.status(), 200);
    assert.equal(pdf.headers()['content-type'], 'application/pdf');
    assert.ok(Number(pdf.headers()['content-length']) > 1000, 'a whole PDF came back');
    assert.equal(pdf.request().url().includes('token'), false, 'the token stays out of the address');
    const tab = await opened;
    await tab.waitForURL(/^blob:/);
    assert.match(holder.reference, /.+/);
    assert.deepEqual(problems, []);
    await context.close();
  },
);

test(
  'the console’s policy page lists its documents, and operations reissues one',
  { skip, timeout: 60_000 },
  async () => {
    const policy = await rig.newPolicy('documents-console');
    await rig.t.container.services.documents.runPending();
    const { context, page, problems } = await rig.signedInStaff('documents-ops', 'operations');
    page.setDefaultTimeout(10_000);
    await page.goto(
      `${rig.baseUrl}/console/policies/${rig.acme.company_reference}/sandbox/${policy.reference}`,
    );
    const table = page.getByTestId('documents');
    await table.waitFor();
    const before = await table.locator('tbody tr').count();
    assert.ok(before >= 2, `documents listed: ${String(before)}`);
    assert.match(
      await table.locator('tbody tr').first().innerText(),
      /Certificate of motor insurance\s*current/,
    );
    await table
      .getByRole('button', { name: /^Reissue certificate/ })
      .first()
      .click();
    const dialog = page.getByRole('dialog', { name: 'Reissue the certificate of motor insurance?' });
    await dialog.getByLabel('Reason').fill('The policyholder lost the printed copy.');
    await assertAccessible(page, 'console reissue dialog');
    await dialog.getByRole('button', { name: 'Reissue', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /was issued\./ })
      .waitFor();
    await page.waitForFunction(
      (count) => document.querySelectorAll('[data-testid="documents"] tbody tr').length === count,
      before + 1,
    );
    assert.match(await table.innerText(), /a reissue/);
    await assertAccessible(page, 'console policy documents');
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  },
);
