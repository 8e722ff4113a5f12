import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';
import { EXAMPLE_RATE_BOOK } from '../../src/modules/rating/rules/index.ts';

// The full service with a company, its product and the worked example's rate book approved, on
// PostgreSQL (DATABASE_URL) or a throw-away embedded database. The company's sandbox credentials are
// written to BENCH_SEED_FILE as JSON. The approval is made in process: it needs a staff member, whose
// console sign-in (TOTP) a benchmark has no use for.
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'milepost-bench-quotes-'));
const adminKey = process.env['ADMIN_API_KEY'] ?? 'bench-admin-key-0123456789abcdef0123456789';
const config = loadConfig({
  ...process.env,
  ADMIN_API_KEY: adminKey,
  DATA_DIR: dataDir,
  PORT: '0',
  ROLE: 'api',
});
const container = await createContainer(config);
const app = await buildApp(container);

async function call(method: 'POST', url: string, headers: Record<string, string>, payload: object) {
  const answer = await app.inject({ method, url, headers, payload });
  if (answer.statusCode >= 300) throw new Error(`${url}: ${answer.body}`);
  return answer.json<Record<string, string>>();
}

const company = await call(
  'POST',
  '/admin/companies',
  { authorization: `Bearer ${adminKey}` },
  { name: 'Bench' },
);
const headers = {
  client_id: company['client_id'] ?? '',
  client_secret: company['client_secret_sandbox'] ?? '',
  environment: 'sandbox',
};
await call('POST', '/products', headers, {
  product_reference: 'pay-by-mile-car',
  name: 'Car',
  usage_unit: 'mile',
});
await call('POST', '/rate-books', headers, {
  rate_book_reference: 'car-rates',
  product_reference: 'pay-by-mile-car',
  name: 'Car rates',
});
await call('POST', '/rate-books/car-rates/versions', headers, { content: EXAMPLE_RATE_BOOK });
const staff = await call(
  'POST',
  '/admin/staff',
  { authorization: `Bearer ${adminKey}` },
  {
    email: 'approver@bench.example',
    role: 'admin',
  },
);
const tenant = await container.services.companies.identify(headers.client_id, 'sandbox');
await container.services.rateBooks.approve(
  tenant,
  { label: 'staff:approver@bench.example', staffId: staff['staff_id'] ?? '' },
  'car-rates',
  1,
);
await fs.writeFile(
  process.env['BENCH_SEED_FILE'] ?? path.join(dataDir, 'seed.json'),
  JSON.stringify(headers),
);

const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${address}\n`);
process.on('SIGTERM', () => {
  void (async () => {
    await app.close();
    await container.close();
    await fs.rm(dataDir, { recursive: true, force: true });
    process.exit(0);
  })();
});
