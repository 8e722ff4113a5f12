/**
 * POST /telematics/positions with 1,000-position batches through the full service on PostgreSQL, next to
 * a bare Fastify route doing the same INSERT … SELECT FROM unnest(…) ON CONFLICT DO NOTHING into the
 * same positions table, loaded in turn, in the same run.
 *
 *   npm run bench -- positions       (BENCH_SECONDS=8 per phase, BENCH_DEVICES=50, BENCH_CONNECTIONS=20, BENCH_POSTGRES_URL=…)
 *
 * A throw-away database is created for the run and dropped after. The devices are bound through a
 * seeding server whose clock runs 20 days behind, so each binding starts 20 days ago and every batch can
 * carry new, past times inside it: request k goes to device k % n with times base + (⌊k / n⌋ · 1,000 + i)
 * seconds, so none is a duplicate. The bare route writes its own device ids (uuids: positions have no
 * foreign keys) into the same table. At the end, the stored positions are counted against those sent.
 * Targets (issue 18): ≥ 200,000 positions/s, ≥ 80 % of the bare route.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import {
  BENCH_POSTGRES_URL,
  combined,
  load,
  report,
  drivePositionTails,
  startServer,
  withScratchDatabase,
  type LoadResult,
  createBenchCompany,
  createBenchPolicy,
  json,
} from './support.ts';

const BATCH = 1000;

const seconds = Number(process.env['BENCH_SECONDS'] ?? 8);
const deviceCount = Number(process.env['BENCH_DEVICES'] ?? 50);
const connections = Number(process.env['BENCH_CONNECTIONS'] ?? 20);
const ADMIN_API_KEY = `bench-admin-${randomBytes(16).toString('hex')}`;
const DAY = 86_400;
const nowSeconds = Math.floor(Date.now() / 1000);
/** The seeding server's clock, so that the bindings start here. */
const boundFrom = nowSeconds - 20 * DAY;
/** The first position time: an hour into the bindings. */
const base = boundFrom + 3600;

const tails = drivePositionTails(BATCH);

/** Bodies for successive requests over `devices`, each with 1,000 new times; request k is batch k. */
function bodies(devices: readonly string[]) {
  const state = { made: 0 };
  /** Where request k's positions are: its device and its batch (time − base) / 1,000. */
  const key = (k: number) => `${devices[k % devices.length]!}/${Math.floor(k / devices.length)}`;
  const next = () => {
    const k = state.made++;
    const device = devices[k % devices.length]!;
    const first = base + Math.floor(k / devices.length) * BATCH;
    let out = `{"device_id":"${device}","positions":[`;
    for (let i = 0; i < BATCH; i++) out += `${i === 0 ? '' : ','}{"time":${first + i}${tails[i]!}`;
    return { k, body: `${out}]}` };
  };
  return { state, key, next };
}

interface Acknowledged {
  /** The requests answered 202 (by k). */
  readonly requests: Set<number>;
  accepted: number;
  duplicates: number;
  rejected: number;
}

async function run(
  url: string,
  headers: Record<string, string>,
  next: () => { k: number; body: string },
  acknowledged: Acknowledged,
  durationSeconds: number,
): Promise<LoadResult> {
  return load({
    url: `${url}/telematics/positions`,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', ...headers },
    connections,
    requests: [
      {
        // One request at a time on a connection (no pipelining): its context holds the one in flight.
        setupRequest: (request, context) => {
          const { k, body } = next();
          (context as { k?: number }).k = k;
          return { ...request, body };
        },
        onResponse: (status: number, body: string, context: object) => {
          if (status !== 202) return;
          const r = JSON.parse(body) as { accepted: number; duplicates: number; rejected: unknown[] };
          acknowledged.requests.add((context as { k: number }).k);
          acknowledged.accepted += r.accepted;
          acknowledged.duplicates += r.duplicates;
          acknowledged.rejected += r.rejected.length;
        },
      },
    ],
    duration: durationSeconds,
  });
}

