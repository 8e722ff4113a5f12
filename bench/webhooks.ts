import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { asTenant } from '../src/modules/companies/index.ts';
import { inTransaction } from '../src/platform/db/database.ts';
import { recordEvent } from '../src/platform/events.ts';
import { createLogger } from '../src/platform/logging.ts';
import { createTestDatabase } from '../test/support/database.ts';

// What webhooks cost the request that writes an event (one transaction with one event row), with the
// fan-out trigger off (the baseline), on for a tenant without endpoints, and on for one with an
// endpoint; then how fast the worker delivers to a local receiver. TEST_DATABASE_URL picks PostgreSQL.
const events = Number(process.env['BENCH_EVENTS'] ?? 2000);
const database = await createTestDatabase();
const config = loadConfig({
  ADMIN_API_KEY: 'bench-admin-key-0123456789abcdef0123456789',
  LOG_LEVEL: 'silent',
  // The receiver is local.
  WEBHOOKS_ALLOW_PRIVATE: 'true',
});
const container = await createContainer(config, { database, logger: createLogger('silent') });
const { db } = database;
const { companies, webhooks } = container.services;

const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200).end());
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

async function tenantFor(name: string) {
  const created = await companies.create(name);
  const company = await db
    .selectFrom('companies')
    .select('id')
    .where('company_reference', '=', created.company_reference)
    .executeTakeFirstOrThrow();
  return asTenant(company.id, 'sandbox');
}

async function writeEvents(tenant: ReturnType<typeof asTenant>, count: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < count; i++)
    await inTransaction(db, (trx) =>
      recordEvent(trx, tenant, 'policy.adjusted', { policy_reference: `bench-${i}` }, new Date()),
    );
  return ((performance.now() - started) * 1000) / count;
}

const quiet = await tenantFor('No endpoints');
const subscribed = await tenantFor('One endpoint');
await webhooks.create(subscribed, { url: receiverUrl });

// Alternating rounds, median of each, so that drift on a shared machine hits the three alike.
const ROUNDS = 8;
const perRound = Math.floor(events / ROUNDS);
const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const timings = { baseline: [] as number[], quiet: [] as number[], subscribed: [] as number[] };
await writeEvents(quiet, perRound); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  await sql`alter table events disable trigger events_webhook_queue`.execute(db);
  timings.baseline.push(await writeEvents(subscribed, perRound));
  await sql`alter table events enable trigger events_webhook_queue`.execute(db);
  timings.quiet.push(await writeEvents(quiet, perRound));
  timings.subscribed.push(await writeEvents(subscribed, perRound));
}
const baselineUs = median(timings.baseline);
const quietUs = median(timings.quiet);
const subscribedUs = median(timings.subscribed);

const line = (label: string, us: number) =>
  `${label.padEnd(34)} ${us.toFixed(0).padStart(6)} µs/transaction  (${(us / baselineUs).toFixed(2)}× baseline)\n`;
process.stdout.write(
  `${database.kind}: ${events} transactions of one event each per case, median of ${ROUNDS} rounds\n`,
);
process.stdout.write(line('trigger off (baseline)', baselineUs));
process.stdout.write(line('trigger on, tenant without endpoint', quietUs));
process.stdout.write(line('trigger on, tenant with endpoint', subscribedUs));

// Every event written to the subscribed tenant is now queued for fan-out.
const queued = perRound * ROUNDS;
const started = performance.now();
let delivered = 0;
while (delivered < queued) {
  await webhooks.runOnce();
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'succeeded')
    .executeTakeFirstOrThrow();
  delivered = row.n;
}
const seconds = (performance.now() - started) / 1000;
process.stdout.write(
  `delivery: ${delivered} events fanned out, signed and POSTed in ${seconds.toFixed(1)} s = ${(delivered / seconds).toFixed(0)} deliveries/s (receiver in the same process)\n`,
);

receiver.close();
await container.close();
