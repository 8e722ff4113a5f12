import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { EXAMPLE_RATE_BOOK } from '../../src/modules/rating/rules/example-rate-book.ts';
import { assertAccessible, shoot, skipWithoutChromium as skip } from './browser-support.ts';
import { startConsoleRig, unexpected, type ConsoleRig } from './console-support.ts';

// Two admins and a rate book: one creates it and uploads a version (JSON, then a factor's table as
// CSV), is refused approval of their own draft (four eyes), tests its impact on the policies in force;
// the other approves it. Every step by keyboard-reachable controls, axe clean.

// The page's globals, as far as the functions run in it use them (the root tsconfig has no DOM lib).
declare const document: { activeElement: { tagName: string; textContent: string | null } | null };

let rig: ConsoleRig;
before(async () => {
  if (skip === false) rig = await startConsoleRig();
});
after(async () => {
  if (skip === false) await rig.close();
});

test(
  'admin: create a rate book, upload a version and a factor CSV, four eyes, impact, approval',
  { skip, timeout: 90_000 },
  async () => {
    const product = `rb-console-${String(process.pid)}`;
    const made = await rig.t.app.inject({
      method: 'POST',
      url: '/products',
      headers: rig.acme.sandbox,
      payload: { product_reference: product, name: 'Rated product', usage_unit: 'mile' },
    });
    assert.equal(made.statusCode, 201, made.body);
    const author = await rig.signedInStaff('rb-author', 'admin');
    const { page, problems } = author;
    page.setDefaultTimeout(15_000);

    await page.goto(`${rig.baseUrl}/console/rate-books`);
    await page.getByRole('heading', { name: 'Rate books', level: 1 }).waitFor();
    await page.getByLabel('Company', { exact: true }).selectOption(rig.acme.company_reference);
    await page.getByLabel('Environment', { exact: true }).selectOption('sandbox');

    // Create, from the keyboard: the button is reached by Tab and pressed with Enter.
    const create = page.getByRole('button', { name: 'Create a rate book' });
    await create.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Create a rate book' });
    await dialog.getByLabel('Reference', { exact: true }).fill(`${product}-rates`);
    await dialog.getByLabel('Product reference').fill(product);
    await dialog.getByLabel('Name').fill('Console rates');
    await dialog.getByRole('button', { name: 'Create the rate book' }).click();
    await page.getByRole('status').filter({ hasText: 'Console rates was created.' }).waitFor();
    await page.getByRole('heading', { name: /Versions of Console rates/ }).waitFor();

    // Upload the example version as JSON ({effective_from?, content}).
    await page.getByRole('button', { name: 'Upload a version (JSON)' }).click();
    const upload = page.getByRole('dialog', { name: /Upload a version/ });
    await upload.getByLabel('Version file (JSON)').setInputFiles({
      name: 'version.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify({ content: EXAMPLE_RATE_BOOK })),
    });
    await upload.getByRole('button', { name: 'Upload as a draft' }).click();
    await page.getByRole('status').filter({ hasText: 'Version 1 of Console rates was uploaded' }).waitFor();
    const content = page.getByTestId('version-content');
    await content.getByRole('region', { name: 'Factor driver-age', exact: true }).waitFor();
    assert.match(await content.innerText(), /£300\.00/, 'the base premium, from pence');
    assert.match(await content.innerText(), /APR/, 'installment plans with their APR');
    const versions = page.getByTestId('rate-book-versions');
    assert.match(await versions.innerText(), /draft/);
    assert.match(await versions.innerText(), new RegExp(author.email.replace(/[.+]/g, '\\$&')));

    // A factor's table from CSV.
    await page.getByRole('button', { name: 'Upload a factor table (CSV)' }).click();
    const csv = page.getByRole('dialog', { name: 'Upload a factor table' });
    await csv.getByLabel('Factor', { exact: true }).selectOption('driver-age');
    await csv.getByLabel(/Table \(CSV/).setInputFiles({
      name: 'driver-age.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('from,to,factor\r\n17,25,2.5\r\n25,70,1\r\n70,,1.3\r\n'),
    });
    await csv.getByRole('button', { name: 'Replace the table' }).click();
    await page.getByRole('status').filter({ hasText: 'The table of driver-age' }).waitFor();
    await content.getByRole('region', { name: 'Factor driver-age', exact: true }).getByText('2.5').waitFor();

    // The author may not approve: the service's four-eyes refusal is shown.
    await page.getByRole('button', { name: 'Approve version 1' }).click();
    const approve = page.getByRole('dialog', { name: 'Approve version 1?' });
    await approve.getByRole('button', { name: 'Approve', exact: true }).click();
    await approve.getByRole('alert').waitFor();
    assert.match(await approve.getByRole('alert').innerText(), /four eyes|another|different|wrote/i);
    await approve.getByRole('button', { name: 'Cancel' }).click();

    // Impact of the draft, streamed: the bands (chart and table), the totals.
    await page.getByRole('button', { name: 'Test the impact of version 1' }).click();
    const report = page.getByTestId('impact-report');
    await report.waitFor();
    assert.equal(await report.getByTestId('impact-bands').locator('tbody tr').count(), 7);
    await report.getByRole('img', { name: /Policies by change of fixed premium/ }).waitFor();
    await assertAccessible(page, 'console rate book');
    await shoot(page, 'console-rate-book');

    // Keyboard: the version's controls are reached by Tab.
    const reached: string[] = [];
    for (let i = 0; i < 60 && !reached.includes('Approve version 1'); i++) {
      await page.keyboard.press('Tab');
      reached.push(await page.evaluate(() => document.activeElement?.textContent ?? ''));
    }
    assert.ok(reached.includes('Approve version 1'), `tab order: ${reached.join(' | ')}`);
    assert.deepEqual(
      unexpected(problems).filter((p) => !/status of 403/.test(p)),
      [],
    );

    // A second admin approves it.
    const second = await rig.signedInStaff('rb-approver', 'admin');
    second.page.setDefaultTimeout(15_000);
    await second.page.goto(`${rig.baseUrl}/console/rate-books`);
    await second.page.getByLabel('Company', { exact: true }).selectOption(rig.acme.company_reference);
    await second.page.getByRole('button', { name: /Console rates/ }).click();
    await second.page.getByRole('button', { name: 'Version 1', exact: true }).click();
    await second.page.getByRole('button', { name: 'Approve version 1' }).click();
    await second.page
      .getByRole('dialog', { name: 'Approve version 1?' })
      .getByRole('button', { name: 'Approve', exact: true })
      .click();
    await second.page
      .getByRole('status')
      .filter({ hasText: 'Version 1 of Console rates is approved.' })
      .waitFor();
    // The list is read again after the approval: wait for the row to name its approver.
    await second.page.getByTestId('rate-book-versions').getByText(second.email).waitFor();
    const approved = await second.page.getByTestId('rate-book-versions').innerText();
    assert.match(approved, /in force|approved/);
    assert.match(approved, new RegExp(second.email.replace(/[.+]/g, '\\$&')));
    await assertAccessible(second.page, 'console rate book approved');
    assert.deepEqual(unexpected(second.problems), []);
  },
);
