import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PNG } from 'pngjs';
import { asTenant } from '../../../src/modules/companies/index.ts';
import { findBranding } from '../../../src/modules/documents/index.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { signInStaff, type SignedInStaff } from '../staff/staff-support.ts';

// 2025-06-10 in London.
const clock = fixedClock('2025-06-10T12:00:00Z');
type Company = Awaited<ReturnType<typeof createCompany>>;

interface Template {
  version: number;
  product_reference: string | null;
  effective_from: string;
  company_name: string;
  insurer_name: string;
  colour_hex: string;
  logo: null | {
    media_type: string;
    sha256: string;
    size_bytes: number;
    width_px: number;
    height_px: number;
    url: string;
  };
  in_effect: boolean;
  created_at: string;
}
interface Problem {
  code: string;
  detail: string;
  errors?: Array<{ path: string; message: string }>;
}

let t: TestApp;
let acme: Company;
let other: Company;
let admin: SignedInStaff;
let ops: SignedInStaff;
let viewer: SignedInStaff;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme Motor');
  other = await createCompany(t.app, 'Other Insurer');
  admin = await signInStaff(t, 'ada.admin@insurer.example', 'admin');
  ops = await signInStaff(t, 'olive.ops@insurer.example', 'operations');
  viewer = await signInStaff(t, 'victor.viewer@insurer.example', 'viewer');
});
after(() => t.close());

function pngLogo(widthPx: number, heightPx: number): Buffer {
  const image = new PNG({ width: widthPx, height: heightPx });
  for (let i = 0; i < image.data.length; i += 4) image.data.set([0x1f, 0x5f, 0x8b, 0xff], i);
  return PNG.sync.write(image);
}
const SVG_LOGO = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 40"><rect width="120" height="40" fill="#0a7"/></svg>',
);

const call = (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) =>
  t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });

const template = (fields: Record<string, unknown> = {}) => ({
  company_name: 'Acme Motor',
  insurer_name: 'Acme Insurance Company Limited',
  colour_hex: '#A01B2C',
  ...fields,
});
const logoOf = (mediaType: string, bytes: Buffer) => ({
  media_type: mediaType,
  data_base64: bytes.toString('base64'),
});

const db = () => t.container.database.db;
const acmeTenant = () => asTenant(acmeCompanyId, 'sandbox');
let acmeCompanyId = '';

