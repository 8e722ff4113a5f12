import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, signedInPolicyholder, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { examplePolicyInput } from '../../support/policy-arbitraries.ts';
import { startSmtpServer } from '../../support/smtp.ts';
import { signInStaff } from '../staff/staff-support.ts';
import { fetchDocument, kindsOf, listDocuments, pdfText } from './documents-support.ts';

// Who reaches documents (policyholders, staff by role), the emails that link and carry them, and
// what data protection does with them. The example policy's term: 2025-06-01 to 2026-05-31 (London).
const clock = fixedClock('2025-07-20T12:00:00Z');
let t: TestApp;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let acme: Awaited<ReturnType<typeof createCompany>>;

before(async () => {
  smtp = await startSmtpServer();
  t = await createTestApp({
    overrides: { clock },
    env: { SMTP_URL: smtp.url, PUBLIC_BASE_URL: 'https://cover.example.com' },
  });
  acme = await createCompany(t.app, 'Acme Insurance');
});
after(async () => {
  await t.close();
  await smtp.close();
});

const work = () => t.container.services.documents.runPending();

describe('a policyholder’s own documents', () => {
  test('their token lists and opens their documents; another policyholder’s answer 404', async () => {
    const input = (email: string) => ({
      ...examplePolicyInput(),
      proposer: { ...examplePolicyInput().proposer, email },
    });
    const holder = await signedInPolicyholder(
      t,
      acme.sandbox,
      'doc-holder@example.com',
      input('doc-holder@example.com'),
    );
    const stranger = await signedInPolicyholder(
      t,
      acme.sandbox,
      'doc-stranger@example.com',
      input('doc-stranger@example.com'),
    );
    await work();
    const bearer = (who: { accessToken: string }) => ({
      authorization: `Bearer ${who.accessToken}`,
      client_id: acme.client_id,
    });
    const documents = await listDocuments(t, bearer(holder), holder.policyReference);
    assert.equal(documents.length, 4);
    const [certificate] = documents;
    assert.ok(certificate);
    await fetchDocument(t, bearer(holder), certificate);
    const list = await t.app.inject({
      method: 'GET',
      url: `/policys/${holder.policyReference}/documents`,
      headers: bearer(stranger),
    });
    assert.equal(list.statusCode, 404, list.body);
    const read = await t.app.inject({
      method: 'GET',
      url: `/documents/${certificate.id}`,
      headers: bearer(stranger),
    });
    assert.equal(read.statusCode, 404, read.body);
  });
});

describe('staff', () => {
  test('viewers read a policy’s documents; operations reissue, audited; viewers may not', async () => {
    const { reference } = await make.policy(t.app, acme);
    await work();
    const viewer = await signInStaff(t, 'doc-viewer@example.com', 'viewer');
    const ops = await signInStaff(t, 'doc-ops@example.com', 'operations');
    const as = (who: { headers: Record<string, string> }) => ({
      ...who.headers,
      client_id: acme.client_id,
      environment: 'sandbox',
    });
    const documents = await listDocuments(t, as(viewer), reference);
    const [certificate] = documents;
    assert.ok(certificate);
    const url = `/policys/${reference}/documents/${certificate.id}/reissue`;
    const denied = await t.app.inject({
      method: 'POST',
      url,
      headers: as(viewer),
      payload: { reason: 'lost' },
    });
    assert.equal(denied.statusCode, 403, denied.body);
    const done = await t.app.inject({
      method: 'POST',
      url,
      headers: as(ops),
      payload: { reason: 'posted copy lost' },
    });
    assert.equal(done.statusCode, 201, done.body);
    const audit = await t.app.inject({
      method: 'GET',
      url: `/admin/audit?policy_reference=${reference}&company_reference=${acme.company_reference}&environment=sandbox`,
      headers: t.adminHeaders,
    });
    assert.equal(audit.statusCode, 200, audit.body);
    assert.match(audit.body, /documents\.reissue/);
    assert.match(audit.body, /posted copy lost/);
    assert.match(audit.body, /doc-ops@example\.com/);
  });
});

