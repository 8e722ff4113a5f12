import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { examplePolicyInput } from '../../support/policy-arbitraries.ts';
import { fetchDocument, kindsOf, listDocuments } from './documents-support.ts';

// Automatic renewal (a notice when the terms are stored; certificate and schedule when the daily job
// renews) and a refund's credit note. The example policy's term: 2025-06-01 to 2026-05-31 (London).
const clock = fixedClock('2025-07-20T12:00:00Z');
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;

before(async () => {
  // Jobs run: a refund is made by the payments worker after the cancellation commits.
  t = await createTestApp({ overrides: { clock }, listen: true, startJobs: true });
  acme = await createCompany(t.app, 'Acme Insurance');
});
after(() => t.close());

const work = () => t.container.services.documents.runPending();

/**
 * The policy's documents once every kind named is there. The worker's own loop runs beside this test
 * (jobs are started) and may hold a document's lease while it renders, so one pass of our own may
 * return before that document is stored.
 */
async function documentsOnceMade(reference: string, kinds: readonly string[]) {
  for (let waited = 0; ; waited += 100) {
    await work();
    const documents = await listDocuments(t, acme.sandbox, reference);
    const made = kindsOf(documents);
    const missing = [...kinds];
    for (const kind of made) {
      const i = missing.indexOf(kind);
      if (i >= 0) missing.splice(i, 1);
    }
    if (missing.length === 0) return documents;
    assert.ok(waited < 30_000, `still not made: ${JSON.stringify(missing)} (made: ${JSON.stringify(made)})`);
    await sleep(100);
  }
}

describe('automatic renewal', () => {
  test('terms stored: a renewal notice with last year’s price; renewed at the term’s end: certificate and schedule', async () => {
    const base = examplePolicyInput();
    const { reference } = await make.policy(t.app, acme, { policy: { auto_renew: true } });
    await work();
    const stored = await t.app.inject({
      method: 'POST',
      url: `/policys/${reference}/renewals`,
      headers: acme.sandbox,
      payload: { pricing: { ...base.pricing, usage_rate: 0.06 } },
    });
    assert.equal(stored.statusCode, 202, stored.body);
    let documents = await documentsOnceMade(reference, ['renewal_notice']);
    const notice = documents.find((d) => d.kind === 'renewal_notice');
    assert.ok(notice);
    assert.equal(notice.policy_version_reference, null, 'terms stored, no version yet');
    const { text } = await fetchDocument(t, acme.sandbox, notice);
    assert.match(text, /6(\.0+)?p/, 'the new rate');
    assert.match(text, /4\.5p/, 'last year’s rate');

    const afterEnd = new Date((base.policy.end_date + 3600) * 1000);
    const saved = clock.now();
    clock.set(afterEnd);
    try {
      const ended = await t.container.services.policies.endTerms(afterEnd);
      assert.ok(ended.renewed >= 1);
      const renewed = [
        'certificate',
        'certificate',
        'ipid',
        'renewal_notice',
        'schedule',
        'schedule',
        'statement_of_fact',
      ];
      documents = await documentsOnceMade(reference, renewed);
      assert.deepEqual(kindsOf(documents), renewed);
      const [current] = documents;
      assert.ok(current);
      assert.equal(current.kind, 'certificate');
      assert.equal(current.current, true);
      assert.match(
        (await fetchDocument(t, acme.sandbox, current)).text,
        /31 May 2027/,
        'the new term’s expiry',
      );
    } finally {
      clock.set(saved);
    }
  });
});

describe('refunds', () => {
  test('a cancellation refunded to the card: the notice and a credit note for the refund', async () => {
    const { reference } = await make.cardPaidPolicy(t, acme, {
      pricing: { upfront_premium: 250, subscription_premium: 0 },
    });
    const r = await t.app.inject({
      method: 'DELETE',
      url: `/policys/${reference}`,
      headers: acme.sandbox,
      payload: { reason: 'changed insurer' },
    });
    assert.equal(r.statusCode, 200, r.body);
    type Payment = { type: string; status: string; payment_reference: string; amount: number };
    let refund: Payment | undefined;
    for (let waited = 0; refund?.status !== 'succeeded'; waited += 100) {
      assert.ok(waited < 30_000, `the refund was not made: ${JSON.stringify(refund)}`);
      await sleep(100);
      const read = await t.app.inject({ url: `/policys/${reference}`, headers: acme.sandbox });
      refund = read.json<{ payments: Payment[] }>().payments.find((p) => p.type === 'refund');
    }
    const documents = await documentsOnceMade(reference, ['credit_note', 'cancellation_notice']);
    const note = documents.find((d) => d.kind === 'credit_note');
    assert.ok(note, JSON.stringify(kindsOf(documents)));
    assert.equal(note.payment_reference, refund.payment_reference);
    assert.ok((await fetchDocument(t, acme.sandbox, note)).text.includes(refund.amount.toFixed(2)));
    const cancellation = documents.find((d) => d.kind === 'cancellation_notice');
    assert.ok(cancellation);
    assert.ok((await fetchDocument(t, acme.sandbox, cancellation)).text.includes(refund.amount.toFixed(2)));
  });
});
