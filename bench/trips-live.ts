import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { asTenant, type DataEnvironment } from '../src/modules/companies/index.ts';
import type { PositionBatch } from '../src/modules/telematics/telematics-schemas.ts';
import { fixedClock } from '../src/platform/clock.ts';
import { createLogger } from '../src/platform/logging.ts';
import {
  BENCH_POSTGRES_URL,
  backendCpuSeconds,
  backendCpuSpent,
  drivePositionTails,
  seedBoundDevices,
  withScratchDatabase,
} from './support.ts';

// Trip cutting of drives streamed live, PostgreSQL: D devices (default 20) each drive for H hours
// (default 2) at 1 Hz and send their last 5 s of fixes every 5 s of the bench's clock, the worker's
// trip-cutting pass running after each round as it does every 5 s. Each cut rereads the trip in
// progress from its start, so what is measured is what those rereads cost: the CPU of this process
// and of its database's backends over the whole drive, against, in the same run, the same drives by
// other devices stored the same way with no pass until they have ended (each trip read once).
// `npm run bench -- trips-live [devices] [hours]`.
const devices = Number(process.argv[2] ?? 20);
const hours = Number(process.argv[3] ?? 2);
if (!Number.isInteger(devices) || devices < 1 || !(hours > 0)) {
  process.stderr.write('usage: npm run bench -- trips-live [devices] [hours]\n');
  process.exit(64);
}
const STEP_S = 5;
/** When the drives' last passes run: past the idle time that ends a trip (5 minutes by default). */
const AFTER_END_S = 600;
const DAY_S = 86_400;
const driveS = Math.round(hours * 3600);
const nowSeconds = Math.floor(Date.now() / 1000);
const boundFrom = nowSeconds - 3 * DAY_S;
/** The warm-up's drive, by devices of its own. */
const WARM_S = 900;
const tails = drivePositionTails(Math.max(driveS, WARM_S));
const ADMIN_API_KEY = 'b'.repeat(40);

await withScratchDatabase(BENCH_POSTGRES_URL, async (databaseUrl) => {
  const live = Array.from({ length: devices }, (_, i) => `live-${String(i)}`);
  const after = Array.from({ length: devices }, (_, i) => `after-${String(i)}`);
  const warm = ['warm-0', 'warm-1'];
  await seedBoundDevices(databaseUrl, ADMIN_API_KEY, [...live, ...after, ...warm], {
    boundFromSeconds: boundFrom,
    nowSeconds,
    emailPrefix: 'trips-live-',
  });
  const clock = fixedClock(new Date(boundFrom * 1000).toISOString());
  // The API role: no worker loop cuts trips behind the bench's back; its passes are the bench's own.
  const config = loadConfig({ DATABASE_URL: databaseUrl, ROLE: 'api', LOG_LEVEL: 'warn', ADMIN_API_KEY });
  const container = await createContainer(config, { clock, logger: createLogger('warn') });
  await container.start();
  const telematics = container.services.telematics;
  const watcher = new pg.Client({ connectionString: databaseUrl });
  await watcher.connect();
  try {
    const { rows } = await watcher.query<{ company_id: string; environment: DataEnvironment }>(
      'select company_id, environment from devices limit 1',
    );
    const owner = rows[0];
    if (owner === undefined) throw new Error('no device was seeded');
    const tenant = asTenant(owner.company_id, owner.environment);

    /** A fix `k` seconds into the drive that starts at `startS`, as a position of the API. */
    const fix = (startS: number, k: number): PositionBatch['positions'][number] =>
      JSON.parse(`{"time":${String(startS + k)}${tails[k] as string}`) as PositionBatch['positions'][number];

    /**
     * The drives of `deviceIds`, from `startS`, sent a step at a time with the clock at each step's end;
     * with `passes`, a trip-cutting pass after each step; then, AFTER_END_S later, passes until none
     * has anything left to cut. The CPU seconds it took, the devices the passes cut, the trips stored.
     */
    async function stream(deviceIds: readonly string[], startS: number, passes: boolean, forS = driveS) {
      const cpuBefore = process.cpuUsage();
      const backendsBefore = await backendCpuSeconds(watcher);
      let cuts = 0;
      let stored = 0;
      const pass = async () => {
        for (;;) {
          const done = await telematics.cutPendingTrips(clock.now());
          cuts += done.devices;
          stored += done.stored;
          if (done.devices === 0) return;
        }
      };
      for (let sentS = STEP_S; sentS <= forS; sentS += STEP_S) {
        clock.set(new Date((startS + sentS) * 1000));
        await Promise.all(
          deviceIds.map((deviceId) =>
            telematics.ingest(tenant, {
              device_id: deviceId,
              positions: Array.from({ length: STEP_S }, (_, k) => fix(startS, sentS - STEP_S + k)),
            }),
          ),
        );
        if (passes) await pass();
      }
      clock.set(new Date((startS + forS + AFTER_END_S) * 1000));
      await pass();
      const cpu = process.cpuUsage(cpuBefore);
      const cpuS =
        (cpu.user + cpu.system) / 1e6 + backendCpuSpent(backendsBefore, await backendCpuSeconds(watcher));
      return { cpuS, cuts, stored };
    }

    // Warm: the code of both ways compiled before either is measured.
    await stream(warm, boundFrom + 600, true, WARM_S);
    const liveStart = boundFrom + 3600;
    const ours = await stream(live, liveStart, true);
    const baseline = await stream(after, liveStart + driveS + 3600, false);
    const positions = devices * driveS;
    process.stdout.write(
      `trips-live: ${String(devices)} devices × ${String(hours)} h at 1 Hz (${positions.toLocaleString('en-GB')} positions)\n` +
        `  cut live (a pass every ${String(STEP_S)} s): ${ours.cpuS.toFixed(1)} s of CPU, ${String(ours.cuts)} cuts, ${String(ours.stored)} trips stored\n` +
        `  cut once at the end (baseline):  ${baseline.cpuS.toFixed(1)} s of CPU, ${String(baseline.cuts)} cuts, ${String(baseline.stored)} trips stored\n` +
        `  ratio (baseline / live): ${(baseline.cpuS / ours.cpuS).toFixed(2)}\n`,
    );
  } finally {
    await watcher.end();
    await container.close();
  }
});
