/**
 * What tracing costs when it is off (no OTEL_EXPORTER_OTLP_ENDPOINT), at the two wrappers every
 * statement and every job goes through: CPU time and young-generation collections (a proxy for bytes
 * allocated) of a million awaited calls through each, against the same call made directly, in
 * alternating rounds on one core. `npm run bench -- journeys` (BENCH_TRACES=on for the other side)
 * measures the whole request.
 *
 *   npm run bench -- tracing        (BENCH_CALLS=1000000, BENCH_ROUNDS=7)
 */
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { inStatementSpan } from '../src/platform/db/statement-names.ts';
import { inSpan, tracingEnabled } from '../src/platform/tracing.ts';

const calls = Number(process.env['BENCH_CALLS'] ?? 1_000_000);
const rounds = Number(process.env['BENCH_ROUNDS'] ?? 7);
const statement = { sql: 'select store_journey($1, $2) as outcome' };
const work = () => Promise.resolve(1);

const variants: Record<string, () => Promise<unknown>> = {
  direct: work,
  statement: () => inStatementSpan(statement, work),
  job: () => inSpan('process statements.bill-chunk', {}, work),
};

let scavenges = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries())
    if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR)
      scavenges++;
}).observe({ entryTypes: ['gc'] });

const results = new Map<string, Array<{ nanoseconds: number; scavenges: number }>>();
for (let round = 0; round < rounds; round++) {
  for (const [name, call] of Object.entries(variants)) {
    await sleep(10); // the previous round's collections are counted before this one starts
    const before = scavenges;
    const cpu = process.cpuUsage();
    for (let i = 0; i < calls; i++) await call();
    const used = process.cpuUsage(cpu);
    await sleep(10);
    const list = results.get(name) ?? [];
    list.push({ nanoseconds: ((used.user + used.system) * 1000) / calls, scavenges: scavenges - before });
    results.set(name, list);
  }
}

const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
process.stdout.write(
  `tracing ${tracingEnabled() ? 'on' : 'off'}: ${String(calls)} awaited calls a round, ${String(rounds)} rounds (the first warms up)\n`,
);
for (const [name, list] of results) {
  const ns = list.slice(1).map((r) => r.nanoseconds);
  process.stdout.write(
    `${name.padEnd(10)} CPU ${median(ns).toFixed(1)} ns a call (${Math.min(...ns).toFixed(1)}–${Math.max(...ns).toFixed(1)}), young collections ${list
      .slice(1)
      .map((r) => String(r.scavenges))
      .join(' ')}\n`,
  );
}
