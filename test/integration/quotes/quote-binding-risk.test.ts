import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import type { QuoteInput } from '../../../src/modules/rating/rules/index.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { signInStaff } from '../staff/staff-support.ts';
import {
  bindingPolicy,
  postQuote,
  quoteInput,
  rateBookFor,
  type Problem,
  type Quote,
} from './quote-support.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;
type Mutable = QuoteInput & Record<string, unknown>;

const NOW = '2025-05-20T12:00:00Z';
const DAY_SECONDS = 86_400;
const clock = fixedClock(NOW);
let t: TestApp;
let acme: Company;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  const ada = await signInStaff(t, 'ada@insurer.example', 'admin');
  const bob = await signInStaff(t, 'bob@insurer.example', 'admin');
  await rateBookFor(t, acme, ada, bob);
});
after(async () => {
  await t.close();
});

const problemOf = (body: string) => JSON.parse(body) as Problem & { detail?: string };
const paths = (body: string): string[] => problemOf(body).errors?.map((e) => e.path) ?? [];

async function newQuote(input: object): Promise<Quote> {
  return (await postQuote(t, acme.sandbox, input)).json<Quote>();
}

const bind = (payload: object) =>
  t.app.inject({ method: 'POST', url: '/policys', headers: acme.sandbox, payload });

const getQuote = (reference: string) =>
  t.app.inject({ method: 'GET', url: `/quotes/${reference}`, headers: acme.sandbox });

/** The policy that binds `quote` with its whole pricing, the quote's input changed by `change`. */
function changed(input: QuoteInput, quote: Quote, change: (policy: Mutable) => void) {
  const altered = structuredClone(input) as Mutable;
  change(altered);
  return bindingPolicy(altered, quote, quote.pricing);
}

/** Binding answers 422 QUOTE_RISK_MISMATCH naming exactly `expected`, and the quote stays bindable. */
async function refused(payload: object, quote: Quote, expected: string[]): Promise<void> {
  const answer = await bind(payload);
  assert.equal(answer.statusCode, 422, answer.body);
  assert.equal(problemOf(answer.body).code, 'QUOTE_RISK_MISMATCH');
  assert.deepEqual(paths(answer.body).sort(), [...expected].sort());
  assert.equal((await getQuote(quote.quote_reference)).json<Quote>().status, 'bindable');
}

