import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { decide, EXAMPLE_QUOTE_INPUT, EXAMPLE_RATE_BOOK, rate } from '../rating/rules/index.ts';
import type { QuoteRecord } from './quote-repository.ts';
import { BreakdownSchema, QuoteSchema } from './quote-schemas.ts';
import { quoteJson, quoteView } from './quote-views.ts';

const NOW = new Date('2025-05-20T12:00:00Z');

/** The serializer Fastify compiles for the 201 answer's `Quote` schema. */
const serialize = SerializerSelector()({ QuoteBreakdown: BreakdownSchema }, {})({
  schema: QuoteSchema,
  method: 'POST',
  url: '/quotes',
  httpStatus: '201',
}) as (data: unknown) => string;

function quoteRecord(overrides: Partial<QuoteRecord> = {}): QuoteRecord {
  const rated = rate(EXAMPLE_RATE_BOOK, EXAMPLE_QUOTE_INPUT, '2025-06-01');
  if (!rated.ok) throw new Error('the example rates');
  const decision = decide(EXAMPLE_RATE_BOOK, EXAMPLE_QUOTE_INPUT, '2025-06-01');
  return {
    id: '6f1d1b8e-6c43-4a37-9a57-7f6f1c1c0a01',
    companyId: '6f1d1b8e-6c43-4a37-9a57-7f6f1c1c0a02',
    environment: 'sandbox',
    reference: '6f1d1b8e-6c43-4a37-9a57-7f6f1c1c0a03',
    versionReference: '6f1d1b8e-6c43-4a37-9a57-7f6f1c1c0a04',
    rateBookVersionId: '6f1d1b8e-6c43-4a37-9a57-7f6f1c1c0a05',
    rateBookReference: 'car-rates',
    rateBookVersion: 1,
    policyReference: null,
    applicantEmail: EXAMPLE_QUOTE_INPUT.proposer.email,
    input: EXAMPLE_QUOTE_INPUT,
    pricing: rated.value.pricing,
    breakdown: rated.value.breakdown,
    decision: decision.decision,
    reasons: decision.reasons,
    referralStatus: null,
    referralReason: null,
    referralDecidedBy: null,
    referralDecidedAt: null,
    createdAt: NOW,
    expiresAt: new Date('2025-06-19T12:00:00Z'),
    pseudonymisedAt: null,
    boundAt: null,
    boundPolicyId: null,
    purchaseSecretHash: null,
    ...overrides,
  };
}

const storedTexts = (quote: QuoteRecord) => ({
  input: JSON.stringify(quote.input),
  breakdown: JSON.stringify(quote.breakdown),
});

describe('quoteJson', () => {
  test('writes what the Quote schema’s serializer writes, in its order of fields, for each audience and state', () => {
    const made = quoteRecord();
    const referred = quoteRecord({
      decision: 'refer',
      policyReference: 'amber-falcon-river',
      referralStatus: 'approved',
      referralReason: 'Checked the claims “by hand”',
      referralDecidedBy: 'staff:underwriter@example.com',
      referralDecidedAt: NOW,
      boundAt: NOW,
    });
    for (const quote of [made, { ...made, storedTexts: storedTexts(made) }, referred])
      for (const audience of ['full', 'customer'] as const)
        for (const secret of [undefined, 'c2VjcmV0LXNlY3JldA']) {
          const view = quoteView(quote, NOW, audience);
          const expected = JSON.parse(
            serialize(secret === undefined ? view : { ...view, purchase_secret: secret }),
          ) as object;
          const written = JSON.parse(quoteJson(view, quote, secret)) as object;
          const label = `${audience}, secret ${String(secret)}, texts ${String(quote.storedTexts !== undefined)}`;
          assert.deepEqual(written, expected, label);
          assert.deepEqual(Object.keys(written), Object.keys(expected), label);
        }
  });

  test('a quote just stored is answered with the texts of its input and breakdown as stored', () => {
    const made = quoteRecord();
    // Indented, so that texts made afresh would differ from them.
    const texts = {
      input: JSON.stringify(made.input, null, 1),
      breakdown: JSON.stringify(made.breakdown, null, 1),
    };
    const json = quoteJson(quoteView(made, NOW, 'full'), { ...made, storedTexts: texts });
    assert.ok(json.includes(`"breakdown":${texts.breakdown},"decision":`));
    assert.ok(json.endsWith(`"input":${texts.input}}`));
    // The customer's breakdown is not the stored one (factors are left out): it is written afresh.
    const customer = quoteJson(quoteView(made, NOW, 'customer'), { ...made, storedTexts: texts });
    assert.ok(!customer.includes(texts.breakdown));
    assert.ok(!customer.includes('"input"'));
  });
});

describe('quoteView', () => {
  test('the applicant is not told which staff member decided a referral', () => {
    const referred = quoteRecord({
      decision: 'refer',
      referralStatus: 'approved',
      referralReason: 'Checked the import papers',
      referralDecidedBy: 'staff:underwriter@example.com',
      referralDecidedAt: NOW,
    });
    assert.equal(quoteView(referred, NOW, 'full').referral?.decided_by, 'staff:underwriter@example.com');
    const shown = quoteView(referred, NOW, 'customer').referral;
    assert.deepEqual(
      { reason: shown?.reason, decided_by: shown?.decided_by },
      { reason: 'Checked the import papers', decided_by: null },
    );
  });
});
