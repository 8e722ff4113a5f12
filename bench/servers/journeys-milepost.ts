import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';
import { shiftedClock } from '../../src/platform/clock.ts';

// The full service in the API role on DATABASE_URL (PostgreSQL), with its job queues created (policy
// creation enqueues the welcome email) and the geocoder warming, as `npm start` has them. BENCH_CLOCK
// (an ISO time) runs its clock from then on, for seeding data in the past.
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'milepost-bench-'));
const config = loadConfig({ ...process.env, DATA_DIR: dataDir, PORT: '0', ROLE: 'api' });
const clockAt = process.env['BENCH_CLOCK'];
const container = await createContainer(
  config,
  clockAt === undefined ? {} : { clock: shiftedClock(clockAt) },
);
const app = await buildApp(container);
const address = await app.listen({ port: 0, host: '127.0.0.1' });
await container.start();
process.stdout.write(`${address}\n`);
process.on('SIGTERM', () => {
  void (async () => {
    await app.close();
    await container.close();
    await fs.rm(dataDir, { recursive: true, force: true });
    process.exit(0);
  })();
});