describe('emails', () => {
  test('each change’s email links the documents page of the web app', async () => {
    const { reference, email } = await make.policy(t.app, acme);
    const [welcome] = await t.container.services.notifications.emailsTo(email);
    const link = /^Your documents: (\S+)$/m.exec(welcome?.text ?? '')?.[1];
    assert.ok(link !== undefined, welcome?.text ?? 'no welcome email');
    const url = new URL(link);
    assert.equal(url.origin + url.pathname, 'https://cover.example.com/app/documents');
    assert.equal(url.searchParams.get('policy'), reference);
    assert.equal(url.searchParams.get('client_id'), acme.client_id);
    const r = await t.app.inject({ method: 'DELETE', url: `/policys/${reference}`, headers: acme.sandbox });
    assert.equal(r.statusCode, 200, r.body);
    const cancelled = (await t.container.services.notifications.emailsTo(email)).find(
      (e) => e.template === 'policy-cancelled',
    );
    assert.match(cancelled?.text ?? '', /^Your documents: https:\/\/cover\.example\.com\/app\/documents\?/m);
  });

  test('with attachments chosen, the policyholder gets the change’s documents as PDFs, once', async () => {
    const company = await createCompany(t.app, 'Attaching Insurance');
    const saved = await t.app.inject({
      method: 'PUT',
      url: '/documents/settings',
      headers: company.sandbox,
      payload: { attach_to_emails: true },
    });
    assert.equal(saved.statusCode, 200, saved.body);
    const { email } = await make.policy(t.app, company);
    await work();
    await work();
    const attached = (await t.container.services.notifications.emailsTo(email)).filter(
      (e) => e.template === 'documents-issued',
    );
    assert.equal(attached.length, 1, 'one email for the change’s four documents');
    await t.container.services.notifications.deliver([attached[0]?.id ?? ''], 0);
    const [received] = await smtp.waitFor(email.toLowerCase());
    assert.ok(received);
    const pdfs = received.raw.match(/Content-Type: application\/pdf/g) ?? [];
    assert.equal(pdfs.length, 4, 'certificate, schedule, IPID and statement of fact attached');
    assert.match(received.raw, /filename=.?certificate-/);

    const { email: plain } = await make.policy(t.app, acme);
    await work();
    const none = (await t.container.services.notifications.emailsTo(plain)).filter(
      (e) => e.template === 'documents-issued',
    );
    assert.equal(none.length, 0, 'no attachments unless the company chose them');
  });
});

describe('data protection', () => {
  test('the subject access export holds the documents; erasure keeps only certificates and schedules in their period', async () => {
    const { reference, body, email } = await make.policy(t.app, acme, {
      proposer: { first_names: 'Gwenllian', last_names: 'Wiśniewska' },
    });
    await make.journey(t.app, acme, reference, '2025-06-10T08:00:00Z');
    await make.statement(t.app, acme, reference, '2025-06-30T22:59:59Z');
    await work();
    const issued = await listDocuments(t, acme.sandbox, reference);
    assert.deepEqual(kindsOf(issued), ['certificate', 'ipid', 'schedule', 'statement', 'statement_of_fact']);
    const userReference = body.user_reference;

    const exported = await t.app.inject({
      method: 'GET',
      url: `/admin/policyholders/${userReference}/export`,
      headers: t.adminHeaders,
    });
    assert.equal(exported.statusCode, 200, exported.body);
    const doc = exported.json<{
      documents: Array<{
        id: string;
        kind: string;
        sha256: string;
        content_base64: string;
        policy_reference: string;
      }>;
      contents: Record<string, number>;
    }>();
    assert.equal(doc.contents['documents'], 5);
    const certificate = doc.documents.find((d) => d.kind === 'certificate');
    assert.ok(certificate);
    assert.equal(certificate.policy_reference, reference);
    assert.match(await pdfText(Buffer.from(certificate.content_base64, 'base64')), /Wiśniewska/);

    const erased = await t.app.inject({
      method: 'POST',
      url: `/admin/policyholders/${userReference}/erase`,
      headers: t.adminHeaders,
      payload: { reason: 'asked to be forgotten', force: true },
    });
    assert.equal(erased.statusCode, 200, erased.body);
    const result = erased.json<{
      documents_deleted: number;
      documents_kept: Array<{ kind: string; keep_until: string; reason: string; policy_reference: string }>;
    }>();
    assert.equal(result.documents_deleted, 3);
    assert.deepEqual(result.documents_kept.map((d) => d.kind).sort(), ['certificate', 'schedule']);
    for (const kept of result.documents_kept) {
      assert.match(kept.reason, /Limitation Act 1980/);
      assert.equal(kept.keep_until, '2032-05-31T22:59:59.000Z', 'six years after the term ends');
      assert.equal(kept.policy_reference, reference);
    }
    assert.deepEqual(kindsOf(await listDocuments(t, acme.sandbox, reference)), ['certificate', 'schedule']);
    assert.ok(email.length > 0);
  });
});
