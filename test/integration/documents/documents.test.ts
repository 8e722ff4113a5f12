import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { examplePolicyInput } from '../../support/policy-arbitraries.ts';
import { fetchDocument, kindsOf, listDocuments, type ListedDocument } from './documents-support.ts';

// Inside the example policy's term (2025-06-01 to 2026-05-31 London).
const clock = fixedClock('2025-07-20T12:00:00Z');
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let other: Awaited<ReturnType<typeof createCompany>>;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme Insurance');
  other = await createCompany(t.app, 'Other Insurance');
});
after(() => t.close());

/** The worker's pass: every queued event expanded and every document due made. */
const work = () => t.container.services.documents.runPending();

describe('documents each change owes, made by the worker', () => {
  test('new business: certificate, schedule, IPID and statement of fact, the certificate current and first', async () => {
    const { reference, body } = await make.policy(t.app, acme, { vehicle: { reg: 'DOC1 NB' } });
    assert.deepEqual(await listDocuments(t, acme.sandbox, reference), [], 'none before the worker runs');
    await work();
    const documents = await listDocuments(t, acme.sandbox, reference);
    assert.deepEqual(kindsOf(documents), ['certificate', 'ipid', 'schedule', 'statement_of_fact']);
    const [certificate] = documents;
    assert.ok(certificate);
    assert.equal(certificate.kind, 'certificate');
    assert.equal(certificate.current, true);
    assert.equal(documents.filter((d) => d.current).length, 1);
    for (const d of documents) {
      assert.equal(d.policy_version_reference, body.policy_version_reference);
      assert.equal(d.policy_reference, reference);
      assert.match(d.sha256, /^[0-9a-f]{64}$/);
      assert.ok(d.size_bytes > 1000);
      assert.equal(d.url, `/documents/${d.id}`);
    }
    const { text } = await fetchDocument(t, acme.sandbox, certificate);
    assert.match(text, /DOC1 NB/);
    assert.match(text, /Amelia Rose Clarke/);
    const schedule = documents.find((d) => d.kind === 'schedule') as ListedDocument;
    assert.match((await fetchDocument(t, acme.sandbox, schedule)).text, /DOC1 NB/);
  });

  test('made exactly once: passes run twice, and two at once, store each document once', async () => {
    const { reference } = await make.policy(t.app, acme);
    await Promise.all([work(), work()]);
    await work();
    const documents = await listDocuments(t, acme.sandbox, reference);
    assert.equal(documents.length, 4);
    const owed = await t.container.database.db.selectFrom('documents_owed').select('id').execute();
    assert.equal(owed.length, 0, 'nothing left owed');
  });

  test('adjustment: a schedule always, a certificate only when car, drivers, use or term change', async () => {
    const policy = await make.policy(t.app, acme);
    await work();
    clock.advance(60_000);
    await make.adjustment(t.app, acme, policy, { policy: { voluntary_excess: 250 } });
    await work();
    let documents = await listDocuments(t, acme.sandbox, policy.reference);
    assert.deepEqual(kindsOf(documents), [
      'certificate',
      'ipid',
      'schedule',
      'schedule',
      'statement_of_fact',
    ]);
    clock.advance(60_000);
    await make.adjustment(t.app, acme, policy, { vehicle: { reg: 'NEW 0NE' } });
    await work();
    documents = await listDocuments(t, acme.sandbox, policy.reference);
    assert.equal(documents.filter((d) => d.kind === 'certificate').length, 2);
    const current = documents[0] as ListedDocument;
    assert.equal(current.kind, 'certificate');
    assert.equal(current.current, true);
    assert.match((await fetchDocument(t, acme.sandbox, current)).text, /NEW 0NE/);
    const older = documents.filter((d) => d.kind === 'certificate' && !d.current);
    assert.equal(older.length, 1, 'the first certificate stays, as issued');
  });

  test('the certificate states the whole class of use: business class 1 covers commuting too', async () => {
    const { reference } = await make.policy(t.app, acme, { policy: { usage: 'business_class_1' } });
    await work();
    const certificate = (await listDocuments(t, acme.sandbox, reference))[0] as ListedDocument;
    assert.equal(certificate.kind, 'certificate');
    const text = (await fetchDocument(t, acme.sandbox, certificate)).text.replace(/\s+/g, ' ');
    assert.match(
      text,
      /social, domestic and pleasure purposes, commuting, and in person by the policyholder/,
    );
    assert.match(text, /spouse or civil partner in connection with their business or profession/);
  });

  test('statement: the statement with its total', async () => {
    const { reference } = await make.policy(t.app, acme);
    await make.journey(t.app, acme, reference, '2025-06-10T08:00:00Z');
    const statement = await make.statement(t.app, acme, reference, '2025-06-30T22:59:59Z');
    await work();
    const documents = await listDocuments(t, acme.sandbox, reference);
    const issued = documents.find((d) => d.kind === 'statement') as ListedDocument;
    assert.equal(issued.policy_version_reference, statement.policy_version_reference);
    const { text } = await fetchDocument(t, acme.sandbox, issued);
    const total = (statement as unknown as { total_premium: number }).total_premium.toFixed(2);
    assert.ok(text.includes(total), `the statement shows its total £${total}`);
    assert.ok(!text.includes('DOC1 NB'), 'no text of another policy');
  });

  test('cancellation: the cancellation notice', async () => {
    const { reference } = await make.policy(t.app, acme);
    const r = await t.app.inject({
      method: 'DELETE',
      url: `/policys/${reference}`,
      headers: acme.sandbox,
      payload: { reason: 'sold the car' },
    });
    assert.equal(r.statusCode, 200, r.body);
    await work();
    const documents = await listDocuments(t, acme.sandbox, reference);
    const notice = documents.find((d) => d.kind === 'cancellation_notice');
    assert.ok(notice !== undefined, 'a cancellation notice');
    assert.equal(
      documents.some((d) => d.current),
      false,
      'no current certificate once cancelled',
    );
    assert.match((await fetchDocument(t, acme.sandbox, notice)).text, /sold the car/);
    // Its certificate is not issued again: that would certify cover the policy no longer has.
    const certificate = documents.find((d) => d.kind === 'certificate');
    assert.ok(certificate !== undefined);
    const reissue = await t.app.inject({
      method: 'POST',
      url: `/policys/${reference}/documents/${certificate.id}/reissue`,
      headers: acme.sandbox,
      payload: { reason: 'lost it' },
    });
    assert.equal(reissue.statusCode, 409, reissue.body);
    assert.match(reissue.body, /no longer in cover/);
    assert.equal((await listDocuments(t, acme.sandbox, reference)).length, documents.length);
  });

  test('renewal written early: its notice now, certificate and schedule at the new term’s start', async () => {
    const { input, reference } = await make.policy(t.app, acme, { policy: { auto_renew: false } });
    await work();
    const r = await t.app.inject({
      method: 'POST',
      url: `/policys/${reference}/renewals`,
      headers: acme.sandbox,
      payload: { pricing: { ...input.pricing, usage_rate: 0.05 } },
    });
    assert.equal(r.statusCode, 201, r.body);
    await work();
    let documents = await listDocuments(t, acme.sandbox, reference);
    assert.deepEqual(kindsOf(documents), [
      'certificate',
      'ipid',
      'renewal_notice',
      'schedule',
      'statement_of_fact',
    ]);
    const notice = documents.find((d) => d.kind === 'renewal_notice') as ListedDocument;
    const { text } = await fetchDocument(t, acme.sandbox, notice);
    assert.match(text, /5(\.0+)?p/, 'the new rate, 5p a mile');
    assert.match(text, /4\.5p/, 'last year’s rate beside it');
    const saved = clock.now();
    clock.set(new Date((input.policy.end_date + 2) * 1000));
    try {
      await work();
      documents = await listDocuments(t, acme.sandbox, reference);
      assert.equal(documents.filter((d) => d.kind === 'certificate').length, 2);
      assert.equal(documents.filter((d) => d.kind === 'schedule').length, 2);
    } finally {
      clock.set(saved);
    }
  });

  test('a void of a billed journey: a credit note', async () => {
    const { reference } = await make.policy(t.app, acme);
    const journey = await make.journey(t.app, acme, reference, '2025-06-12T08:00:00Z');
    await make.statement(t.app, acme, reference, '2025-06-30T22:59:59Z');
    const r = await t.app.inject({
      method: 'POST',
      url: `/journeys/${(journey as { journey_reference: string }).journey_reference}/void`,
      headers: acme.sandbox,
      payload: { reason: 'not my car' },
    });
    assert.equal(r.statusCode, 200, r.body);
    await work();
    const documents = await listDocuments(t, acme.sandbox, reference);
    const note = documents.find((d) => d.kind === 'credit_note') as ListedDocument;
    assert.equal(note.journey_reference, (journey as { journey_reference: string }).journey_reference);
    assert.match((await fetchDocument(t, acme.sandbox, note)).text, /not my car/);
  });
});

