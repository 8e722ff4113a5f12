import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import { createContainer } from '../../../src/container.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { openDatabase } from '../../../src/platform/db/database.ts';
import type { Database } from '../../../src/schema.ts';
import { createLogger } from '../../../src/platform/logging.ts';
import { TEST_ADMIN_KEY } from '../../support/app.ts';
import { embeddedOnly } from '../../support/database.ts';
import { make } from '../../support/factories.ts';

const CLI = path.resolve(import.meta.dirname, '../../../src/cli.ts');
let dataDir: string;

before(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'milepost-lock-'));
});
after(async () => {
  await fs.rm(dataDir, { recursive: true, force: true });
});

/** The CLI as an operator runs it, in a process of its own on the embedded database. */
function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return cliIn(dataDir, ...args);
}

function cliIn(
  directory: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { PATH: process.env['PATH'] ?? '', DATA_DIR: directory, ADMIN_API_KEY: TEST_ADMIN_KEY } },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr });
      },
    );
  });
}

describe('the embedded data directory belongs to one process', { skip: embeddedOnly }, () => {
  test('a second process answers at once with exit code 75, naming the holder', async () => {
    const held = await openDatabase<Database>({ dataDir: path.join(dataDir, 'pglite') });
    try {
      const second = await cli('company', 'create', '--name', 'Lost');
      assert.equal(second.code, 75, second.stderr);
      assert.match(second.stderr, new RegExp(`in use by process ${process.pid}`));
      assert.equal(second.stdout, '', 'no credentials are printed that the server would not know');
    } finally {
      await held.close();
    }
    const after = await cli('company', 'create', '--name', 'Kept');
    assert.equal(after.code, 0, after.stderr);
    assert.match(after.stdout, /"client_secret"/);
  });

  test('a lock left by a process that died is taken over', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    await fs.writeFile(`${path.join(dataDir, 'pglite')}.pid`, `${dead.stdout.toString()}\n`);
    const listed = await cli('company', 'list');
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /Kept/);
  });

  test('a cluster cut short (a damaged pg_control): one line naming the directory, and nothing in it changed', async () => {
    const damaged = await fs.mkdtemp(path.join(os.tmpdir(), 'milepost-damaged-'));
    try {
      await fs.cp(path.join(dataDir, 'pglite'), path.join(damaged, 'pglite'), { recursive: true });
      await fs.truncate(path.join(damaged, 'pglite', 'global', 'pg_control'), 0);
      // PGlite writes its postmaster.pid at every start, whatever it then finds.
      const files = async () =>
        (await fs.readdir(damaged, { recursive: true }))
          .filter((file) => file !== path.join('pglite', 'postmaster.pid'))
          .sort();
      const before = await files();
      const opened = await cliIn(damaged, 'company', 'list');
      assert.equal(opened.code, 1, opened.stderr);
      assert.equal(opened.stdout, '');
      assert.match(
        opened.stderr,
        new RegExp(
          `^milepost: the embedded database in ${path.join(damaged, 'pglite')} could not be opened \\(.+\\): restore the directory from a backup, or move it away to start with an empty one\\n$`,
        ),
      );
      assert.deepEqual(await files(), before, 'no file made or removed (the lock file beside it is gone)');
      assert.equal((await fs.stat(path.join(damaged, 'pglite', 'global', 'pg_control'))).size, 0);
    } finally {
      await fs.rm(damaged, { recursive: true, force: true });
    }
  });

  test('npm run cli -- emails shows the outbox: a temporary password without grepping logs', async () => {
    const config = loadConfig({ DATA_DIR: dataDir, ADMIN_API_KEY: TEST_ADMIN_KEY, LOG_LEVEL: 'silent' });
    const container = await createContainer(config, {
      clock: fixedClock('2025-09-20T12:00:00Z'),
      logger: createLogger('silent'),
      jobPollingSeconds: 0.5,
    });
    const app = await buildApp(container);
    const email = 'first.driver@example.com';
    try {
      await container.start();
      const company = await app.inject({
        method: 'POST',
        url: '/admin/companies',
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` },
        payload: { name: 'Emails' },
      });
      const credentials = company.json<{ client_id: string; client_secret_sandbox: string }>();
      await make.policy(
        app,
        { client_id: credentials.client_id, client_secret: credentials.client_secret_sandbox },
        { proposer: { email } },
      );
      const deadline = Date.now() + 15_000;
      while ((await container.services.notifications.emailsTo(email))[0]?.status !== 'logged') {
        assert.ok(Date.now() < deadline, 'the welcome email was not kept in the outbox');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await app.close();
      await container.close();
    }
    const shown = await cli('emails', '--to', email);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`to ${email}`));
    assert.match(shown.stdout, /Temporary password: \S{8,}/);
  });
});
