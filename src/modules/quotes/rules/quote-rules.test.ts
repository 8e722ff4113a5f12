import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EXAMPLE_QUOTE_INPUT } from '../../rating/rules/index.ts';
import {
  bindability,
  isPseudonymised,
  pricingDifferences,
  pseudonymisedInput,
  type BindableQuote,
} from './quote-rules.ts';

const NOW = new Date('2025-05-20T12:00:00Z');
const quote = (overrides: Partial<BindableQuote> = {}): BindableQuote => ({
  decision: 'accept',
  referralStatus: null,
  expiresAt: new Date('2025-06-19T12:00:00Z'),
  boundAt: null,
  pseudonymisedAt: null,
  policyReference: null,
  ...overrides,
});

describe('bindability', () => {
  test('each state of a quote, for new business', () => {
    const cases: Array<[Partial<BindableQuote>, string]> = [
      [{}, 'ok'],
      [{ decision: 'decline' }, 'DECLINED'],
      [{ decision: 'refer', referralStatus: 'pending' }, 'REFERRAL_PENDING'],
      [{ decision: 'refer', referralStatus: 'declined' }, 'REFERRAL_DECLINED'],
      [{ decision: 'refer', referralStatus: 'approved' }, 'ok'],
      [{ expiresAt: NOW }, 'EXPIRED'],
      [{ pseudonymisedAt: NOW }, 'EXPIRED'],
      [{ boundAt: NOW }, 'BOUND'],
      [{ policyReference: 'amber-falcon-river' }, 'WRONG_POLICY'],
    ];
    for (const [overrides, expected] of cases) {
      const result = bindability(quote(overrides), NOW, undefined);
      assert.equal(result.ok ? 'ok' : result.reason, expected, JSON.stringify(overrides));
    }
  });

  test('an adjustment quote binds in its own policy’s adjustment only; expiry is exclusive', () => {
    const adjustment = quote({ policyReference: 'amber-falcon-river' });
    assert.equal(bindability(adjustment, NOW, 'amber-falcon-river').ok, true);
    assert.deepEqual(bindability(adjustment, NOW, 'quiet-otter-lane'), { ok: false, reason: 'WRONG_POLICY' });
    const justBefore = new Date(quote().expiresAt.getTime() - 1);
    assert.equal(bindability(quote(), justBefore, undefined).ok, true);
  });
});

describe('pricingDifferences', () => {
  const quoted = { usage_rate: 0.0912, upfront_premium: 0, subscription_premium: 31.8, ipt_rate: 12 };
  test('fields left out take the quote’s; each field sent that differs is named', () => {
    assert.deepEqual(
      pricingDifferences({ usage_rate: 0.0912, upfront_premium: 0, subscription_premium: 31.8 }, quoted),
      [],
    );
    const errors = pricingDifferences(
      { usage_rate: 0.09, upfront_premium: 0, subscription_premium: 31.8, ipt_rate: 12 },
      quoted,
    );
    assert.deepEqual(
      errors.map((e) => e.path),
      ['/body/pricing/usage_rate'],
    );
    assert.match(errors[0]?.message ?? '', /0\.09.*0\.0912/);
    const unknownToQuote = pricingDifferences(
      { usage_rate: 0.0912, upfront_premium: 0, subscription_premium: 31.8, withhold_fee: 1 },
      quoted,
    );
    assert.deepEqual(
      unknownToQuote.map((e) => e.path),
      ['/body/pricing/withhold_fee'],
    );
  });
});

describe('pseudonymisedInput', () => {
  test('keeps product, term, cover, use and plan; nothing that names a person or a car', () => {
    const pseudonym = pseudonymisedInput(EXAMPLE_QUOTE_INPUT);
    assert.equal(isPseudonymised(pseudonym), true);
    const text = JSON.stringify(pseudonym);
    for (const value of [
      'Amelia',
      'Clarke',
      'amelia.clarke',
      '1988-03-14',
      'EC1A',
      'AB12 CDE',
      'Flat 3',
      'SP30',
    ])
      assert.ok(!text.includes(value), value);
    assert.equal(pseudonym.policy.product_reference, 'pay-by-mile-car');
    assert.equal(pseudonym.installment_plan, 'monthly');
    assert.deepEqual(pseudonymisedInput(pseudonym), pseudonym, 'idempotent');
  });
});
