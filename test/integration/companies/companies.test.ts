import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { onPostgres } from '../../support/database.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

const whoAmI = (headers: Record<string, string>) =>
  t.app.inject({ method: 'GET', url: '/companies/current', headers });

describe('companies (admin)', () => {
  test('create returns working credentials; secrets are stored hashed', async () => {
    const company = await createCompany(t.app, 'Acme Mutual');
    assert.match(company.client_id, /^mp_client_/);
    assert.ok(
      Buffer.from(company.client_secret.replace(/^mp_live_/, ''), 'base64url').length >= 32,
      '≥ 256-bit secret',
    );
    const r = await whoAmI(company.production);
    assert.equal(r.statusCode, 200);
    assert.deepEqual(r.json(), {
      company_reference: company.company_reference,
      name: 'Acme Mutual',
      environment: 'production',
    });
    const stored = await t.container.database.db
      .selectFrom('companies')
      .selectAll()
      .where('client_id', '=', company.client_id)
      .executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(stored).includes(company.client_secret), 'no plain secret in the row');
  });

  test('list pages without secrets', async () => {
    await createCompany(t.app, 'Second');
    const first = await t.app.inject({ url: '/admin/companies?limit=1', headers: t.adminHeaders });
    const body = first.json<{ companies: Array<Record<string, unknown>>; next_cursor: string | null }>();
    assert.equal(body.companies.length, 1);
    assert.ok(body.next_cursor !== null);
    assert.ok(!('client_secret' in body.companies[0]!));
    const second = await t.app.inject({
      url: `/admin/companies?limit=100&after=${body.next_cursor}`,
      headers: t.adminHeaders,
    });
    assert.ok(second.json<{ companies: unknown[] }>().companies.length >= 1);
  });

  test('rotation replaces the secret at once and keeps the client id', async () => {
    const company = await createCompany(t.app);
    const r = await t.app.inject({
      method: 'POST',
      url: `/admin/companies/${company.company_reference}/secrets/rotate`,
      headers: t.adminHeaders,
      payload: { environment: 'sandbox' },
    });
    assert.equal(r.statusCode, 200);
    const rotated = r.json<{ client_id: string; client_secret: string; client_secret_sandbox: string }>();
    assert.equal(rotated.client_id, company.client_id);
    assert.equal(rotated.client_secret, '');
    assert.equal((await whoAmI(company.sandbox)).statusCode, 401, 'old sandbox secret refused');
    assert.equal(
      (await whoAmI({ ...company.sandbox, client_secret: rotated.client_secret_sandbox })).statusCode,
      200,
    );
    assert.equal((await whoAmI(company.production)).statusCode, 200, 'production secret untouched');
  });

  test('rotation with no body rotates both; unknown company → 404', async () => {
    const company = await createCompany(t.app);
    const both = await t.app.inject({
      method: 'POST',
      url: `/admin/companies/${company.company_reference}/secrets/rotate`,
      headers: t.adminHeaders,
    });
    assert.equal(both.statusCode, 200);
    assert.notEqual(both.json<{ client_secret: string }>().client_secret, '');
    const missing = await t.app.inject({
      method: 'POST',
      url: '/admin/companies/co_nope/secrets/rotate',
      headers: t.adminHeaders,
    });
    assert.equal(missing.statusCode, 404);
  });
});

describe('client authentication', () => {
  test('good credentials, sandbox by default', async () => {
    const company = await createCompany(t.app);
    const { environment: _omitted, ...noEnvironment } = company.sandbox;
    const r = await whoAmI(noEnvironment);
    assert.equal(r.statusCode, 200);
    assert.equal(r.json<{ environment: string }>().environment, 'sandbox');
    assert.equal(
      (await whoAmI({ ...company.sandbox, environment: 'SANDBOX' })).statusCode,
      200,
      'value case-insensitive',
    );
  });

  test('wrong secret, sandbox secret for production, unknown client and missing headers → 401 problem', async () => {
    const company = await createCompany(t.app);
    const cases: Array<[string, Record<string, string>]> = [
      ['wrong secret', { ...company.production, client_secret: 'mp_live_wrong' }],
      [
        'sandbox secret used for production',
        { ...company.production, client_secret: company.client_secret_sandbox },
      ],
      ['production secret used for sandbox', { ...company.sandbox, client_secret: company.client_secret }],
      ['unknown client', { ...company.production, client_id: 'mp_client_unknown' }],
      ['missing client_id', { client_secret: company.client_secret, environment: 'production' }],
      ['missing client_secret', { client_id: company.client_id, environment: 'production' }],
      ['no headers', {}],
    ];
    for (const [name, headers] of cases) {
      const r = await whoAmI(headers);
      assert.equal(r.statusCode, 401, name);
      assert.equal(r.json<{ code: string }>().code, 'INVALID_CLIENT_CREDENTIALS', name);
    }
  });

  test('the mock environment is refused on routes that do not serve it', async () => {
    const r = await whoAmI({ environment: 'mock' });
    assert.equal(r.statusCode, 422);
  });
});

describe('cli', () => {
  test('company create prints credentials as JSON', async (ctx) => {
    const dataDir = path.join(process.env['TMPDIR'] ?? '/tmp', `milepost-cli-${process.pid}`);
    ctx.after(() => fs.rm(dataDir, { recursive: true, force: true }));
    const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' } as Record<string, string>;
    if (onPostgres) env['DATABASE_URL'] = t.container.database.connectionString!;
    else delete env['DATABASE_URL'];
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['src/cli.ts', 'company', 'create', '--name', 'From CLI'],
      { env },
    );
    const printed = JSON.parse(stdout) as Record<string, string>;
    assert.equal(printed['name'], 'From CLI');
    assert.match(printed['client_secret'] ?? '', /^mp_live_/);
    assert.match(printed['client_secret_sandbox'] ?? '', /^mp_test_/);
  });
});
