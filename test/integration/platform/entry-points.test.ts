import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { encodePolyline } from '../../../src/platform/geo/index.ts';
import { createLogger } from '../../../src/platform/logging.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { examplePolicyInput } from '../../support/policy-arbitraries.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;

// Inside the example policy's term, so journeys and statements can be made.
const clock = fixedClock('2025-09-20T12:00:00Z');
const logLines: string[] = [];
let t: TestApp;
let acme: Company;

before(async () => {
  // No SMTP_URL: emails are kept in the outbox, and the log is captured to prove it holds no secret.
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  });
  t = await createTestApp({
    env: { PUBLIC_BASE_URL: 'https://api.insurer.example' },
    overrides: { clock, logger: createLogger('info', sink) },
    startJobs: true,
  });
  acme = await createCompany(t.app, 'Acme');
});
after(async () => {
  await t.close();
});

const uniqueEmail = (() => {
  let n = 0;
  return () => `entry${++n}.${Date.now()}@example.com`;
})();

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('entry points', () => {
  test('GET / answers a JSON index with links that resolve', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/' });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json<{ name: string; version: string; links: Record<string, string> }>();
    assert.equal(body.name, 'Milepost API');
    assert.match(body.version, /^\d+\.\d+\.\d+/);
    for (const link of Object.values(body.links)) {
      const linked = await t.app.inject({ method: 'GET', url: link });
      assert.ok(linked.statusCode < 400, `${link} answered ${linked.statusCode}`);
    }
  });

  test('the OpenAPI document names a server: PUBLIC_BASE_URL when set', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      servers?: Array<{ url: string }>;
    }>();
    assert.deepEqual(doc.servers, [{ url: 'https://api.insurer.example' }]);
  });

  test("the OpenAPI document's policy example binds no payment that cannot work", async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).body;
    assert.doesNotMatch(doc, /pi_3PqXyZ/);
  });

  test('the docs page leaves out the hosted-only AI, MCP and developer-tool buttons', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs/' });
    assert.equal(page.statusCode, 200);
    const config = page.body.replace(/\s+/g, '');
    assert.match(config, /"agent":\{"disabled":true\}/);
    assert.match(config, /"mcp":\{"disabled":true\}/);
    assert.match(config, /"showDeveloperTools":"never"/);
  });
});