describe('GET /policys/:policy_reference/documents and GET /documents/:document_id', () => {
  test('another company’s policy and document answer 404; a bad id 422', async () => {
    const { reference } = await make.policy(t.app, acme);
    await work();
    const [first] = await listDocuments(t, acme.sandbox, reference);
    const list = await t.app.inject({
      method: 'GET',
      url: `/policys/${reference}/documents`,
      headers: other.sandbox,
    });
    assert.equal(list.statusCode, 404, list.body);
    const read = await t.app.inject({
      method: 'GET',
      url: `/documents/${first?.id ?? ''}`,
      headers: other.sandbox,
    });
    assert.equal(read.statusCode, 404, read.body);
    const production = await t.app.inject({
      method: 'GET',
      url: `/documents/${first?.id ?? ''}`,
      headers: acme.production,
    });
    assert.equal(production.statusCode, 404, 'another environment’s');
    const bad = await t.app.inject({ method: 'GET', url: '/documents/not-a-uuid', headers: acme.sandbox });
    assert.equal(bad.statusCode, 422, bad.body);
    const none = await t.app.inject({
      method: 'GET',
      url: `/policys/no-such-policy/documents`,
      headers: acme.sandbox,
    });
    assert.equal(none.statusCode, 404);
    const anonymous = await t.app.inject({ method: 'GET', url: `/documents/${first?.id ?? ''}` });
    assert.equal(anonymous.statusCode, 401);
  });
});

