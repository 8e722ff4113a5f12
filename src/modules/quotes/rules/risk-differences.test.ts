import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PolicyInput } from '../../policies/rules/index.ts';
import { EXAMPLE_QUOTE_INPUT, type QuoteInput } from '../../rating/rules/index.ts';
import { newBusinessRiskDifferences, riskDifferences } from './risk-differences.ts';

type Loose = Record<string, unknown> & {
  policy: Record<string, unknown> & { address: Record<string, unknown> };
  proposer: Record<string, unknown>;
  vehicle: Record<string, unknown>;
  additional_drivers?: Array<Record<string, unknown>>;
};

const PRICING = { usage_rate: 0.045, upfront_premium: 95.5, subscription_premium: 29.99 };

/** The example quote's policy, with its pricing, changed by `change`. */
function policy(change: (input: Loose) => void = () => {}): PolicyInput {
  const { installment_plan: _plan, ...rest } = structuredClone<QuoteInput>(EXAMPLE_QUOTE_INPUT);
  const input = { ...rest, pricing: PRICING } as unknown as Loose;
  change(input);
  return input as unknown as PolicyInput;
}

const paths = (sent: PolicyInput, quoted: QuoteInput = EXAMPLE_QUOTE_INPUT): string[] =>
  riskDifferences(quoted, sent).map((e) => e.path);

describe('riskDifferences', () => {
  test('the quote’s own input, with its pricing and a payment, is the quoted risk', () => {
    assert.deepEqual(paths(policy((p) => (p['payment'] = { payment_provider: 'stripe' }))), []);
  });

  test('each rated field that differs is named once, with both values', () => {
    const sent = policy((p) => {
      p.policy['end_date'] = 1_800_000_000;
      p.policy['product_reference'] = 'pbm2';
      p.vehicle['group_rating_50'] = 50;
      p.proposer['ncd'] = undefined;
    });
    const errors = riskDifferences(EXAMPLE_QUOTE_INPUT, sent);
    assert.deepEqual(errors.map((e) => e.path).sort(), [
      '/body/policy/end_date',
      '/body/policy/product_reference',
      '/body/proposer/ncd',
      '/body/vehicle/group_rating_50',
    ]);
    const product = errors.find((e) => e.path === '/body/policy/product_reference');
    assert.equal(product?.message, 'is "pbm2"; the quote’s is "pay-by-mile-car"');
    assert.equal(
      errors.find((e) => e.path === '/body/proposer/ncd')?.message,
      'is not set; the quote’s is 4',
    );
  });

  test('lists: a different length names the list, the same length names each item’s field', () => {
    const longer = policy((p) => {
      (p.proposer['convictions'] as unknown[]).push({ code: 'DR10', date: '2025-01-10', ban: 12 });
    });
    assert.deepEqual(paths(longer), ['/body/proposer/convictions']);
    const banned = policy((p) => {
      (p.proposer['convictions'] as Array<Record<string, unknown>>)[0]!['ban'] = 6;
    });
    assert.deepEqual(paths(banned), ['/body/proposer/convictions/0/ban']);
    // An empty list says what a list left out does.
    assert.deepEqual(paths(policy((p) => (p.vehicle['modifications'] = []))), []);
  });

  test('contact details, address lines and the policy’s administration may differ', () => {
    const sent = policy((p) => {
      p.proposer['email'] = 'another@example.com';
      p.proposer['mobile_number'] = '+447700900999';
      p.proposer['title'] = 'Dr';
      p.policy.address['line_1'] = 'Flat 3a';
      p.policy.address['county'] = 'Greater London';
      p.policy.address['postcode'] = 'ec1a1bb';
      p.policy['auto_renew'] = true;
      p.policy['billing_day_date'] = 15;
      p.policy['underwriter_policy_reference'] = 'ACM/1';
      p.policy['created_at'] = 1_700_000_000;
      p['custom'] = { broker: 'direct' };
      p['effective_date'] = 1_750_000_000;
    });
    assert.deepEqual(paths(sent), []);
    // But not the postcode itself, the names or the registration.
    const other = policy((p) => {
      p.policy.address['postcode'] = 'SW1A 1AA';
      p.proposer['last_names'] = 'Smith';
      p.vehicle['reg'] = 'ZZ99 ZZZ';
    });
    assert.deepEqual(paths(other).sort(), [
      '/body/policy/address/postcode',
      '/body/proposer/last_names',
      '/body/vehicle/reg',
    ]);
  });
});

describe('newBusinessRiskDifferences', () => {
  // The example's cover starts at London midnight on 1 June 2025.
  const start = EXAMPLE_QUOTE_INPUT.policy.start_date;
  const startingAt = (seconds: number) => policy((p) => (p.policy['start_date'] = seconds));
  const at = (seconds: number) => new Date(seconds * 1000);
  const startPaths = (sent: PolicyInput, now: Date) =>
    newBusinessRiskDifferences(EXAMPLE_QUOTE_INPUT, sent, now).map((e) => e.path);

  test('bought before its start day: the quote’s start; on it: any time of that day from the purchase', () => {
    assert.deepEqual(startPaths(startingAt(start), at(start - 86_400)), []);
    assert.deepEqual(startPaths(startingAt(start + 9 * 3_600), at(start + 9 * 3_600)), []);
    // The request's time in flight and the sender's clock: five minutes.
    assert.deepEqual(startPaths(startingAt(start + 9 * 3_600), at(start + 9 * 3_600 + 300)), []);
  });

  test('never backdated: not before the purchase, the quote’s start, or on another day', () => {
    const path = ['/body/policy/start_date'];
    assert.deepEqual(startPaths(startingAt(start), at(start + 9 * 3_600)), path);
    assert.deepEqual(startPaths(startingAt(start - 1), at(start - 86_400)), path);
    assert.deepEqual(startPaths(startingAt(start + 86_400), at(start)), path);
    // Every other rated field is still compared.
    const other = policy((p) => {
      p.policy['start_date'] = start + 3_600;
      p.vehicle['reg'] = 'ZZ99 ZZZ';
    });
    assert.deepEqual(startPaths(other, at(start + 3_600)), ['/body/vehicle/reg']);
  });
});