describe('201 responses carry Location', () => {
  test('company, policy, renewal, journey, statement, credit and webhook endpoint', async () => {
    const company = await t.app.inject({
      method: 'POST',
      url: '/admin/companies',
      headers: t.adminHeaders,
      payload: { name: 'Located' },
    });
    assert.equal(company.statusCode, 201);
    const companyLocation = company.headers.location as string;
    assert.equal(
      companyLocation,
      `/admin/companies/${company.json<{ company_reference: string }>().company_reference}`,
    );
    assert.equal(
      (await t.app.inject({ method: 'GET', url: companyLocation, headers: t.adminHeaders })).statusCode,
      200,
    );

    const created = await t.app.inject({
      method: 'POST',
      url: '/policys',
      headers: acme.sandbox,
      payload: examplePolicyInput({ proposer: { email: uniqueEmail() } }),
    });
    assert.equal(created.statusCode, 201, created.body);
    const reference = created.json<{ policy_reference: string }>().policy_reference;
    assert.equal(created.headers.location, `/policys/${reference}`);
    assert.equal(
      (await t.app.inject({ method: 'GET', url: `/policys/${reference}`, headers: acme.sandbox })).statusCode,
      200,
    );

    const journey = await t.app.inject({
      method: 'POST',
      url: '/journeys',
      headers: acme.sandbox,
      payload: {
        policy_reference: reference,
        route: encodePolyline([51.501, -0.1416, 51.5115, -0.116], 5),
        start_time: Date.parse('2025-09-10T08:00:00Z') / 1000,
        end_time: Date.parse('2025-09-10T08:20:00Z') / 1000,
      },
    });
    assert.equal(journey.statusCode, 201, journey.body);
    const journeyLocation = journey.headers.location as string;
    assert.equal(
      journeyLocation,
      `/journeys/${journey.json<{ journey_reference: string }>().journey_reference}`,
    );
    assert.equal(
      (await t.app.inject({ method: 'GET', url: journeyLocation, headers: acme.sandbox })).statusCode,
      200,
    );

    const statement = await t.app.inject({
      method: 'POST',
      url: '/statements',
      headers: acme.sandbox,
      payload: { policy_reference: reference, effective_date: Date.parse('2025-09-15T00:00:00Z') / 1000 },
    });
    assert.equal(statement.statusCode, 201, statement.body);
    const statementLocation = statement.headers.location as string;
    assert.equal(
      statementLocation,
      `/statements/${statement.json<{ policy_version_reference: string }>().policy_version_reference}`,
    );
    assert.equal(
      (await t.app.inject({ method: 'GET', url: statementLocation, headers: acme.sandbox })).statusCode,
      200,
    );

    const credit = await t.app.inject({
      method: 'POST',
      url: '/admin/credits',
      headers: t.adminHeaders,
      payload: {
        company_reference: acme.company_reference,
        environment: 'sandbox',
        policy_reference: reference,
        amount: 5,
        reason: 'goodwill',
      },
    });
    assert.equal(credit.statusCode, 201, credit.body);
    assert.equal(credit.headers.location, `/statements?policy_reference=${reference}`);

    const renewal = await t.app.inject({
      method: 'POST',
      url: `/policys/${reference}/renewals`,
      headers: acme.sandbox,
      payload: { pricing: examplePolicyInput().pricing },
    });
    assert.ok([201, 202].includes(renewal.statusCode), renewal.body);
    assert.equal(renewal.headers.location, `/policys/${reference}`);

    const endpoint = await t.app.inject({
      method: 'POST',
      url: '/webhooks',
      headers: acme.sandbox,
      payload: { url: 'http://127.0.0.1:9/hooks' },
    });
    assert.equal(endpoint.statusCode, 201, endpoint.body);
    const endpointLocation = endpoint.headers.location as string;
    assert.equal(endpointLocation, `/webhooks/${endpoint.json<{ id: string }>().id}`);
    assert.equal(
      (await t.app.inject({ method: 'GET', url: endpointLocation, headers: acme.sandbox })).statusCode,
      200,
    );
  });
});

describe('GET /admin/emails (no SMTP_URL)', () => {
  test('shows the welcome email whole, newest first, filtered by recipient; the log has no password', async () => {
    const { email } = await make.policy(t.app, acme);
    type Listed = { emails: Array<{ to: string; status: string; subject: string; text: string | null }> };
    const listed = await waitFor('the welcome email to be logged', async () => {
      const r = await t.app.inject({
        method: 'GET',
        url: `/admin/emails?to=${encodeURIComponent(email.toUpperCase())}&limit=5`,
        headers: t.adminHeaders,
      });
      assert.equal(r.statusCode, 200, r.body);
      const body = r.json<Listed>();
      return body.emails[0]?.status === 'logged' ? body : undefined;
    });
    assert.equal(listed.emails.length, 1);
    const [welcome] = listed.emails;
    assert.equal(welcome!.to, email);
    const password = /Temporary password: (\S+)/.exec(welcome!.text ?? '')?.[1];
    assert.ok(password !== undefined, 'the temporary password is readable in the outbox');
    assert.ok(password.length >= 8);
    const log = logLines.join('');
    assert.ok(log.includes(email), 'the email is logged (recipient and subject)');
    assert.ok(!log.includes(password), 'the temporary password is never logged');
  });

  test('401 without the admin key; 422 for a bad limit', async () => {
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/admin/emails', headers: acme.sandbox })).statusCode,
      401,
    );
    const bad = await t.app.inject({ method: 'GET', url: '/admin/emails?limit=0', headers: t.adminHeaders });
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.json<{ errors: Array<{ path: string }> }>().errors[0]?.path, '/querystring/limit');
  });
});