describe('POST /policys/:policy_reference/documents/:document_id/reissue', () => {
  test('a new document of the same subject, the original kept; validation and 404', async () => {
    const { reference } = await make.policy(t.app, acme);
    await work();
    const before = await listDocuments(t, acme.sandbox, reference);
    const certificate = before[0] as ListedDocument;
    clock.advance(60_000);
    const url = `/policys/${reference}/documents/${certificate.id}/reissue`;
    const r = await t.app.inject({
      method: 'POST',
      url,
      headers: acme.sandbox,
      payload: { reason: 'lost it' },
    });
    assert.equal(r.statusCode, 201, r.body);
    const reissued = r.json<ListedDocument>();
    assert.equal(reissued.kind, 'certificate');
    assert.equal(reissued.reissue_of, certificate.id);
    assert.equal(reissued.policy_version_reference, certificate.policy_version_reference);
    assert.equal(reissued.current, true);
    const after = await listDocuments(t, acme.sandbox, reference);
    assert.equal(after.length, before.length + 1);
    assert.equal(after[0]?.id, reissued.id, 'the reissue is now the current certificate');
    assert.ok(after.some((d) => d.id === certificate.id && d.sha256 === certificate.sha256));

    const missing = await t.app.inject({ method: 'POST', url, headers: acme.sandbox, payload: {} });
    assert.equal(missing.statusCode, 422, missing.body);
    const theirs = await t.app.inject({
      method: 'POST',
      url,
      headers: other.sandbox,
      payload: { reason: 'x' },
    });
    assert.equal(theirs.statusCode, 404, theirs.body);
    const { reference: another } = await make.policy(t.app, acme);
    const wrongPolicy = await t.app.inject({
      method: 'POST',
      url: `/policys/${another}/documents/${certificate.id}/reissue`,
      headers: acme.sandbox,
      payload: { reason: 'x' },
    });
    assert.equal(wrongPolicy.statusCode, 404, 'a document of another policy');
  });
});