async function main(): Promise<void> {
  await withScratchDatabase(BENCH_POSTGRES_URL, async (DATABASE_URL) => {
    // ── Seeding: a company, a policy per device, each device bound (20 days ago by the seeder's clock).
    const seeder = await startServer('servers/journeys-milepost.ts', {
      BENCH_CLOCK: new Date(boundFrom * 1000).toISOString(),
      DATABASE_URL,
      ADMIN_API_KEY,
    });
    let headers: Record<string, string>;
    const devices = Array.from({ length: deviceCount }, (_, d) => `obd-bench-${String(d).padStart(4, '0')}`);
    try {
      headers = await createBenchCompany(seeder.url, ADMIN_API_KEY);
      for (let start = 0; start < deviceCount; start += 8) {
        await Promise.all(
          devices.slice(start, start + 8).map(async (deviceId, i) => {
            const policy = await createBenchPolicy(
              seeder.url,
              headers,
              `bench${String(start + i)}@example.com`,
              nowSeconds,
            );
            await json(
              await fetch(`${seeder.url}/devices`, {
                method: 'POST',
                headers: { ...headers, 'content-type': 'application/json' },
                body: JSON.stringify({
                  device_id: deviceId,
                  policy_reference: policy,
                  kind: 'obd',
                }),
              }),
            );
          }),
        );
      }
    } finally {
      await seeder.stop();
    }

    // ── Both servers up side by side, loaded in turn (bare, ours, ours, bare, bare, ours), as journeys.
    const ours = await startServer('servers/journeys-milepost.ts', {
      DATABASE_URL,
      ADMIN_API_KEY,
    });
    const bare = await startServer('servers/positions-bare.ts', { DATABASE_URL });
    const oursBodies = bodies(devices);
    const bareBodies = bodies(Array.from({ length: deviceCount }, () => randomUUID()));
    const oursAck: Acknowledged = { requests: new Set(), accepted: 0, duplicates: 0, rejected: 0 };
    const bareAck: Acknowledged = { requests: new Set(), accepted: 0, duplicates: 0, rejected: 0 };
    const oursPhases: LoadResult[] = [];
    const barePhases: LoadResult[] = [];
    try {
      await new Promise((resolve) => setTimeout(resolve, 1000)); // the geocoder loads in the background
      // Warm-up: the JIT's optimised code, every pooled connection opened and its function plans cached.
      await run(ours.url, headers, oursBodies.next, oursAck, 4);
      await run(bare.url, {}, bareBodies.next, bareAck, 4);
      for (const turn of ['bare', 'ours', 'ours', 'bare', 'bare', 'ours'] as const) {
        if (turn === 'ours') oursPhases.push(await run(ours.url, headers, oursBodies.next, oursAck, seconds));
        else barePhases.push(await run(bare.url, {}, bareBodies.next, bareAck, seconds));
      }
    } finally {
      // Stopping closes each server gracefully: requests still in flight finish first.
      await ours.stop();
      await bare.stop();
    }

    // ── Every position acknowledged is stored, once: count the stored ones by device and batch.
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    const { rows } = await client.query<{ key: string; count: number }>(
      `select coalesce(d.device_id, p.device_id::text) || '/' || ((extract(epoch from p.time)::bigint - $1) / $2) as key,
              count(*)::int as count
       from positions p left join devices d on d.id = p.device_id
       group by 1`,
      [base, BATCH],
    );
    await client.end();
    const stored = new Map(rows.map((r) => [r.key, r.count]));
    const perSecond = (r: LoadResult): LoadResult => ({
      ...r,
      requestsPerSecond: r.requestsPerSecond * BATCH,
    });
    const result = combined(oursPhases);
    const baseline = combined(barePhases);
    process.stdout.write(
      `POST /telematics/positions, ${BATCH.toLocaleString('en-GB')} positions a request (${oursBodies.next().body.length.toLocaleString('en-GB')} bytes), ${deviceCount} devices, ${connections} connections, 3 × ${seconds} s each, PostgreSQL\n`,
    );
    oursBodies.state.made--; // that body was only measured, never sent
    report('positions', result, baseline, 0.8);
    const phase = (p: LoadResult) =>
      `${(p.requestsPerSecond * BATCH).toFixed(0)} positions/s p99 ${String(p.p99Ms)} ms`;
    process.stdout.write(
      `phases: milepost ${oursPhases.map(phase).join(', ')}; baseline ${barePhases.map(phase).join(', ')}\n`,
    );
    const ok = perSecond(result).requestsPerSecond >= 200_000;
    process.stdout.write(
      `positions: ${perSecond(result).requestsPerSecond.toFixed(0)} positions/s (target ≥ 200,000; baseline ${perSecond(baseline).requestsPerSecond.toFixed(0)}), p99 ${result.p99Ms.toFixed(1)} ms ${ok ? 'ok' : 'BELOW TARGET'}\n`,
    );
    const sentKeys = new Set<string>();
    // A request cut off when a phase ends is unanswered: stored if its body had arrived whole, else not.
    for (const [side, sent, ack] of [
      ['milepost', oursBodies, oursAck],
      ['baseline', bareBodies, bareAck],
    ] as const) {
      let lost = 0;
      let unansweredStored = 0;
      let partial = 0;
      let storedPositions = 0;
      for (let k = 0; k < sent.state.made; k++) {
        const key = sent.key(k);
        sentKeys.add(key);
        const count = stored.get(key) ?? 0;
        storedPositions += count;
        if (count !== 0 && count !== BATCH) partial++;
        if (ack.requests.has(k) ? count !== BATCH : count === BATCH) {
          if (ack.requests.has(k)) lost++;
          else unansweredStored++;
        }
      }
      const clean =
        lost === 0 &&
        partial === 0 &&
        ack.duplicates === 0 &&
        ack.rejected === 0 &&
        ack.accepted === ack.requests.size * BATCH;
      process.stdout.write(
        `${side}: ${sent.state.made} requests sent (${sent.state.made * BATCH} positions), ${ack.requests.size} answered 202 (${ack.accepted} accepted, ${ack.duplicates} duplicates, ${ack.rejected} rejected); ${storedPositions} stored: every answered batch whole ${lost === 0 ? 'yes' : `NO (${lost} lost)`}, ${partial} partial, ${unansweredStored} of ${sent.state.made - ack.requests.size} cut off at a phase end stored: ${clean ? 'none lost or duplicated' : 'LOST OR DUPLICATED'}\n`,
      );
    }
    const stray = [...stored.keys()].filter((key) => !sentKeys.has(key)).length;
    if (stray > 0) process.stdout.write(`${stray} stored batches that no request sent: DUPLICATED\n`);
  });
}

await main();
