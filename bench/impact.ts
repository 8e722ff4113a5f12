/**
 * Impact testing (POST /admin/rate-books/:ref/versions/:n/impact) on PostgreSQL over a book of N
 * policies in force (default 1,000,000): the wall time of re-rating them all on a draft version, on
 * as many rating threads as the machine has cores (or --threads), against the baseline in the same
 * run: the time to read the same rows, in the same keyset batches, and do nothing with them. Reports
 * the cores and the load average beside the figures, as the machine may be shared. Target: ≤ 120 s.
 *
 *   npm run bench -- impact [--policies N] [--threads T]
 *   BENCH_DATABASE_URL=postgres://user@host:5432/postgres npm run bench -- impact --policies 100000
 *
 * A fresh database is made on that server (default postgres://root@127.0.0.1:5432/postgres) and dropped
 * at the end. The book is written by src/seed.ts (the bordereau's fast SQL seed): live policies of one
 * company naming the product, terms within the last year, each its own postcode; then VACUUM ANALYZE.
 * The version is the worked example's rate book with a higher base premium, so every policy moves.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { createImpactService } from '../src/modules/rating/index.ts';
import { IMPACT_BATCH_POLICIES } from '../src/modules/rating/impact-service.ts';
import { EXAMPLE_RATE_BOOK, type RateBookContent } from '../src/modules/rating/rules/index.ts';
import { readInForceTerms } from '../src/modules/policies/index.ts';
import { createLogger } from '../src/platform/logging.ts';
import { seedPolicies } from '../src/seed.ts';
import { BENCH_POSTGRES_URL, withScratchDatabase } from './support.ts';

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { policies: { type: 'string' }, threads: { type: 'string' } },
  allowPositionals: true,
});
const policies = Number(values.policies ?? 1_000_000);
const threads = Number(values.threads ?? os.availableParallelism());
const server = process.env['BENCH_DATABASE_URL'] ?? BENCH_POSTGRES_URL;
const TARGET_SECONDS = 120;
if (!Number.isInteger(policies) || policies < 1) throw new Error('--policies must be a whole number ≥ 1');
if (!Number.isInteger(threads) || threads < 1) throw new Error('--threads must be a whole number ≥ 1');

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

await withScratchDatabase(server, async (databaseUrl) => {
  const config = loadConfig({ DATABASE_URL: databaseUrl, ROLE: 'api', LOG_LEVEL: 'warn' });
  const container = await createContainer(config, { logger: createLogger('warn') });
  const db = container.database.db;
  const { companies, products, rateBooks } = container.services;
  try {
    const company = await companies.create('Impact bench');
    const tenant = await companies.tenantOf(company.company_reference, 'production');
    await products.create(tenant, { product_reference: 'ppm', name: 'Pay by mile', usage_unit: 'mile' });
    await rateBooks.create(tenant, { rate_book_reference: 'rates', product_reference: 'ppm', name: 'Rates' });
    const content: RateBookContent = {
      ...structuredClone(EXAMPLE_RATE_BOOK),
      base_fixed_premium_pence: 31_500,
    };
    const draft = await rateBooks.createVersion(tenant, { label: 'integration', staffId: null }, 'rates', {
      content: content as unknown as Record<string, unknown>,
    });

    let lastReport = 0;
    const seeded = await seedPolicies(db, {
      policies,
      companyReference: company.company_reference,
      environment: 'production',
      productReference: 'ppm',
      onProgress(done) {
        if (done - lastReport >= 100_000 || done === policies) {
          lastReport = done;
          process.stdout.write(`  seeded ${String(done)} policies\n`);
        }
      },
    });
    for (const table of ['policies', 'policy_versions'])
      await sql`vacuum analyze ${sql.table(table)}`.execute(db);
    process.stdout.write(`seeded ${String(seeded.policies)} policies in ${seeded.seconds.toFixed(1)} s\n`);

    const scope = { productReference: 'ppm', at: new Date() };
    const readAll = async (): Promise<number> => {
      let read = 0;
      let after: string | null = null;
      for (;;) {
        const rows = await readInForceTerms(db, tenant, scope, after, IMPACT_BATCH_POLICIES);
        read += rows.length;
        after = rows.at(-1)?.policyId ?? null;
        if (rows.length < IMPACT_BATCH_POLICIES) return read;
      }
    };
    // One untimed read first: the book's pages into the cache for both timed runs alike.
    await readAll();
    const impact = createImpactService({ db, clock: container.clock, threads });
    const timed = async <T>(work: () => Promise<T>) => {
      const before = load();
      const t0 = performance.now();
      const result = await work();
      return { result, seconds: (performance.now() - t0) / 1000, before, after: load() };
    };
    const baseline = await timed(readAll);
    const run = await timed(() => impact.run(tenant, 'rates', draft.version_number));
    if (baseline.result !== seeded.policies || run.result.policies !== seeded.policies)
      throw new Error(
        `read ${String(baseline.result)}, rated ${String(run.result.policies)}, seeded ${String(seeded.policies)}`,
      );
    const line = (name: string, r: { seconds: number; before: string; after: string }) =>
      `${name.padEnd(40)} ${r.seconds.toFixed(1).padStart(7)} s  ${Math.round(seeded.policies / r.seconds)
        .toLocaleString('en-GB')
        .padStart(9)} policies/s  load ${r.before} → ${r.after}`;
    process.stdout.write(
      [
        `impact test of ${seeded.policies.toLocaleString('en-GB')} policies in force, ${String(os.availableParallelism())} cores`,
        line('baseline: read the rows only', baseline),
        line(`impact test, ${String(threads)} rating thread(s)`, run),
        `ratio to the baseline: ${(run.seconds / baseline.seconds).toFixed(2)}×; target ≤ ${String(TARGET_SECONDS)} s: ${run.seconds <= TARGET_SECONDS ? 'met' : 'NOT met'}`,
        `rated ${String(run.result.rated)}, declined ${String(run.result.declined.policies)}, unrated ${String(run.result.unrated.policies)}; total change ${String(run.result.total.change_percent)} %`,
        '',
      ].join('\n'),
    );
  } finally {
    await container.close();
  }
});
