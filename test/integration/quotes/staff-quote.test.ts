import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { signInStaff, type SignedInStaff } from '../staff/staff-support.ts';
import {
  bindingPolicy,
  postQuote,
  quoteInput,
  rateBookFor,
  type Problem,
  type Quote,
} from './quote-support.ts';

// GET /admin/quotes/:quote_reference: the quote whole for the staff console, with the policy it is bound to.

type Company = Awaited<ReturnType<typeof createCompany>>;
type StaffQuote = Quote & { bound_policy_reference: string | null };

const clock = fixedClock('2025-05-20T12:00:00Z');
let t: TestApp;
let acme: Company;
let other: Company;
let val: SignedInStaff;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
  const ada = await signInStaff(t, 'ada@insurer.example', 'admin');
  const bob = await signInStaff(t, 'bob@insurer.example', 'admin');
  val = await signInStaff(t, 'val@insurer.example', 'viewer');
  await rateBookFor(t, acme, ada, bob);
});
after(async () => {
  await t.close();
});

const staffRead = (
  reference: string,
  headers: Record<string, string>,
  query = `company_reference=${acme.company_reference}&environment=sandbox`,
) => t.app.inject({ method: 'GET', url: `/admin/quotes/${reference}?${query}`, headers });

test('a viewer reads the quote whole, as the integration does, then with the policy it is bound to', async () => {
  const input = quoteInput();
  const made = (await postQuote(t, acme.sandbox, input)).json<Quote>();
  const asStaff = await staffRead(made.quote_reference, val.headers);
  assert.equal(asStaff.statusCode, 200, asStaff.body);
  const integration = await t.app.inject({
    method: 'GET',
    url: `/quotes/${made.quote_reference}`,
    headers: acme.sandbox,
  });
  assert.deepEqual(asStaff.json(), { ...integration.json<Quote>(), bound_policy_reference: null });
  assert.deepEqual(asStaff.json<StaffQuote>().input, JSON.parse(JSON.stringify(input)));

  const bound = await t.app.inject({
    method: 'POST',
    url: '/policys',
    headers: acme.sandbox,
    payload: bindingPolicy(input, made),
  });
  assert.equal(bound.statusCode, 201, bound.body);
  const policyReference = bound.json<{ policy_reference: string }>().policy_reference;
  const after = (await staffRead(made.quote_reference, t.adminHeaders)).json<StaffQuote>();
  assert.equal(after.status, 'bound');
  assert.equal(after.bound_policy_reference, policyReference);
});

test('a bad reference or a missing environment is a 422 naming the field', async () => {
  const bad = await staffRead('not-a-uuid', val.headers);
  assert.equal(bad.statusCode, 422, bad.body);
  assert.ok(
    bad.json<Problem>().errors?.some((e) => /quote_reference/.test(e.path)),
    bad.body,
  );
  const made = (await postQuote(t, acme.sandbox, quoteInput())).json<Quote>();
  const missing = await staffRead(
    made.quote_reference,
    val.headers,
    `company_reference=${acme.company_reference}`,
  );
  assert.equal(missing.statusCode, 422, missing.body);
  assert.ok(
    missing.json<Problem>().errors?.some((e) => /environment/.test(e.path)),
    missing.body,
  );
});

test('another company’s or environment’s quote is not found; no session is a 401', async () => {
  const made = (await postQuote(t, acme.sandbox, quoteInput())).json<Quote>();
  const elsewhere = await staffRead(
    made.quote_reference,
    val.headers,
    `company_reference=${other.company_reference}&environment=sandbox`,
  );
  assert.equal(elsewhere.statusCode, 404, elsewhere.body);
  const production = await staffRead(
    made.quote_reference,
    val.headers,
    `company_reference=${acme.company_reference}&environment=production`,
  );
  assert.equal(production.statusCode, 404, production.body);
  const unknown = await staffRead(crypto.randomUUID(), val.headers);
  assert.equal(unknown.statusCode, 404, unknown.body);
  const anonymous = await staffRead(made.quote_reference, {});
  assert.equal(anonymous.statusCode, 401, anonymous.body);
});
