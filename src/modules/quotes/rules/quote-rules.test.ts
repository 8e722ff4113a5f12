import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EXAMPLE_QUOTE_INPUT } from '../../rating/rules/index.ts';
import {
  bindability,
  boundStartSeconds,
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
  input: { policy: { start_date: EXAMPLE_QUOTE_INPUT.policy.start_date } },
  ...overrides,
});
const startingAt = (at: string) => ({ input: { policy: { start_date: Date.parse(at) / 1000 } } });

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
      // NOW is 13:00 on 20 May in London: cover from that day's midnight still sells, from the day before not.
      [startingAt('2025-05-19T23:00:00Z'), 'ok'],
      [startingAt('2025-05-19T22:59:59Z'), 'START_PASSED'],
      [{ ...startingAt('2025-05-01T00:00:00Z'), expiresAt: NOW }, 'EXPIRED'],
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
    const startingLater = quote(startingAt('2025-07-01T00:00:00Z'));
    const justBefore = new Date(startingLater.expiresAt.getTime() - 1);
    assert.equal(bindability(startingLater, justBefore, undefined).ok, true);
    // An adjustment's term began before it: its start is the policy's, not a sale of new cover.
    const adjusting = quote({ policyReference: 'amber-falcon-river', ...startingAt('2025-01-01T00:00:00Z') });
    assert.equal(bindability(adjusting, NOW, 'amber-falcon-river').ok, true);
  });

  test('cover bought on its start day starts when it is bought, to the second; a later start is kept', () => {
    const midnight = Date.parse('2025-05-19T23:00:00Z') / 1000;
    assert.equal(
      boundStartSeconds(midnight, new Date('2025-05-20T12:00:00.001Z')),
      Date.parse(NOW.toISOString()) / 1000 + 1,
    );
    assert.equal(boundStartSeconds(midnight, new Date('2025-05-19T23:00:00Z')), midnight);
    const tomorrow = midnight + 86_400;
    assert.equal(boundStartSeconds(tomorrow, NOW), tomorrow);
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
