import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { installProblemHandling } from '../../../src/platform/http/problem.ts';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { inlineScriptHashes, installWebApp, withConfig } from '../../../src/platform/http/web-app.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';

// The policyholder web app as the service serves it (issue 19): /app/, its config, and a missing build.
describe('/app/ and /app/config.json', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({
      env: { APP_CLIENT_ID: 'mp_client_acme', APP_BRAND_NAME: 'Acme Miles', APP_BRAND_COLOUR: '#AA3300' },
    });
  });
  after(() => t.close());

  test('config.json carries the APP_* settings, never cached', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/app/config.json' });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.deepEqual(r.json(), {
      client_id: 'mp_client_acme',
      environment: 'sandbox',
      brand_name: 'Acme Miles',
      brand_colour: '#aa3300',
      stripe_publishable_key: null,
      map_tile_url: null,
    });
  });

  test('the pages may reach no other origin', async () => {
    const csp = String(
      (await t.app.inject({ method: 'GET', url: '/app/' })).headers['content-security-policy'],
    );
    assert.doesNotMatch(csp, /https:/);
    assert.match(csp, /connect-src 'self';/);
    assert.match(csp, /frame-src 'none';/);
  });

  test('the built index.html carries the same settings as a JSON block, not as script', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/app/policy' });
    assert.equal(r.statusCode, 200, 'web/dist/app is built (npm run build:web)');
    const block = /<script type="application\/json" id="web-config">(.*?)<\/script>/.exec(r.body);
    assert.ok(block?.[1] !== undefined, 'the page carries the settings');
    const config = (await t.app.inject({ method: 'GET', url: '/app/config.json' })).json<unknown>();
    assert.deepEqual(JSON.parse(block[1]), config);
    assert.match(String(r.headers['content-security-policy']), /script-src 'self'(;| )/);
    assert.doesNotMatch(String(r.headers['content-security-policy']), /unsafe-inline'[^;]*script|nonce/);
  });

  test('the built page starts with an inline script, which the policy allows by its hash alone', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/app/' });
    const inline = [...r.body.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? '');
    assert.equal(inline.length, 1, 'web/dist/app is built with its start script (npm run build:web)');
    const scriptSrc = /script-src ([^;]*)/.exec(String(r.headers['content-security-policy']))?.[1];
    assert.equal(scriptSrc, `'self' ${sha256Source(inline[0] ?? '')}`);
  });

  test('config.json stays out of the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: object }>();
    assert.deepEqual(
      Object.keys(doc.paths).filter((p) => p.startsWith('/app')),
      [],
    );
  });
});

test('a tile server and, in production, Stripe.js are allowed by the content security policy', async () => {
  const t = await createTestApp({
    env: {
      APP_ENVIRONMENT: 'production',
      STRIPE_PUBLISHABLE_KEY: 'pk_live_abc123',
      MAP_TILE_URL: 'https://{s}.tiles.example.org/{z}/{x}/{y}.png',
    },
  });
  try {
    const config = (await t.app.inject({ method: 'GET', url: '/app/config.json' })).json<{
      map_tile_url: string;
    }>();
    assert.equal(config.map_tile_url, 'https://{s}.tiles.example.org/{z}/{x}/{y}.png');
    const csp = String(
      (await t.app.inject({ method: 'GET', url: '/app/' })).headers['content-security-policy'],
    );
    assert.match(csp, /img-src 'self' data: https:\/\/\*\.tiles\.example\.org;/);
    assert.match(csp, /script-src 'self' https:\/\/js\.stripe\.com( 'sha256-[\w+/=]+')*;/);
    assert.match(csp, /frame-src https:\/\/js\.stripe\.com https:\/\/hooks\.stripe\.com;/);
    assert.match(csp, /connect-src 'self' https:\/\/api\.stripe\.com;/);
  } finally {
    await t.close();
  }
});

const sha256Source = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
const INLINE_SCRIPT = 'window.started = "é";\n';

const BIG_SCRIPT = `export const rows = ${JSON.stringify(Array.from({ length: 200 }, (_, i) => `row ${String(i)}`))};\n`;

