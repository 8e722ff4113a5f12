import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';

// The full service, API and worker in one process (the worker sends the welcome emails the login
// benchmark reads its temporary passwords from), on a throw-away embedded database, or on
// PostgreSQL when DATABASE_URL is set. SMTP_URL and ADMIN_API_KEY come from the benchmark.
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'milepost-bench-login-'));
const config = loadConfig({ ...process.env, DATA_DIR: dataDir, PORT: '0', ROLE: 'all' });
const container = await createContainer(config);
const app = await buildApp(container);
const address = await app.listen({ port: 0, host: '127.0.0.1' });
container.setListeningUrl(address);
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