describe('binding a quote binds only the risk, term and product it rated', () => {
  test('a one-day quote does not bind a year of cover: 422 naming policy.end_date', async () => {
    const input = quoteInput((q) => {
      const policy = q.policy as { start_date: number; end_date: number };
      policy.end_date = policy.start_date + DAY_SECONDS;
      // A day has one billing date: no monthly plan.
      (q as { installment_plan?: string }).installment_plan = 'single';
    });
    const quote = await newQuote(input);
    assert.equal(quote.status, 'bindable');
    const year = changed(input, quote, (q) => {
      const policy = q.policy as { start_date: number; end_date: number };
      policy.end_date = policy.start_date + 365 * DAY_SECONDS - 1;
    });
    await refused(year, quote, ['/body/policy/end_date']);
    const problem = problemOf((await bind(year)).body);
    assert.match(problem.detail ?? '', /policy\/end_date/);
    // As quoted, the same quote binds.
    const asQuoted = await bind(bindingPolicy(input, quote, quote.pricing));
    assert.equal(asQuoted.statusCode, 201, asQuoted.body);
  });

  test('an accepted quote does not bind a risk underwriting declines: each rated field named', async () => {
    const input = quoteInput();
    const quote = await newQuote(input);
    assert.equal(quote.decision.outcome, 'accept');
    const worse = changed(input, quote, (q) => {
      const vehicle = q.vehicle as { group_rating_50: number; estimated_yearly_mileage: number };
      vehicle.group_rating_50 = 50;
      vehicle.estimated_yearly_mileage = 60_000;
      (q.proposer as { convictions: unknown[] }).convictions = [
        { code: 'SP30', date: '2022-09-18', points: 3, ban: 0 },
        { code: 'DR10', date: '2025-01-10', points: 10, ban: 12 },
      ];
    });
    await refused(worse, quote, [
      '/body/vehicle/group_rating_50',
      '/body/vehicle/estimated_yearly_mileage',
      '/body/proposer/convictions',
    ]);
    // A driver the quote did not name, or a fact it did not have, is a different risk too.
    const driver = changed(input, quote, (q) => {
      q.additional_drivers = [
        ...(q.additional_drivers ?? []),
        { first_names: 'Sam', last_names: 'Clarke', dob: '2007-01-01' },
      ];
      (q.vehicle as { is_import?: boolean }).is_import = true;
    });
    await refused(driver, quote, ['/body/additional_drivers', '/body/vehicle/is_import']);
  });

  test('another product, cover, excess, start or address postcode answers 422 naming each', async () => {
    const input = quoteInput();
    const quote = await newQuote(input);
    const other = changed(input, quote, (q) => {
      const policy = q.policy as Record<string, unknown> & { address: Record<string, unknown> };
      policy['product_reference'] = 'pbm2';
      policy['cover'] = 'third_party';
      policy['voluntary_excess'] = 0;
      policy['start_date'] = (policy['start_date'] as number) + DAY_SECONDS;
      policy.address['postcode'] = 'SW1A 1AA';
      (q.proposer as { dob: string }).dob = '1999-03-14';
    });
    await refused(other, quote, [
      '/body/policy/product_reference',
      '/body/policy/cover',
      '/body/policy/voluntary_excess',
      '/body/policy/start_date',
      '/body/policy/address/postcode',
      '/body/proposer/dob',
    ]);
    const noProduct = changed(input, quote, (q) => {
      delete (q.policy as { product_reference?: string }).product_reference;
    });
    await refused(noProduct, quote, ['/body/policy/product_reference']);
  });

  test('contact details, address lines and the client’s own fields may differ: it binds', async () => {
    const input = quoteInput();
    const quote = await newQuote(input);
    const contact = changed(input, quote, (q) => {
      const proposer = q.proposer as Record<string, unknown>;
      proposer['email'] = `  ${proposer['email'] as string}`.toUpperCase().trim();
      proposer['mobile_number'] = '+447700900999';
      proposer['title'] = 'Dr';
      const policy = q.policy as Record<string, unknown> & { address: Record<string, unknown> };
      policy.address['line_1'] = 'Flat 3a';
      policy.address['postcode'] = 'ec1a1bb';
      policy['auto_renew'] = true;
      policy['billing_day_date'] = 15;
      q['custom'] = { broker: 'direct' };
      (q.vehicle as { modifications?: string[] }).modifications = [];
    });
    const created = await bind(contact);
    assert.equal(created.statusCode, 201, created.body);
    const policy = created.json<{ pricing: Record<string, unknown>; policy: { billing_day_date: number } }>();
    assert.deepEqual(policy.pricing, quote.pricing);
    assert.equal(policy.policy.billing_day_date, 15);
    assert.equal((await getQuote(quote.quote_reference)).json<Quote>().status, 'bound');
  });

  test('an adjustment quote binds only the adjustment it rated', async () => {
    const input = quoteInput();
    const created = await bind(bindingPolicy(input, await newQuote(input)));
    assert.equal(created.statusCode, 201, created.body);
    const reference = created.json<{ policy_reference: string }>().policy_reference;
    const adjustedInput = quoteInput((q) => {
      (q.policy as { policy_reference: string }).policy_reference = reference;
      (q.proposer as { email: string }).email = input.proposer.email;
      (q.vehicle as { estimated_yearly_mileage: number }).estimated_yearly_mileage = 9000;
    });
    const adjustment = await newQuote(adjustedInput);
    const further = changed(adjustedInput, adjustment, (q) => {
      (q.vehicle as { estimated_yearly_mileage: number }).estimated_yearly_mileage = 20_000;
    });
    await refused(further, adjustment, ['/body/vehicle/estimated_yearly_mileage']);
    const adjusted = await bind(bindingPolicy(adjustedInput, adjustment));
    assert.equal(adjusted.statusCode, 200, adjusted.body);
  });
});

