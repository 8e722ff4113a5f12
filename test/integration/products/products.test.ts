import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ProductRules } from '../../../src/modules/products/product-schemas.ts';
import { crashThresholds, DEFAULT_CRASH_THRESHOLDS } from '../../../src/modules/telematics/rules/index.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { examplePolicyInput } from '../../support/policy-arbitraries.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;
interface Product {
  product_reference: string;
  name: string;
  usage_unit: string;
  rules: Record<string, unknown>;
  versions: Array<{ name: string; rules: Record<string, unknown>; effective_from: string }>;
}
interface Problem {
  code: string;
  errors?: Array<{ path: string; message: string }>;
}

const clock = fixedClock('2025-06-10T12:00:00Z');
const unix = (iso: string): number => Date.parse(iso) / 1000;
let t: TestApp;
let acme: Company;
let other: Company;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
});
after(async () => {
  await t.close();
});

const call = (
  method: 'GET' | 'POST' | 'PUT',
  url: string,
  headers: Record<string, string>,
  payload?: object,
) => t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });

const capped = {
  product_reference: 'ppm-capped',
  name: 'Pay-per-mile, capped',
  usage_unit: 'mile',
  rules: { daily_cap_distance: 150, annual_cap_distance: 10_000, free_distance_per_statement: 50 },
};

