import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { fixedClock } from '../../../src/platform/clock.ts';
import { asTenant } from '../../../src/modules/companies/index.ts';
import { findProducts } from '../../../src/modules/products/index.ts';
import { findVersionInForce } from '../../../src/modules/rating/index.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { signInStaff, type SignedInStaff } from '../staff/staff-support.ts';
import {
  BAD_CELL_PATHS,
  badCells,
  badCsv,
  exampleRateBookContent,
  make,
  type Problem,
  type RateBook,
  type RateBookVersion,
  withFirstFactorDoubled,
} from './rate-book-support.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;
type Method = 'GET' | 'POST' | 'PUT';

const clock = fixedClock('2025-06-10T12:00:00Z');
const HOUR_MS = 3_600_000;
let t: TestApp;
let acme: Company;
let other: Company;
let ada: SignedInStaff;
let bob: SignedInStaff;
let cy: SignedInStaff;
let olly: SignedInStaff;
let val: SignedInStaff;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
  ada = await signInStaff(t, 'ada@insurer.example', 'admin');
  bob = await signInStaff(t, 'bob@insurer.example', 'admin');
  cy = await signInStaff(t, 'cy@insurer.example', 'admin');
  olly = await signInStaff(t, 'olly@insurer.example', 'operations');
  val = await signInStaff(t, 'val@insurer.example', 'viewer');
});
after(async () => {
  await t.close();
});

/** A staff session's headers acting for `company` in sandbox, as the console sends them. */
const as = (staff: SignedInStaff, company: Company = acme): Record<string, string> => ({
  ...staff.headers,
  client_id: company.client_id,
  environment: 'sandbox',
});

const call = (
  method: Method,
  url: string,
  headers: Record<string, string>,
  payload?: object | string,
  contentType?: string,
) =>
  t.app.inject({
    method,
    url,
    headers: contentType === undefined ? headers : { ...headers, 'content-type': contentType },
    ...(payload === undefined ? {} : { payload }),
  });

const paths = (body: string): string[] => (JSON.parse(body) as Problem).errors?.map((e) => e.path) ?? [];

