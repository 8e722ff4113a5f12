import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { signInStaff } from '../staff/staff-support.ts';
import { bindingPolicy, postQuote, quoteInput, rateBookFor, type Quote } from './quote-support.ts';

/*
 * Quotes hold personal data (issue 36, item 9): a person's subject access export holds the quotes they
 * asked for and those bound to their policies, and their erasure pseudonymises those, and no other.
 */

type Json = Record<string, unknown>;

const clock = fixedClock('2025-05-20T12:00:00Z');
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  const ada = await signInStaff(t, 'ada@insurer.example', 'admin');
  const bob = await signInStaff(t, 'bob@insurer.example', 'admin');
  await rateBookFor(t, acme, ada, bob);
});
after(() => t.close());

const quoteOf = async (input: ReturnType<typeof quoteInput>) =>
  (await postQuote(t, acme.sandbox, input)).json<Quote>();

test('subject access holds their quotes, bound and not; erasure pseudonymises them and no one else’s', async () => {
  const input = quoteInput((q) => {
    (q.proposer as { last_names: string }).last_names = 'Quillfeather';
  });
  const email = input.proposer.email;
  const bound = await quoteOf(input);
  const created = await t.app.inject({
    method: 'POST',
    url: '/policys',
    headers: acme.sandbox,
    payload: bindingPolicy(input, bound),
  });
  assert.equal(created.statusCode, 201, created.body);
  const userReference = created.json<{ user_reference: string }>().user_reference;
  // Another quote of hers, in capitals (addresses are matched without case), never bound.
  const mixedCase = structuredClone(input);
  (mixedCase.proposer as { email: string }).email = email.toUpperCase();
  const unbound = await quoteOf(mixedCase);
  const someoneElse = await quoteOf(quoteInput());

  const exported = await t.app.inject({
    url: `/admin/policyholders/${userReference}/export`,
    headers: t.adminHeaders,
  });
  assert.equal(exported.statusCode, 200, exported.body);
  const quotes = exported.json<{ quotes: Json[] }>().quotes;
  assert.deepEqual(
    quotes.map((q) => q['quote_reference']).sort(),
    [bound.quote_reference, unbound.quote_reference].sort(),
  );
  const boundRow = quotes.find((q) => q['quote_reference'] === bound.quote_reference);
  assert.equal(
    boundRow?.['bound_policy_reference'],
    created.json<{ policy_reference: string }>().policy_reference,
  );
  assert.match(JSON.stringify(boundRow['input']), /Quillfeather/);
  assert.ok(!exported.body.includes(someoneElse.quote_reference));

  const erased = await t.app.inject({
    method: 'POST',
    url: `/admin/policyholders/${userReference}/erase`,
    headers: t.adminHeaders,
    payload: { reason: 'Erasure request by the policyholder', force: true },
  });
  assert.equal(erased.statusCode, 200, erased.body);
  assert.equal(erased.json<{ quotes_erased: number }>().quotes_erased, 2);
  for (const reference of [bound.quote_reference, unbound.quote_reference]) {
    const read = await t.app.inject({ url: `/quotes/${reference}`, headers: acme.sandbox });
    const quote = read.json<Quote>();
    assert.equal(quote.pseudonymised, true, reference);
    assert.doesNotMatch(JSON.stringify(quote), /Quillfeather|applicant\./i);
  }
  const untouched = await t.app.inject({
    url: `/quotes/${someoneElse.quote_reference}`,
    headers: acme.sandbox,
  });
  assert.equal(untouched.json<Quote>().pseudonymised, false);
});