describe('a built app', () => {
  let dir: string;
  let app: FastifyInstance;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'milepost-web-'));
    await mkdir(path.join(dir, 'assets'));
    await writeFile(
      path.join(dir, 'index.html'),
      `<!doctype html><html><head><title>app</title><script type="module" src="/app/assets/index-abc123.js"></script></head><body><script>${INLINE_SCRIPT}</script></body></html>`,
    );
    await writeFile(path.join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    // As the build writes them beside an asset of 1 kB or more (web/build-plugins.ts).
    await writeFile(path.join(dir, 'assets', 'big-abc123.js'), BIG_SCRIPT);
    await writeFile(path.join(dir, 'assets', 'big-abc123.js.br'), brotliCompressSync(BIG_SCRIPT));
    await writeFile(path.join(dir, 'assets', 'big-abc123.js.gz'), gzipSync(BIG_SCRIPT));
    app = Fastify({ routerOptions: { ignoreTrailingSlash: true } }); // as the service's
    installProblemHandling(app);
    await installWebApp(app, {
      prefix: '/app/',
      root: dir,
      config: { brand_name: "Acme </script><script>alert(1)</script> & Co $& $' $`" },
      buildCommand: 'npm run build:web',
    });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('index.html for /app/ and every client-side route, revalidated, with a content security policy', async () => {
    for (const url of ['/app/', '/app/policy', '/app/sign-in?next=policy']) {
      const r = await app.inject({ method: 'GET', url });
      assert.equal(r.statusCode, 200, url);
      assert.match(String(r.headers['content-type']), /^text\/html/);
      assert.equal(r.headers['cache-control'], 'no-cache');
      assert.match(String(r.headers['content-security-policy']), /default-src 'self'/);
      assert.match(r.body, /<title>app<\/title>/);
    }
    const direct = await app.inject({ method: 'GET', url: '/app/index.html' });
    assert.equal(direct.statusCode, 200);
    assert.match(direct.body, /id="web-config"/);
    const bare = await app.inject({ method: 'GET', url: '/app' });
    assert.equal(bare.statusCode, 301);
    assert.equal(bare.headers.location, '/app/');
  });

  test("the page's inline scripts, and no other, are allowed by their SHA-256", async () => {
    const csp = String(
      (await app.inject({ method: 'GET', url: '/app/' })).headers['content-security-policy'],
    );
    assert.equal(/script-src ([^;]*)/.exec(csp)?.[1], `'self' ${sha256Source(INLINE_SCRIPT)}`);
    assert.doesNotMatch(csp, /unsafe-inline'[^;]*script|nonce/);
    // Module and classic scripts count; a data block (the settings) and a script file do not.
    assert.deepEqual(
      inlineScriptHashes(
        '<script type="application/json" id="web-config">{}</script><script src="/a.js"></script>' +
          '<script type="module">import "/b.js";</script><SCRIPT type=text/javascript>c()</SCRIPT >',
      ),
      [sha256Source('import "/b.js";'), sha256Source('c()')],
    );
  });

  test('the settings are in the page, escaped so that no value can end the block', async () => {
    const r = await app.inject({ method: 'GET', url: '/app/' });
    const block = /<script type="application\/json" id="web-config">(.*?)<\/script>\s*<\/head>/.exec(r.body);
    assert.ok(block?.[1] !== undefined, r.body);
    assert.doesNotMatch(block[1], /[<>&]/);
    assert.deepEqual(JSON.parse(block[1]), {
      brand_name: "Acme </script><script>alert(1)</script> & Co $& $' $`",
    });
    // A page without a head still gets the block.
    assert.match(
      withConfig('<p>x</p>', { a: 1 }),
      /^<p>x<\/p><script type="application\/json" id="web-config">\{"a":1\}<\/script>$/,
    );
  });

  test('the page and the assets go compressed to a browser that accepts it, plain to one that does not', async () => {
    const page = await app.inject({
      method: 'GET',
      url: '/app/policy',
      headers: { 'accept-encoding': 'gzip, deflate, br' },
    });
    assert.equal(page.headers['content-encoding'], 'br');
    assert.match(String(page.headers.vary), /accept-encoding/);
    assert.match(brotliDecompressSync(page.rawPayload).toString(), /id="web-config"/);
    const gzipped = await app.inject({
      method: 'GET',
      url: '/app/',
      headers: { 'accept-encoding': 'gzip, br;q=0' },
    });
    assert.equal(gzipped.headers['content-encoding'], 'gzip');
    assert.match(gunzipSync(gzipped.rawPayload).toString(), /id="web-config"/);
    const plain = await app.inject({
      method: 'GET',
      url: '/app/',
      headers: { 'accept-encoding': 'identity' },
    });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.match(plain.body, /id="web-config"/);

    const asset = await app.inject({
      method: 'GET',
      url: '/app/assets/big-abc123.js',
      headers: { 'accept-encoding': 'br' },
    });
    assert.equal(asset.statusCode, 200);
    assert.equal(asset.headers['content-encoding'], 'br');
    assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.match(String(asset.headers['content-type']), /javascript/);
    assert.equal(brotliDecompressSync(asset.rawPayload).toString(), BIG_SCRIPT);
    const assetGzip = await app.inject({
      method: 'GET',
      url: '/app/assets/big-abc123.js',
      headers: { 'accept-encoding': 'gzip' },
    });
    assert.equal(assetGzip.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(assetGzip.rawPayload).toString(), BIG_SCRIPT);
    const assetPlain = await app.inject({ method: 'GET', url: '/app/assets/big-abc123.js' });
    assert.equal(assetPlain.headers['content-encoding'], undefined);
    assert.equal(assetPlain.body, BIG_SCRIPT);
  });

  test('hashed assets are cached for a year; a missing asset is a 404 problem, not the page', async () => {
    const asset = await app.inject({ method: 'GET', url: '/app/assets/index-abc123.js' });
    assert.equal(asset.statusCode, 200);
    assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
    const missing = await app.inject({ method: 'GET', url: '/app/assets/index-gone.js' });
    assert.equal(missing.statusCode, 404);
    assert.match(String(missing.headers['content-type']), /application\/problem\+json/);
    assert.equal((await app.inject({ method: 'GET', url: '/app/../package.json' })).statusCode, 404);
  });
});

test('no build: /app/ answers 503 problem+json naming the command, and config.json still works', async () => {
  const app = Fastify({ routerOptions: { ignoreTrailingSlash: true } }); // as the service's
  installProblemHandling(app);
  await installWebApp(app, {
    prefix: '/app/',
    root: path.join(os.tmpdir(), 'milepost-no-such-build'),
    config: { brand_name: 'X' },
    buildCommand: 'npm run build:web',
  });
  for (const url of ['/app/', '/app', '/app/policy']) {
    const r = await app.inject({ method: 'GET', url });
    assert.equal(r.statusCode, 503, url);
    assert.match(String(r.headers['content-type']), /application\/problem\+json/);
    assert.match(r.json<{ detail: string }>().detail, /npm run build:web/);
  }
  assert.deepEqual((await app.inject({ method: 'GET', url: '/app/config.json' })).json(), {
    brand_name: 'X',
  });
  await app.close();
});