describe('rate books', () => {
  test('create, read, list; 409 for a taken reference or a product with one; 422 for an unknown product; another company sees nothing', async () => {
    await make.product(t, acme.sandbox, 'ppm-a');
    await make.product(t, other.sandbox, 'ppm-a');
    const created = await call('POST', '/rate-books', acme.sandbox, {
      rate_book_reference: 'rates-a',
      product_reference: 'ppm-a',
      name: 'Motor rates',
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers['location'], '/rate-books/rates-a');
    const book = created.json<RateBook>();
    assert.deepEqual(book, {
      rate_book_reference: 'rates-a',
      product_reference: 'ppm-a',
      name: 'Motor rates',
      version_in_force: null,
      versions: [],
      created_at: '2025-06-10T12:00:00.000Z',
    });
    assert.deepEqual((await call('GET', '/rate-books/rates-a', acme.sandbox)).json(), book);
    assert.deepEqual((await call('GET', '/rate-books', acme.sandbox)).json(), { rate_books: [book] });

    const again = await call('POST', '/rate-books', acme.sandbox, {
      rate_book_reference: 'rates-a',
      product_reference: 'ppm-a',
      name: 'Again',
    });
    assert.equal(again.statusCode, 409, again.body);
    const second = await call('POST', '/rate-books', acme.sandbox, {
      rate_book_reference: 'rates-a2',
      product_reference: 'ppm-a',
      name: 'Second',
    });
    assert.equal(second.statusCode, 409, second.body);
    const unknown = await call('POST', '/rate-books', acme.sandbox, {
      rate_book_reference: 'rates-x',
      product_reference: 'no-such-product',
      name: 'X',
    });
    assert.equal(unknown.statusCode, 422, unknown.body);
    assert.deepEqual(paths(unknown.body), ['/body/product_reference']);
    const bad = await call('POST', '/rate-books', acme.sandbox, { rate_book_reference: 'bad ref', name: '' });
    assert.equal(bad.statusCode, 422, bad.body);
    for (const path of ['/body/rate_book_reference', '/body/name', '/body/product_reference'])
      assert.ok(paths(bad.body).includes(path), `${path} in ${bad.body}`);

    assert.equal((await call('GET', '/rate-books/rates-a', other.sandbox)).statusCode, 404);
    assert.equal((await call('GET', '/rate-books/rates-a', acme.production)).statusCode, 404);
    assert.deepEqual((await call('GET', '/rate-books', other.sandbox)).json(), { rate_books: [] });
    assert.equal((await call('GET', '/rate-books', {})).statusCode, 401);
  });

  test('rate books created at once for one product: one 201, and 409s that name the product as what is taken', async () => {
    await make.product(t, acme.sandbox, 'ppm-race');
    const answers = await Promise.all(
      ['rates-race-1', 'rates-race-2', 'rates-race-3', 'rates-race-4'].map((reference) =>
        call('POST', '/rate-books', acme.sandbox, {
          rate_book_reference: reference,
          product_reference: 'ppm-race',
          name: reference,
        }),
      ),
    );
    assert.deepEqual(answers.map((a) => a.statusCode).sort(), [201, 409, 409, 409]);
    assert.deepEqual(
      answers.filter((a) => a.statusCode === 409).map((a) => a.json<{ detail: string }>().detail),
      Array(3).fill('The product ppm-race has a rate book already'),
    );
  });
  test('a draft: 422 names every bad cell; rewritten while a draft; read with its tables', async () => {
    await make.rateBook(t, acme.sandbox, 'ppm-b', 'rates-b');
    const content = exampleRateBookContent();
    const bad = await call('POST', '/rate-books/rates-b/versions', as(ada), {
      content: badCells(content),
    });
    assert.equal(bad.statusCode, 422, bad.body);
    const badPaths = paths(bad.body);
    for (const path of BAD_CELL_PATHS) assert.ok(badPaths.includes(path), `${path} in ${bad.body}`);

    const perKm = await call('POST', '/rate-books/rates-b/versions', as(ada), {
      content: { ...content, usage_unit: 'km' },
    });
    assert.equal(perKm.statusCode, 422, perKm.body);
    assert.deepEqual(paths(perKm.body), ['/body/content/usage_unit'], 'the product is rated per mile');

    const created = await call('POST', '/rate-books/rates-b/versions', as(ada), { content });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers['location'], '/rate-books/rates-b/versions/1');
    const draft = created.json<RateBookVersion>();
    assert.equal(draft.version_number, 1);
    assert.equal(draft.status, 'draft');
    assert.equal(draft.author, 'staff:ada@insurer.example');
    assert.deepEqual(draft.contributors, ['staff:ada@insurer.example']);
    assert.equal(draft.effective_from, null);
    assert.deepEqual(draft.content, content);

    const changed = { ...content, base_fixed_premium_pence: content.base_fixed_premium_pence + 100 };
    const updated = await call('PUT', '/rate-books/rates-b/versions/1', as(bob), {
      content: changed,
      effective_from: '2025-06-11T00:00:00Z',
    });
    assert.equal(updated.statusCode, 200, updated.body);
    const after = updated.json<RateBookVersion>();
    assert.deepEqual(after.content, changed);
    assert.equal(after.effective_from, '2025-06-11T00:00:00.000Z');
    assert.deepEqual(after.contributors, ['staff:ada@insurer.example', 'staff:bob@insurer.example']);
    assert.deepEqual((await call('GET', '/rate-books/rates-b/versions/1', acme.sandbox)).json(), after);
    const badUpdate = await call('PUT', '/rate-books/rates-b/versions/1', as(bob), {
      content: badCells(content),
    });
    assert.equal(badUpdate.statusCode, 422, badUpdate.body);

    // Another company's version, or a version that is not there.
    assert.equal((await call('GET', '/rate-books/rates-b/versions/1', other.sandbox)).statusCode, 404);
    assert.equal((await call('GET', '/rate-books/rates-b/versions/9', acme.sandbox)).statusCode, 404);
    assert.equal(
      (await call('PUT', '/rate-books/rates-b/versions/1', as(bob, other), { content })).statusCode,
      404,
    );
    assert.equal(
      (await call('POST', '/rate-books/rates-b/versions', other.sandbox, { content })).statusCode,
      404,
    );
    assert.equal((await call('GET', '/rate-books/rates-b/versions/x', acme.sandbox)).statusCode, 422);
  });

  test('four eyes: no writer of a draft approves it, nor client credentials; another admin does, audited', async () => {
    await make.rateBook(t, acme.sandbox, 'ppm-c', 'rates-c');
    const content = exampleRateBookContent();
    assert.equal((await call('POST', '/rate-books/rates-c/versions', as(ada), { content })).statusCode, 201);
    const own = await call('POST', '/rate-books/rates-c/versions/1/approve', as(ada));
    assert.equal(own.statusCode, 403, own.body);
    assert.equal(own.json<Problem>().code, 'FOUR_EYES_REQUIRED');
    const byClient = await call('POST', '/rate-books/rates-c/versions/1/approve', acme.sandbox);
    assert.equal(byClient.statusCode, 403, byClient.body);
    assert.equal(byClient.json<Problem>().code, 'FOUR_EYES_REQUIRED');
    // Bob changes it: now he wrote part of it too.
    assert.equal((await call('PUT', '/rate-books/rates-c/versions/1', as(bob), { content })).statusCode, 200);
    assert.equal((await call('POST', '/rate-books/rates-c/versions/1/approve', as(bob))).statusCode, 403);
    assert.equal(
      (await call('POST', '/rate-books/rates-c/versions/1/approve', as(cy, other))).statusCode,
      404,
    );

    const approved = await call('POST', '/rate-books/rates-c/versions/1/approve', as(cy));
    assert.equal(approved.statusCode, 200, approved.body);
    const version = approved.json<RateBookVersion>();
    assert.equal(version.status, 'in_force');
    assert.equal(version.approver, 'staff:cy@insurer.example');
    assert.equal(version.approved_at, clock.now().toISOString());
    assert.equal(version.effective_from, clock.now().toISOString(), 'in force from its approval');
    assert.equal(
      (await call('GET', '/rate-books/rates-c', acme.sandbox)).json<RateBook>().version_in_force,
      1,
    );

    const trail = await t.app.inject({
      method: 'GET',
      url: '/admin/audit?resource=rate_book_reference:rates-c&limit=50',
      headers: t.adminHeaders,
    });
    const records = trail.json<{
      data: Array<{ actor: string; action: string; table: string | null; after: { status?: string } | null }>;
    }>().data;
    const approval = records.find(
      (r) => r.action === 'rateBooks.approveVersion' && r.table === 'rate_book_versions',
    );
    assert.ok(approval !== undefined, trail.body);
    assert.equal(approval.actor, 'staff:cy@insurer.example');
    assert.equal(approval.after?.status, 'approved');
    assert.ok(
      records.some((r) => r.action === 'rateBooks.updateVersion' && r.actor === 'staff:bob@insurer.example'),
    );

    // A draft by the integration (client credentials) names no staff member: any admin may approve it.
    const byIntegration = await call('POST', '/rate-books/rates-c/versions', acme.sandbox, {
      content,
      effective_from: '2025-06-12T00:00:00Z',
    });
    assert.equal(byIntegration.statusCode, 201, byIntegration.body);
    assert.equal(byIntegration.json<RateBookVersion>().author, 'integration');
    assert.equal((await call('POST', '/rate-books/rates-c/versions/2/approve', as(ada))).statusCode, 200);
  });

  test('an approved version never changes: 409 through the routes, refused by the database', async () => {
    await make.rateBook(t, acme.sandbox, 'ppm-d', 'rates-d');
    const content = exampleRateBookContent();
    await make.approvedVersion(t, 'rates-d', as(ada), as(bob), content);
    const put = await call('PUT', '/rate-books/rates-d/versions/1', as(ada), { content });
    assert.equal(put.statusCode, 409, put.body);
    assert.equal((await call('POST', '/rate-books/rates-d/versions/1/approve', as(cy))).statusCode, 409);
    const factor = content.factors[0]!.name;
    const csv = await call('GET', `/rate-books/rates-d/versions/1/factors/${factor}`, acme.sandbox);
    assert.equal(
      (await call('PUT', `/rate-books/rates-d/versions/1/factors/${factor}`, as(ada), csv.body, 'text/csv'))
        .statusCode,
      409,
    );

    const { db } = t.container.database;
    await assert.rejects(
      sql`update rate_book_versions set content = '{}'::jsonb where version_number = 1
          and rate_book_id = (select id from rate_books where rate_book_reference = 'rates-d')`.execute(db),
      /approved and cannot be changed/,
    );
    await assert.rejects(
      sql`delete from rate_book_versions where version_number = 1
          and rate_book_id = (select id from rate_books where rate_book_reference = 'rates-d')`.execute(db),
      /approved and cannot be changed/,
    );
    // Four eyes at the database too: a draft approved by its own writer breaks a check constraint.
    assert.equal(
      (
        await call('POST', '/rate-books/rates-d/versions', as(ada), {
          content,
          effective_from: '2025-06-20T00:00:00Z',
        })
      ).statusCode,
      201,
    );
    await assert.rejects(
      sql`update rate_book_versions set status = 'approved', approver = 'staff:ada', approved_at = now(),
            approver_staff_id = ${ada.staffId}::uuid
          where version_number = 2
            and rate_book_id = (select id from rate_books where rate_book_reference = 'rates-d')`.execute(db),
      /rate_book_versions_four_eyes_check/,
    );
    assert.deepEqual(
      (await call('GET', '/rate-books/rates-d/versions/1', acme.sandbox)).json<RateBookVersion>().content,
      content,
    );
  });

  test('effective_from orders the versions: in force by date, never in the past, never before an approved one', async () => {
    await make.rateBook(t, acme.sandbox, 'ppm-e', 'rates-e');
    const content = exampleRateBookContent();
    const start = clock.now();
    const past = await call('POST', '/rate-books/rates-e/versions', as(ada), {
      content,
      effective_from: new Date(start.getTime() - HOUR_MS).toISOString(),
    });
    assert.equal(past.statusCode, 422, past.body);
    assert.deepEqual(paths(past.body), ['/body/effective_from']);

    const v1From = new Date(start.getTime() + HOUR_MS);
    const v2From = new Date(start.getTime() + 3 * HOUR_MS);
    await make.approvedVersion(t, 'rates-e', as(ada), as(bob), content, v1From.toISOString());
    const second = { ...content, base_fixed_premium_pence: content.base_fixed_premium_pence * 2 };
    await make.approvedVersion(t, 'rates-e', as(ada), as(bob), second, v2From.toISOString());
    const notAfter = await call('POST', '/rate-books/rates-e/versions', as(ada), {
      content,
      effective_from: v1From.toISOString(),
    });
    assert.equal(notAfter.statusCode, 422, notAfter.body);

    const { db } = t.container.database;
    const tenant = asTenant(await companyIdOf(acme), 'sandbox');
    const [product] = await findProducts(db, tenant, ['ppm-e']);
    assert.ok(product !== undefined);
    const inForce = async (at: Date) =>
      (await findVersionInForce(db, tenant, product.id, at))?.version.number;
    assert.equal(await inForce(start), undefined);
    assert.equal(await inForce(v1From), 1);
    assert.equal(await inForce(new Date(v2From.getTime() - 1)), 1);
    assert.equal(await inForce(v2From), 2);
    assert.equal(await inForce(new Date(v2From.getTime() + 365 * 24 * HOUR_MS)), 2);

    const statuses = () =>
      call('GET', '/rate-books/rates-e', acme.sandbox).then((r) =>
        r.json<RateBook>().versions.map((v) => v.status),
      );
    assert.deepEqual(await statuses(), ['approved', 'approved']);
    // A draft that waits past its date cannot be approved: what was in force on a day never changes.
    const late = await call('POST', '/rate-books/rates-e/versions', as(ada), {
      content,
      effective_from: new Date(start.getTime() + 5 * HOUR_MS).toISOString(),
    });
    assert.equal(late.statusCode, 201, late.body);
    clock.advance(2 * HOUR_MS);
    assert.deepEqual(await statuses(), ['in_force', 'approved', 'draft']);
    clock.advance(4 * HOUR_MS);
    assert.deepEqual(await statuses(), ['superseded', 'in_force', 'draft']);
    const stale = await call('POST', '/rate-books/rates-e/versions/3/approve', as(bob));
    assert.equal(stale.statusCode, 409, stale.body);
    clock.set(start);
  });

  test('export and import as JSON: a version becomes a new draft here or in production', async () => {
    await make.rateBook(t, acme.sandbox, 'ppm-f', 'rates-f');
    await make.rateBook(t, acme.production, 'ppm-f', 'rates-f');
    const content = exampleRateBookContent();
    await make.approvedVersion(t, 'rates-f', as(ada), as(bob), content);
    const exported = await call('GET', '/rate-books/rates-f/versions/1/export', acme.sandbox);
    assert.equal(exported.statusCode, 200, exported.body);
    assert.match(String(exported.headers['content-disposition']), /attachment; filename="rates-f-v1.json"/);
    const file = exported.json<Record<string, unknown>>();
    assert.equal(file['format'], 'milepost.rate-book-version');
    assert.equal(file['status'], 'in_force');
    assert.deepEqual(file['content'], content);

    const here = await call('POST', '/rate-books/rates-f/versions/import', as(ada), file);
    assert.equal(here.statusCode, 201, here.body);
    const draft = here.json<RateBookVersion>();
    assert.equal(draft.version_number, 2);
    assert.equal(draft.status, 'draft');
    assert.deepEqual(draft.content, content);

    const production = await call('POST', '/rate-books/rates-f/versions/import', acme.production, file);
    assert.equal(production.statusCode, 201, production.body);
    assert.equal(production.json<RateBookVersion>().version_number, 1);

    const broken = await call('POST', '/rate-books/rates-f/versions/import', as(ada), {
      ...file,
      content: badCells(content),
    });
    assert.equal(broken.statusCode, 422, broken.body);
    for (const path of BAD_CELL_PATHS) assert.ok(paths(broken.body).includes(path), path);
    const wrongFormat = await call('POST', '/rate-books/rates-f/versions/import', as(ada), {
      ...file,
      format: 'x',
    });
    assert.equal(wrongFormat.statusCode, 422, wrongFormat.body);
    assert.equal((await call('GET', '/rate-books/rates-f/versions/1/export', other.sandbox)).statusCode, 404);
    assert.equal(
      (await call('POST', '/rate-books/rates-f/versions/import', other.sandbox, file)).statusCode,
      404,
    );
  });

  test('a factor table as CSV: exported, imported into a draft, bad cells named by row and column', async () => {
    await make.rateBook(t, acme.sandbox, 'ppm-g', 'rates-g');
    const content = exampleRateBookContent();
    assert.equal((await call('POST', '/rate-books/rates-g/versions', as(ada), { content })).statusCode, 201);
    const factor = content.factors[0]!;
    const url = `/rate-books/rates-g/versions/1/factors/${factor.name}`;
    const exported = await call('GET', url, acme.sandbox);
    assert.equal(exported.statusCode, 200, exported.body);
    assert.match(String(exported.headers['content-type']), /^text\/csv/);
    const changedCsv = withFirstFactorDoubled(exported.body);
    const imported = await call('PUT', url, as(bob), changedCsv, 'text/csv');
    assert.equal(imported.statusCode, 200, imported.body);
    const after = imported.json<RateBookVersion>();
    assert.notDeepEqual(after.content, content);
    assert.ok(after.contributors.includes('staff:bob@insurer.example'));
    assert.equal((await call('GET', url, acme.sandbox)).body, changedCsv);

    const bad = await call('PUT', url, as(bob), badCsv(exported.body), 'text/csv');
    assert.equal(bad.statusCode, 422, bad.body);
    assert.ok(paths(bad.body).includes('/body/2/factor'), bad.body);
    assert.ok(paths(bad.body).length > 0 && paths(bad.body).every((p) => /^\/body\//.test(p)), bad.body);
    assert.equal(
      (await call('PUT', `/rate-books/rates-g/versions/1/factors/nope`, as(bob), changedCsv, 'text/csv'))
        .statusCode,
      404,
    );
    assert.equal((await call('GET', url, other.sandbox)).statusCode, 404);
    assert.equal(
      (await call('GET', '/rate-books/rates-g/versions/1/factors/nope', acme.sandbox)).statusCode,
      404,
    );
  });

  test('a factor of 10,000 rows written as CSV is exported and taken back, as CSV and as JSON', async () => {
    await make.rateBook(t, acme.sandbox, 'ppm-i', 'rates-i');
    const content = exampleRateBookContent();
    assert.equal((await call('POST', '/rate-books/rates-i/versions', as(ada), { content })).statusCode, 201);
    const url = '/rate-books/rates-i/versions/1/factors/area';
    const formulas = ["=cmd|'/C calc'!A0", '+SUM(1)', '@x', '-x'];
    const keys = [...formulas, ...Array.from({ length: 10_000 - formulas.length }, (_, i) => `D${i}`)];
    const csv = `key,factor\r\n${keys.map((key, i) => `"${key.replaceAll('"', '""')}",1.${i % 10}`).join('\r\n')}\r\n`;
    const written = await call('PUT', url, as(ada), csv, 'text/csv');
    assert.equal(written.statusCode, 200, written.body.slice(0, 500));
    const stored = written.json<RateBookVersion>().content;
    assert.deepEqual(
      (stored.factors.find((f) => f.name === 'area')?.rows as readonly { key: string }[]).map((r) => r.key),
      keys,
    );

    // The CSV guards the keys a spreadsheet would run as formulas, and reads back as it was written.
    const exportedCsv = await call('GET', url, acme.sandbox);
    assert.equal(exportedCsv.statusCode, 200);
    const cells = exportedCsv.body.split('\r\n').map((line) => line.split(',')[0] ?? '');
    assert.deepEqual(cells.slice(1, 5), ["'=cmd|'/C calc'!A0", "'+SUM(1)", "'@x", "'-x"]);
    assert.ok(cells.every((cell) => !/^[=+\-@]/.test(cell)));
    const again = await call('PUT', url, as(ada), exportedCsv.body, 'text/csv');
    assert.equal(again.statusCode, 200, again.body.slice(0, 500));
    assert.deepEqual(again.json<RateBookVersion>().content, stored);

    // As JSON: exported, imported as a new draft, and the draft rewritten with it.
    const file = (await call('GET', '/rate-books/rates-i/versions/1/export', acme.sandbox)).json<{
      content: RateBookVersion['content'];
    }>();
    const imported = await call('POST', '/rate-books/rates-i/versions/import', as(ada), file);
    assert.equal(imported.statusCode, 201, imported.body.slice(0, 500));
    assert.deepEqual(imported.json<RateBookVersion>().content, stored);
    const rewritten = await call('PUT', '/rate-books/rates-i/versions/2', as(ada), { content: file.content });
    assert.equal(rewritten.statusCode, 200, rewritten.body.slice(0, 500));

    // Just over the validator's limit is answered by validation naming the field, not by the body limits.
    const [first, ...rest] = file.content.factors;
    const tooLong = {
      ...first!,
      rows: Array.from({ length: 10_001 }, (_, i) => ({ from: i, to: i + 1, factor: '1' })),
    };
    const over = await call('POST', '/rate-books/rates-i/versions', as(ada), {
      content: { ...file.content, factors: [tooLong, ...rest] },
    });
    assert.equal(over.statusCode, 422, over.body.slice(0, 500));
    assert.ok(paths(over.body).includes('/body/content/factors/0/rows'), over.body.slice(0, 500));
  });

  test('roles: viewers and operations read but do not write; admins write', async () => {
    await make.rateBook(t, acme.sandbox, 'ppm-h', 'rates-h');
    const content = exampleRateBookContent();
    assert.equal((await call('GET', '/rate-books/rates-h', as(val))).statusCode, 200);
    for (const staff of [val, olly]) {
      const refused = await call('POST', '/rate-books/rates-h/versions', as(staff), { content });
      assert.equal(refused.statusCode, 403, refused.body);
      assert.equal(refused.json<Problem>().code, 'FORBIDDEN');
      assert.equal(
        (
          await call('POST', '/rate-books', as(staff), {
            rate_book_reference: 'r',
            product_reference: 'ppm-h',
            name: 'n',
          })
        ).statusCode,
        403,
      );
    }
    assert.equal((await call('POST', '/rate-books/rates-h/versions', as(ada), { content })).statusCode, 201);
    assert.equal((await call('POST', '/rate-books/rates-h/versions/1/approve', as(olly))).statusCode, 403);
    // Without the CSRF token a session changes nothing.
    const { 'x-csrf-token': _csrf, ...noCsrf } = as(bob);
    assert.equal((await call('POST', '/rate-books/rates-h/versions/1/approve', noCsrf)).statusCode, 403);
    assert.equal((await call('POST', '/rate-books/rates-h/versions/1/approve', as(bob))).statusCode, 200);
  });
});

/** The company's id, as a test reading the database directly needs it. */
async function companyIdOf(company: Company): Promise<string> {
  const row = await sql<{
    id: string;
  }>`select id from companies where company_reference = ${company.company_reference}`.execute(
    t.container.database.db,
  );
  return row.rows[0]!.id;
}