describe('products', () => {
  test('create, read, list; a duplicate is 409; another company or environment sees nothing', async () => {
    const created = await call('POST', '/products', acme.sandbox, capped);
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers['location'], '/products/ppm-capped');
    const body = created.json<Product>();
    assert.deepEqual(body.rules, capped.rules);
    assert.equal(body.usage_unit, 'mile');
    assert.deepEqual(
      body.versions.map((v) => v.effective_from),
      ['2025-06-10T12:00:00.000Z'],
    );
    assert.deepEqual((await call('GET', '/products/ppm-capped', acme.sandbox)).json(), body);
    assert.deepEqual(
      (await call('GET', '/products', acme.sandbox)).json<{ products: Product[] }>().products,
      [body],
    );
    const again = await call('POST', '/products', acme.sandbox, { ...capped, name: 'Again' });
    assert.equal(again.statusCode, 409, again.body);
    assert.equal((await call('GET', '/products/ppm-capped', other.sandbox)).statusCode, 404);
    assert.equal((await call('GET', '/products/ppm-capped', acme.production)).statusCode, 404);
    assert.deepEqual((await call('GET', '/products', other.sandbox)).json(), { products: [] });
    assert.equal((await call('GET', '/products', {})).statusCode, 401);
  });

  test('422 names every bad field: negative or non-numeric distances, unknown rules, bad money', async () => {
    const r = await call('POST', '/products', acme.sandbox, {
      product_reference: 'bad one',
      name: '',
      usage_unit: 'furlong',
      rules: { daily_cap_distance: -1, annual_cap_distance: 'lots', weekly_cap: 3 },
    });
    assert.equal(r.statusCode, 422, r.body);
    const paths = new Set(r.json<Problem>().errors?.map((e) => e.path));
    for (const path of [
      '/body/product_reference',
      '/body/name',
      '/body/usage_unit',
      '/body/rules/daily_cap_distance',
      '/body/rules/annual_cap_distance',
      '/body/rules/weekly_cap',
    ])
      assert.ok(paths.has(path), `${path} in ${JSON.stringify([...paths])}`);
    const pennies = await call('POST', '/products', acme.sandbox, {
      ...capped,
      product_reference: 'ppm-pennies',
      rules: { minimum_usage_premium: 1.234 },
    });
    assert.equal(pennies.statusCode, 422, pennies.body);
    assert.equal(pennies.json<Problem>().errors?.[0]?.path, '/body/rules/minimum_usage_premium');
  });

  test('crash detection thresholds are a rule: kept as sent, defaults for the rest; nonsense is 422', async () => {
    const crash_detection = { min_deceleration_g: 0.8, stop_within_seconds: 15 };
    const created = await call('POST', '/products', acme.sandbox, {
      ...capped,
      product_reference: 'ppm-crash',
      rules: { crash_detection },
    });
    assert.equal(created.statusCode, 201, created.body);
    const rules = created.json<Product>().rules as ProductRules;
    assert.deepEqual(rules.crash_detection, crash_detection);
    assert.deepEqual(crashThresholds(rules.crash_detection), {
      ...DEFAULT_CRASH_THRESHOLDS,
      minDecelerationG: 0.8,
      stopWithinSeconds: 15,
    });
    const bad = await call('POST', '/products', acme.sandbox, {
      ...capped,
      product_reference: 'ppm-crash-bad',
      rules: {
        crash_detection: { min_deceleration_g: -1, stop_speed_kmh: 40, drop_window_seconds: 'soon', peak: 2 },
      },
    });
    assert.equal(bad.statusCode, 422, bad.body);
    const paths = new Set(bad.json<Problem>().errors?.map((e) => e.path));
    for (const field of ['min_deceleration_g', 'stop_speed_kmh', 'drop_window_seconds', 'peak'])
      assert.ok(
        paths.has(`/body/rules/crash_detection/${field}`),
        `${field} in ${JSON.stringify([...paths])}`,
      );
    assert.equal((await call('GET', '/products/ppm-crash', other.sandbox)).statusCode, 404);
  });

  test('PUT writes a new version from its effective date; older days keep their rules; never backwards', async () => {
    const reference = 'ppm-versioned';
    assert.equal(
      (await call('POST', '/products', acme.sandbox, { ...capped, product_reference: reference })).statusCode,
      201,
    );
    const later = unix('2025-07-01T00:00:00Z');
    const updated = await call('PUT', `/products/${reference}`, acme.sandbox, {
      name: 'Capped at 200',
      rules: { daily_cap_distance: 200 },
      effective_date: later,
    });
    assert.equal(updated.statusCode, 200, updated.body);
    const body = updated.json<Product>();
    assert.equal(body.name, capped.name, 'the new rules are not in force yet');
    assert.deepEqual(body.rules, capped.rules);
    assert.deepEqual(
      body.versions.map((v) => [v.name, v.effective_from]),
      [
        [capped.name, '2025-06-10T12:00:00.000Z'],
        ['Capped at 200', '2025-07-01T00:00:00.000Z'],
      ],
    );
    clock.set('2025-07-02T00:00:00Z');
    try {
      const read = (await call('GET', `/products/${reference}`, acme.sandbox)).json<Product>();
      assert.equal(read.name, 'Capped at 200');
      assert.deepEqual(read.rules, { daily_cap_distance: 200 });
    } finally {
      clock.set('2025-06-10T12:00:00Z');
    }
    const backwards = await call('PUT', `/products/${reference}`, acme.sandbox, {
      rules: {},
      effective_date: unix('2025-06-20T00:00:00Z'),
    });
    assert.equal(backwards.statusCode, 422, backwards.body);
    assert.equal(backwards.json<Problem>().errors?.[0]?.path, '/body/effective_date');
    assert.equal((await call('PUT', '/products/nothing-here', acme.sandbox, { rules: {} })).statusCode, 404);
    assert.equal((await call('PUT', `/products/${reference}`, other.sandbox, { rules: {} })).statusCode, 404);
    assert.equal(
      (await call('PUT', `/products/${reference}`, acme.sandbox, { rules: { nope: 1 } })).statusCode,
      422,
    );
  });

  test('once a company has products, a policy must name one of them (422 UNKNOWN_PRODUCT)', async () => {
    // Other has no product yet: any reference is taken, as the interface has it.
    const free = await call(
      'POST',
      '/policys',
      other.sandbox,
      examplePolicyInput({
        proposer: { email: 'free.product@example.com' },
        policy: { product_reference: 'anything-at-all' },
      }),
    );
    assert.equal(free.statusCode, 201, free.body);
    assert.equal(free.json<{ product: unknown }>().product, null, 'no registered product: null');
    const unknown = await call(
      'POST',
      '/policys',
      acme.sandbox,
      examplePolicyInput({
        proposer: { email: 'unknown.product@example.com' },
        policy: { product_reference: 'anything-at-all' },
      }),
    );
    assert.equal(unknown.statusCode, 422, unknown.body);
    assert.equal(unknown.json<Problem>().code, 'UNKNOWN_PRODUCT');
    assert.equal(unknown.json<Problem>().errors?.[0]?.path, '/body/policy/product_reference');
    const input = examplePolicyInput({
      proposer: { email: 'known.product@example.com' },
      policy: { product_reference: 'ppm-capped' },
    });
    const known = await call('POST', '/policys', acme.sandbox, input);
    assert.equal(known.statusCode, 201, known.body);
    const reference = known.json<{ policy_reference: string }>().policy_reference;
    // The policy shows its product as in force now, and a new version of it at once.
    const shown = async () =>
      (await call('GET', `/policys/${reference}`, acme.sandbox)).json<{ product: Record<string, unknown> }>()
        .product;
    assert.deepEqual(known.json<{ product: unknown }>().product, {
      product_reference: 'ppm-capped',
      name: (await shown())['name'],
      usage_unit: 'mile',
      rules: (await shown())['rules'],
    });
    const now = await shown();
    const put = await call('PUT', '/products/ppm-capped', acme.sandbox, {
      name: 'Capped, again',
      rules: { daily_cap_distance: 200 },
    });
    assert.equal(put.statusCode, 200, put.body);
    assert.deepEqual(await shown(), {
      ...now,
      name: 'Capped, again',
      rules: { daily_cap_distance: 200 },
    });
    const adjusted = await call('POST', '/policys', acme.sandbox, {
      ...input,
      policy: { ...input.policy, policy_reference: reference, product_reference: 'not-ours' },
    });
    assert.equal(adjusted.json<Problem>().code, 'UNKNOWN_PRODUCT');
    const renewed = await call('POST', `/policys/${reference}/renewals`, acme.sandbox, {
      policy: { product_reference: 'not-ours' },
      pricing: input.pricing,
    });
    assert.equal(renewed.json<Problem>().code, 'UNKNOWN_PRODUCT');
  });

  test('product.created and product.updated are in the event catalogue', async () => {
    const doc = (await call('GET', '/openapi.json', {})).json<{ webhooks: Record<string, unknown> }>();
    assert.ok('product.created' in doc.webhooks && 'product.updated' in doc.webhooks);
  });
});
