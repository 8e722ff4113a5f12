import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { exampleRateBookContent, make } from '../rating/rate-book-support.ts';
import { signInStaff, type SignedInStaff } from '../staff/staff-support.ts';
import { postQuote, quoteInput, rateBookFor, type Quote } from './quote-support.ts';

// The quote service remembers the rate book versions and the validity it has read, and stores a quote
// rated on them only if they still hold. Nothing tells it of an approval or a settings change (another
// process may have made it), so these tests change both through the API and look only at the answers.

type Company = Awaited<ReturnType<typeof createCompany>>;

const NOW = '2025-05-20T12:00:00Z';
const DAY_MS = 86_400_000;
const DAY_S = 86_400;
const clock = fixedClock(NOW);
const nowSeconds = Date.parse(NOW) / 1000;
let t: TestApp;
let acme: Company;
let ada: SignedInStaff;
let bob: SignedInStaff;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  ada = await signInStaff(t, 'ada@insurer.example', 'admin');
  bob = await signInStaff(t, 'bob@insurer.example', 'admin');
  await rateBookFor(t, acme, ada, bob);
});
after(async () => {
  await t.close();
});

/** A quote for cover starting `days` after now, for a year. */
async function quoteStarting(days: number): Promise<Quote> {
  const input = quoteInput((i) => {
    i.policy.start_date = nowSeconds + days * DAY_S;
    i.policy.end_date = nowSeconds + (days + 365) * DAY_S - 1;
  });
  return (await postQuote(t, acme.sandbox, input)).json<Quote>();
}

const staffOf = (staff: SignedInStaff) => ({
  ...staff.headers,
  client_id: acme.client_id,
  environment: 'sandbox',
});

test('a version approved after quotes were made prices the quotes that start in it, and only those', async () => {
  const before = await quoteStarting(30);
  assert.equal(before.rate_book_version, 1);
  assert.deepEqual(
    { ...(await quoteStarting(30)).pricing, quote_reference: null, quote_version_reference: null },
    { ...before.pricing, quote_reference: null, quote_version_reference: null },
  );

  const dearer = { ...exampleRateBookContent(), base_rate_per_unit: '0.08' };
  await make.approvedVersion(
    t,
    'car-rates',
    staffOf(ada),
    staffOf(bob),
    dearer,
    new Date(Date.parse(NOW) + 20 * DAY_MS).toISOString(),
  );

  const inVersionTwo = await quoteStarting(30);
  assert.equal(inVersionTwo.rate_book_version, 2, 'the approval is seen at once');
  assert.ok(inVersionTwo.pricing.usage_rate > before.pricing.usage_rate);
  const inVersionOne = await quoteStarting(10);
  assert.equal(inVersionOne.rate_book_version, 1, 'a start before version 2 takes effect is rated on 1');
  // Both versions are remembered now; each start still finds its own.
  assert.equal((await quoteStarting(30)).rate_book_version, 2);
  assert.equal((await quoteStarting(10)).rate_book_version, 1);
  assert.equal((await quoteStarting(19)).rate_book_version, 1);
  assert.equal((await quoteStarting(21)).rate_book_version, 2);
  assert.equal((await quoteStarting(30)).pricing.usage_rate, inVersionTwo.pricing.usage_rate);
});

test('a validity changed after quotes were made sets the next quote’s expiry', async () => {
  const validity = (quote: Quote) =>
    (new Date(quote.expires_at).getTime() - new Date(quote.created_at).getTime()) / DAY_MS;
  assert.equal(validity(await quoteStarting(30)), 30);
  const put = await t.app.inject({
    method: 'PUT',
    url: `/admin/companies/${acme.company_reference}/quotes`,
    headers: ada.headers,
    payload: { validity_days: 7, retention_days: 90 },
  });
  assert.equal(put.statusCode, 200, put.body);
  assert.equal(validity(await quoteStarting(30)), 7);
  assert.equal(validity(await quoteStarting(30)), 7);
});

test('a quote read back is the quote answered, on remembered terms as on terms just read', async () => {
  const answered = await quoteStarting(30);
  const read = await t.app.inject({
    method: 'GET',
    url: `/quotes/${answered.quote_reference}`,
    headers: acme.sandbox,
  });
  assert.equal(read.statusCode, 200, read.body);
  assert.deepEqual(read.json(), answered);
});

test('a quote is kept in its own row, its documents as answered: nothing goes to the TOAST table', async () => {
  const { db } = t.container.database;
  // NOTE: migration 0065: json documents and a tuple target of 2700 bytes keep a quote off the TOAST
  // table (a second heap insert and an index insert each). The worked example is the benchmark's quote.
  const answered = await quoteStarting(30);
  const { rows } = await sql<{ row_bytes: number; toast_bytes: number; breakdown: unknown; input: unknown }>`
    select pg_column_size(q.*)::int as row_bytes, q.breakdown, q.input,
      pg_relation_size((select reltoastrelid from pg_class where oid = 'quotes'::regclass))::int as toast_bytes
    from quotes q where q.quote_reference = ${answered.quote_reference}`.execute(db);
  const [row] = rows;
  assert.ok(row !== undefined);
  assert.equal(row.toast_bytes, 0, 'the TOAST table is empty');
  assert.ok(row.row_bytes <= 2700, `the row is ${String(row.row_bytes)} bytes`);
  assert.deepEqual(row.breakdown, answered.breakdown);
  assert.deepEqual(row.input, answered.input);
});
