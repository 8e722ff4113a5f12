import assert from 'node:assert/strict';
import type { QuoteInput } from '../../../src/modules/rating/rules/index.ts';
import { EXAMPLE_QUOTE_INPUT } from '../../../src/modules/rating/rules/example-rate-book.ts';
import type { TestApp } from '../../support/app.ts';
import type { SignedInStaff } from '../staff/staff-support.ts';
import { exampleRateBookContent, make } from '../rating/rate-book-support.ts';

type Headers = Record<string, string>;

export interface Quote {
  quote_reference: string;
  quote_version_reference: string;
  quote_model_reference: string;
  rate_book_reference: string;
  rate_book_version: number;
  policy_reference: string | null;
  status: 'bindable' | 'referred' | 'declined' | 'expired' | 'bound';
  pricing: Record<string, number | string | undefined> & { upfront_premium: number; usage_rate: number };
  breakdown: { factors: Array<{ name: string; customer_visible: boolean }> };
  decision: { outcome: string; reasons: Array<{ rule: number; outcome: string; reason: string }> };
  referral: { status: string; reason: string | null; decided_by: string | null } | null;
  expires_at: string;
  created_at: string;
  bound_at: string | null;
  pseudonymised: boolean;
  input?: unknown;
}

export interface Problem {
  code: string;
  errors?: Array<{ path: string; message: string }>;
}

/** The worked example's quote for a new email (so each policy bound from it gets its own account). */
export function quoteInput(overrides: (input: QuoteInput & Record<string, unknown>) => void = () => {}) {
  const input = structuredClone(EXAMPLE_QUOTE_INPUT) as QuoteInput & Record<string, unknown>;
  const unique = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  (input.proposer as { email: string }).email = `applicant.${unique}@example.com`;
  overrides(input);
  return input;
}

/** The company's product `pay-by-mile-car` and its rate book, the worked example's version approved. */
export async function rateBookFor(
  t: TestApp,
  company: { sandbox: Headers; client_id: string },
  author: SignedInStaff,
  approver: SignedInStaff,
): Promise<void> {
  await make.rateBook(t, company.sandbox, 'pay-by-mile-car', 'car-rates');
  const as = (staff: SignedInStaff) => ({
    ...staff.headers,
    client_id: company.client_id,
    environment: 'sandbox',
  });
  await make.approvedVersion(t, 'car-rates', as(author), as(approver), exampleRateBookContent());
}

/** POST /quotes, asserting the status. */
export async function postQuote(t: TestApp, headers: Headers, input: object, status = 201) {
  const answer = await t.app.inject({ method: 'POST', url: '/quotes', headers, payload: input });
  assert.equal(answer.statusCode, status, answer.body);
  return answer;
}

/** The policy object that binds `quote`: its input as a policy, with the pricing the quote gave. */
export function bindingPolicy(input: QuoteInput, quote: Quote, pricing: object = {}) {
  const { installment_plan: _plan, ...policy } = input;
  return {
    ...policy,
    pricing: {
      quote_reference: quote.quote_reference,
      usage_rate: quote.pricing.usage_rate,
      upfront_premium: quote.pricing.upfront_premium,
      subscription_premium: quote.pricing['subscription_premium'],
      ...pricing,
    },
  };
}