describe('document templates', () => {
  test('a company with none gets defaults from its name, as branding and in the list', async () => {
    const listed = await call('GET', '/document-templates', acme.sandbox);
    assert.equal(listed.statusCode, 200, listed.body);
    assert.deepEqual(listed.json(), {
      templates: [],
      defaults: { company_name: 'Acme Motor', insurer_name: 'Acme Motor', colour_hex: '#1f4e79' },
    });
    const row = await db()
      .selectFrom('companies')
      .select('id')
      .where('company_reference', '=', acme.company_reference)
      .executeTakeFirstOrThrow();
    acmeCompanyId = row.id;
    assert.deepEqual(await findBranding(db(), acmeTenant(), null, '2025-06-10'), {
      companyName: 'Acme Motor',
      insurerName: 'Acme Motor',
      colourHex: '#1f4e79',
      templateVersion: 0,
    });
  });

  test('a company-wide version with a PNG logo: created, listed, its logo read back, used for documents from its day', async () => {
    const png = pngLogo(60, 20);
    const created = await call(
      'POST',
      '/document-templates',
      acme.sandbox,
      template({ logo: logoOf('image/png', png) }),
    );
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers['location'], '/document-templates/1');
    const body = created.json<Template>();
    assert.equal(body.version, 1);
    assert.equal(body.product_reference, null);
    assert.equal(body.effective_from, '2025-06-10', 'today in London by default');
    assert.equal(body.colour_hex, '#a01b2c', 'kept lowercase');
    assert.equal(body.in_effect, true);
    assert.deepEqual(body.logo, {
      media_type: 'image/png',
      sha256: (await import('node:crypto')).createHash('sha256').update(png).digest('hex'),
      size_bytes: png.length,
      width_px: 60,
      height_px: 20,
      url: '/document-templates/1/logo',
    });

    const logo = await call('GET', '/document-templates/1/logo', acme.sandbox);
    assert.equal(logo.statusCode, 200);
    assert.equal(logo.headers['content-type'], 'image/png');
    assert.match(String(logo.headers['content-security-policy']), /default-src 'none'.*sandbox/);
    assert.equal(logo.headers['x-content-type-options'], 'nosniff');
    assert.deepEqual(logo.rawPayload, png);

    const branding = await findBranding(db(), acmeTenant(), 'any-product', '2025-06-10');
    assert.equal(branding.templateVersion, 1);
    assert.equal(branding.insurerName, 'Acme Insurance Company Limited');
    assert.equal(branding.logo?.mediaType, 'image/png');
    assert.deepEqual(Buffer.from(branding.logo.bytes), png);
    assert.equal(
      (await findBranding(db(), acmeTenant(), null, '2025-06-09')).templateVersion,
      0,
      'not before its day',
    );
  });

  test('a product’s versions: only a registered product; the product’s in effect, else the company-wide; dated versions in order', async () => {
    const unknown = await call(
      'POST',
      '/document-templates',
      acme.sandbox,
      template({ product_reference: 'ppm-1' }),
    );
    assert.equal(unknown.statusCode, 422, unknown.body);
    assert.equal(unknown.json<Problem>().code, 'UNKNOWN_PRODUCT');
    const product = await call('POST', '/products', acme.sandbox, {
      product_reference: 'ppm-1',
      name: 'PPM',
      usage_unit: 'mile',
    });
    assert.equal(product.statusCode, 201, product.body);

    const svg = await call(
      'POST',
      '/document-templates',
      acme.sandbox,
      template({
        product_reference: 'ppm-1',
        company_name: 'Acme Miles',
        effective_from: '2025-07-01',
        logo: logoOf('image/svg+xml', SVG_LOGO),
      }),
    );
    assert.equal(svg.statusCode, 201, svg.body);
    const productVersion = svg.json<Template>();
    assert.equal(productVersion.version, 2);
    assert.equal(productVersion.in_effect, false, 'from next month');
    assert.equal(productVersion.logo?.width_px, 120);

    assert.equal((await findBranding(db(), acmeTenant(), 'ppm-1', '2025-06-30')).templateVersion, 1);
    const july = await findBranding(db(), acmeTenant(), 'ppm-1', '2025-07-01');
    assert.equal(july.templateVersion, 2);
    assert.equal(july.companyName, 'Acme Miles');
    assert.equal(july.logo?.mediaType, 'image/svg+xml');
    assert.equal((await findBranding(db(), acmeTenant(), 'ppm-2', '2025-07-01')).templateVersion, 1);
    assert.equal((await findBranding(db(), acmeTenant(), null, '2025-07-01')).templateVersion, 1);

    const earlier = await call(
      'POST',
      '/document-templates',
      acme.sandbox,
      template({ product_reference: 'ppm-1', effective_from: '2025-06-20' }),
    );
    assert.equal(earlier.statusCode, 422, earlier.body);
    assert.deepEqual(earlier.json<Problem>().errors, [
      { path: '/body/effective_from', message: 'must not be before 2025-07-01 (the latest version’s)' },
    ]);
    // The company-wide scope has its own order: a later company-wide version from today is fine.
    const wide = await call('POST', '/document-templates', acme.sandbox, template({ colour_hex: '#00aa00' }));
    assert.equal(wide.statusCode, 201, wide.body);
    assert.equal(wide.json<Template>().logo, null, 'a version without a logo has none');
    const listed = (await call('GET', '/document-templates', acme.sandbox)).json<{ templates: Template[] }>();
    assert.deepEqual(
      listed.templates.map((v) => [v.version, v.in_effect]),
      [
        [3, true],
        [2, false],
        [1, false],
      ],
    );
    assert.equal(listed.templates[2]?.colour_hex, '#a01b2c', 'an earlier version is never changed');
    assert.equal((await findBranding(db(), acmeTenant(), null, '2025-06-10')).colourHex, '#00aa00');
  });

  test('two versions written at once get distinct numbers', async () => {
    const [a, b] = await Promise.all([
      call('POST', '/document-templates', acme.sandbox, template({ effective_from: '2025-08-01' })),
      call('POST', '/document-templates', acme.sandbox, template({ effective_from: '2025-08-01' })),
    ]);
    assert.equal(a.statusCode, 201, a.body);
    assert.equal(b.statusCode, 201, b.body);
    assert.deepEqual([a.json<Template>().version, b.json<Template>().version].sort(), [4, 5]);
  });

  test('versions written at once are numbered in turn, each checked against the ones before it: never a 500, never a later version dated earlier', async () => {
    const racer = await createCompany(t.app, 'Racing Motor');
    const days = ['2025-07-04', '2025-07-01', '2025-07-09', '2025-07-02', '2025-07-06', '2025-07-03'];
    const answers = await Promise.all(
      [...days, ...days].map((day) =>
        call('POST', '/document-templates', racer.sandbox, template({ effective_from: day })),
      ),
    );
    assert.deepEqual(
      answers.filter((a) => a.statusCode !== 201 && a.statusCode !== 422).map((a) => a.body),
      [],
    );
    const listed = (await call('GET', '/document-templates', racer.sandbox)).json<{
      templates: Template[];
    }>();
    const inOrder = listed.templates.toSorted((a, b) => a.version - b.version);
    assert.deepEqual(
      inOrder.map((v) => v.version),
      inOrder.map((_, i) => i + 1),
    );
    assert.equal(inOrder.length, answers.filter((a) => a.statusCode === 201).length);
    for (let i = 1; i < inOrder.length; i++)
      assert.ok(
        inOrder[i]!.effective_from >= inOrder[i - 1]!.effective_from,
        `version ${String(inOrder[i]!.version)} from ${inOrder[i]!.effective_from} follows one from ${inOrder[i - 1]!.effective_from}`,
      );
  });

  test('422 names what is wrong: fields, colour, day, base64, a PNG that is not one, an unsafe SVG, an oversized logo', async () => {
    const fields = await call('POST', '/document-templates', acme.sandbox, {
      company_name: '',
      colour_hex: 'red',
      effective_from: '10/06/2025',
      font: 'Comic Sans',
    });
    assert.equal(fields.statusCode, 422, fields.body);
    const paths = (fields.json<Problem>().errors ?? []).map((e) => e.path).sort();
    assert.deepEqual(paths, [
      '/body/colour_hex',
      '/body/company_name',
      '/body/effective_from',
      '/body/font',
      '/body/insurer_name',
    ]);

    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ effective_from: '2025-02-30' }, /calendar day/],
      [{ logo: { media_type: 'image/png', data_base64: 'not*base64' } }, /base64/],
      [{ logo: logoOf('image/png', SVG_LOGO) }, /not a PNG image/],
      [
        {
          logo: logoOf(
            'image/svg+xml',
            Buffer.from(
              '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><script>alert(document.cookie)</script></svg>',
            ),
          ),
        },
        /script element/,
      ],
      [
        {
          logo: logoOf(
            'image/svg+xml',
            Buffer.from(
              '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><image href="https://evil.example/x.png"/></svg>',
            ),
          ),
        },
        /outside the file/,
      ],
      // A size beyond the stored integer failed the insert with a 500, by viewBox or by width and height.
      [
        {
          logo: logoOf(
            'image/svg+xml',
            Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1e308 1e308"/>'),
          ),
        },
        /each side must be at most 2147483647/,
      ],
      [
        {
          logo: logoOf(
            'image/svg+xml',
            Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="3e9" height="10"/>'),
          ),
        },
        /each side must be at most 2147483647/,
      ],
      [
        {
          logo: logoOf(
            'image/png',
            Buffer.concat([pngLogo(8, 8), Buffer.alloc(262_145 - pngLogo(8, 8).length)]),
          ),
        },
        /at most 262144/,
      ],
    ];
    for (const [fieldsOf, reason] of cases) {
      const r = await call('POST', '/document-templates', acme.sandbox, template(fieldsOf));
      assert.equal(r.statusCode, 422, r.body);
      const problem = r.json<Problem>();
      assert.match(`${problem.detail} ${JSON.stringify(problem.errors)}`, reason);
    }
    const tooLong = await call(
      'POST',
      '/document-templates',
      acme.sandbox,
      template({ logo: { media_type: 'image/png', data_base64: 'A'.repeat(400_000) } }),
    );
    assert.equal(tooLong.statusCode, 413, tooLong.body);
    assert.match(tooLong.json<Problem>().detail, /data_base64 is longer than/);
    const listed = (await call('GET', '/document-templates', acme.sandbox)).json<{ templates: Template[] }>();
    assert.equal(listed.templates.length, 5, 'nothing refused was stored');
  });

  test('another company or environment sees none of it (404 for a logo); no credentials is 401', async () => {
    assert.deepEqual(
      (await call('GET', '/document-templates', other.sandbox)).json<{ templates: [] }>().templates,
      [],
    );
    assert.equal((await call('GET', '/document-templates/1/logo', other.sandbox)).statusCode, 404);
    assert.equal((await call('GET', '/document-templates/1/logo', acme.production)).statusCode, 404);
    assert.equal(
      (await call('GET', '/document-templates/3/logo', acme.sandbox)).statusCode,
      404,
      'a version without a logo',
    );
    assert.equal((await call('GET', '/document-templates/abc/logo', acme.sandbox)).statusCode, 422);
    assert.equal((await call('GET', '/document-templates', {})).statusCode, 401);
    assert.equal((await call('POST', '/document-templates', {}, template())).statusCode, 401);
    const otherBranding = await db()
      .selectFrom('companies')
      .select('id')
      .where('company_reference', '=', other.company_reference)
      .executeTakeFirstOrThrow();
    assert.equal(
      (await findBranding(db(), asTenant(otherBranding.id, 'sandbox'), null, '2025-09-01')).templateVersion,
      0,
    );
  });

  test('staff: an admin lists, adds (audited) and reads the logo; operations and viewers are refused', async () => {
    const asStaff = (who: SignedInStaff) => ({
      ...who.headers,
      client_id: acme.client_id,
      environment: 'sandbox',
    });
    for (const who of [ops, viewer]) {
      assert.equal((await call('GET', '/document-templates', asStaff(who))).statusCode, 403);
      assert.equal((await call('POST', '/document-templates', asStaff(who), template())).statusCode, 403);
    }
    assert.equal((await call('GET', '/document-templates', asStaff(admin))).statusCode, 200);
    assert.equal((await call('GET', '/document-templates/1/logo', asStaff(admin))).statusCode, 200);
    const created = await call(
      'POST',
      '/document-templates',
      asStaff(admin),
      template({ effective_from: '2025-09-01', logo: logoOf('image/svg+xml', SVG_LOGO) }),
    );
    assert.equal(created.statusCode, 201, created.body);
    const version = created.json<Template>().version;
    const audit = await t.app.inject({
      url: `/admin/audit?request_id=${created.headers['x-request-id'] as string}`,
      headers: t.adminHeaders,
    });
    const records = audit.json<{
      data: Array<{
        actor: string;
        action: string;
        table: string | null;
        after: Record<string, unknown> | null;
      }>;
    }>().data;
    const row = records.find((r) => r.table === 'document_templates');
    assert.ok(row, JSON.stringify(records));
    assert.equal(row.actor, 'staff:ada.admin@insurer.example');
    assert.equal(row.action, 'documentTemplates.create');
    const after = row.after ?? {};
    assert.equal(after['version'], version);
    assert.equal(typeof after['logo_sha256'], 'string', 'the logo is named by its hash, not copied');
    assert.equal(after['bytes'], undefined);
  });
});
