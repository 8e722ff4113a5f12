import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';

// The full service (every plugin, hook and the logger at warn) on a throw-away embedded database,
// or on PostgreSQL when DATABASE_URL is set.
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'milepost-bench-'));
const config = loadConfig({ ...process.env, DATA_DIR: dataDir, PORT: '0', ROLE: 'api' });
const container = await createContainer(config);
const app = await buildApp(container);
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
