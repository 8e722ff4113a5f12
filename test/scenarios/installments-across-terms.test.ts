import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fixedClock } from '../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../support/app.ts';
import { make } from '../support/factories.ts';

const unix = (iso: string): number => Date.parse(iso) / 1000;
const clock = fixedClock('2025-12-01T12:00:00Z');
let t: TestApp;
let company: Awaited<ReturnType<typeof createCompany>>;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  company = await createCompany(t.app);
});
after(() => t.close());

/**
 * A policy from 2025-01-15, renewed in December for 2026-01-15 and billed for the first time on
 * 2026-02-20: one statement spans both terms and carries the installments that fell due in each, at
 * each term's price.
 */
for (const [plan, installmentsFirst, installmentsSecond] of [
  [12, 12, 2],
  [4, 4, 2],
  [1, 1, 1],
] as const) {
  test(`${String(plan)} installment(s) a term: every installment of both terms is billed once`, async () => {
    const { reference, input } = await make.policy(t.app, company, {
      proposer: { email: `terms${String(plan)}@example.com` },
      policy: {
        start_date: unix('2025-01-15T00:00:00Z'),
        end_date: unix('2026-01-14T23:59:59Z'),
        inception_date: unix('2025-01-15T00:00:00Z'),
        billing_day_date: 15,
        auto_renew: false,
      },
      pricing: { subscription_premium: 10, subscription_installments: plan },
    });
    const renewed = await t.app.inject({
      method: 'POST',
      url: `/policys/${reference}/renewals`,
      headers: company.sandbox,
      payload: { pricing: { ...input.pricing, subscription_premium: 12 } },
    });
    assert.equal(renewed.statusCode, 201, renewed.body);

    clock.set('2026-02-20T12:00:00Z');
    const body = await make.statement(t.app, company, reference, '2026-02-20T00:00:00Z');
    assert.equal(body.subscription_installments, installmentsFirst + installmentsSecond);
    assert.equal(body.subscription_premium, installmentsFirst * 10 + installmentsSecond * 12);

    // The next month carries only what fell due in it: nothing billed twice.
    clock.set('2026-03-20T12:00:00Z');
    const next = await make.statement(t.app, company, reference, '2026-03-20T00:00:00Z');
    assert.equal(next.subscription_installments, plan > 2 ? 1 : 0);
    clock.set('2025-12-01T12:00:00Z');
  });
}