describe('GET and PUT /documents/settings', () => {
  test('attachments are off by default; a company turns them on for its environment', async () => {
    const company = await createCompany(t.app, 'Settings Insurer');
    const read = await t.app.inject({ method: 'GET', url: '/documents/settings', headers: company.sandbox });
    assert.deepEqual(read.json(), { attach_to_emails: false, updated_at: null });
    const bad = await t.app.inject({
      method: 'PUT',
      url: '/documents/settings',
      headers: company.sandbox,
      payload: { attach_to_emails: 'yes' },
    });
    assert.equal(bad.statusCode, 422);
    const saved = await t.app.inject({
      method: 'PUT',
      url: '/documents/settings',
      headers: company.sandbox,
      payload: { attach_to_emails: true },
    });
    assert.equal(saved.statusCode, 200, saved.body);
    assert.equal(saved.json<{ attach_to_emails: boolean }>().attach_to_emails, true);
    const production = await t.app.inject({
      method: 'GET',
      url: '/documents/settings',
      headers: company.production,
    });
    assert.equal(production.json<{ attach_to_emails: boolean }>().attach_to_emails, false);
    const anonymous = await t.app.inject({ method: 'GET', url: '/documents/settings' });
    assert.equal(anonymous.statusCode, 401);
  });
});

describe('a renewal withdrawn before its notice is made', () => {
  const storeTerms = async (reference: string) => {
    const r = await t.app.inject({
      method: 'POST',
      url: `/policys/${reference}/renewals`,
      headers: acme.sandbox,
      payload: { pricing: { ...examplePolicyInput().pricing, usage_rate: 0.06 } },
    });
    assert.equal(r.statusCode, 202, r.body);
  };
  const cancel = async (reference: string) => {
    const r = await t.app.inject({
      method: 'DELETE',
      url: `/policys/${reference}`,
      headers: acme.sandbox,
      payload: { reason: 'changed insurer' },
    });
    assert.equal(r.statusCode, 200, r.body);
  };
  const owedOf = async (reference: string) =>
    t.container.database.db
      .selectFrom('documents_owed')
      .innerJoin('policies', 'policies.id', 'documents_owed.policy_id')
      .select(['documents_owed.kind', 'documents_owed.last_error'])
      .where('policies.policy_reference', '=', reference)
      .execute();

  test('the notice owed is dropped, not retried; a reissue of an earlier notice answers 409', async () => {
    const withdrawn = await make.policy(t.app, acme, { policy: { auto_renew: true } });
    await work();
    await storeTerms(withdrawn.reference);
    await cancel(withdrawn.reference);
    await work();
    assert.deepEqual(await owedOf(withdrawn.reference), [], 'nothing left owed, nothing to retry');
    const kinds = kindsOf(await listDocuments(t, acme.sandbox, withdrawn.reference));
    assert.ok(kinds.includes('cancellation_notice'), JSON.stringify(kinds));
    assert.ok(!kinds.includes('renewal_notice'), JSON.stringify(kinds));

    const made = await make.policy(t.app, acme, { policy: { auto_renew: true } });
    await storeTerms(made.reference);
    await work();
    const notice = (await listDocuments(t, acme.sandbox, made.reference)).find(
      (d) => d.kind === 'renewal_notice',
    );
    assert.ok(notice, 'made while the terms stood');
    await cancel(made.reference);
    const reissue = await t.app.inject({
      method: 'POST',
      url: `/policys/${made.reference}/documents/${notice.id}/reissue`,
      headers: acme.sandbox,
      payload: { reason: 'lost it' },
    });
    assert.equal(reissue.statusCode, 409, reissue.body);
  });
});