describe('a quote for a policy that cannot be adjusted', () => {
  test('a cancelled policy’s adjustment quote is refused 409 POLICY_NOT_ACTIVE, not bindable', async () => {
    const input = quoteInput();
    const created = await bind(bindingPolicy(input, await newQuote(input)));
    assert.equal(created.statusCode, 201, created.body);
    const reference = created.json<{ policy_reference: string }>().policy_reference;
    const cancel = await t.app.inject({
      method: 'DELETE',
      url: `/policys/${reference}`,
      headers: acme.sandbox,
      payload: { effective_date: input.policy.start_date, reason: 'sold the car' },
    });
    assert.equal(cancel.statusCode, 200, cancel.body);
    const adjustedInput = quoteInput((q) => {
      (q.policy as { policy_reference: string }).policy_reference = reference;
      (q.proposer as { email: string }).email = input.proposer.email;
    });
    const answer = await postQuote(t, acme.sandbox, adjustedInput, 409);
    const problem = problemOf(answer.body);
    assert.equal(problem.code, 'POLICY_NOT_ACTIVE');
    assert.match(problem.detail ?? '', /cancelled/);
  });
});

describe('new cover from a quote is never backdated', () => {
  // NOW is 13:00 on 20 May 2025 in London, whose day began at 23:00 UTC on the 19th.
  const today = Date.parse('2025-05-19T23:00:00Z') / 1000;
  const nowSeconds = Date.parse(NOW) / 1000;
  const termFrom = (start: number) => (q: Mutable) => {
    Object.assign(q.policy, { start_date: start, end_date: today + 365 * DAY_SECONDS - 1 });
  };

  test('a quote for a day that has passed answers 422 naming policy.start_date', async () => {
    const answer = await postQuote(t, acme.sandbox, quoteInput(termFrom(today - DAY_SECONDS)), 422);
    assert.deepEqual(paths(answer.body), ['/body/policy/start_date']);
    assert.match(answer.body, /day that has passed/);
  });

  test('a quote for today binds from the time of binding: the day’s start is refused, now binds', async () => {
    const input = quoteInput(termFrom(today));
    const quote = await newQuote(input);
    assert.equal(quote.status, 'bindable');
    await refused(bindingPolicy(input, quote, quote.pricing), quote, ['/body/policy/start_date']);
    // Another day is another term, whenever it is bought.
    await refused(changed(input, quote, termFrom(today + DAY_SECONDS)), quote, ['/body/policy/start_date']);
    const bound = await bind(changed(input, quote, termFrom(nowSeconds)));
    assert.equal(bound.statusCode, 201, bound.body);
    // The policy object as sent: the start in Unix seconds.
    assert.equal(bound.json<{ policy: { start_date: number } }>().policy.start_date, nowSeconds);
  });

  test('a quote whose start day passes unbound is expired and binds no more', async () => {
    const tomorrow = today + DAY_SECONDS;
    const input = quoteInput(termFrom(tomorrow));
    const quote = await newQuote(input);
    clock.set('2025-05-22T09:00:00Z');
    try {
      assert.equal((await getQuote(quote.quote_reference)).json<Quote>().status, 'expired');
      const answer = await bind(bindingPolicy(input, quote, quote.pricing));
      assert.equal(answer.statusCode, 409, answer.body);
      assert.equal(problemOf(answer.body).code, 'QUOTE_NOT_BINDABLE');
      assert.match(problemOf(answer.body).detail ?? '', /day that has passed/);
    } finally {
      clock.set(NOW);
    }
  });
});
