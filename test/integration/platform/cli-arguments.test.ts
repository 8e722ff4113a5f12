import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { lockDataDir, type DataDirLock } from '../../../src/platform/db/data-dir-lock.ts';
import { TEST_ADMIN_KEY } from '../../support/app.ts';
import { embeddedOnly } from '../../support/database.ts';

// `npm run cli -- …` reads its command and flags before it opens any database: a mistake is answered
// with exit code 2 whatever state the database is in, and leaves the database alone.
const CLI = path.resolve(import.meta.dirname, '../../../src/cli.ts');

let root: string;
let lockedDir: string;
let lock: DataDirLock;

before(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'milepost-cli-args-'));
  lockedDir = path.join(root, 'locked');
  // Held by this process, as a running server holds its embedded database.
  lock = lockDataDir(path.join(lockedDir, 'pglite'));
});
after(async () => {
  lock.release();
  await fs.rm(root, { recursive: true, force: true });
});

function cli(env: Record<string, string>, ...args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { PATH: process.env['PATH'] ?? '', ADMIN_API_KEY: TEST_ADMIN_KEY, ...env } },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr });
      },
    );
  });
}

const MISTAKES: Array<[string[], RegExp]> = [
  [['frobnicate'], /^milepost: unknown command "frobnicate"$/m],
  [['company', 'frobnicate'], /^milepost: unknown command "company frobnicate"$/m],
  [['company'], /^milepost: unknown command "company"$/m],
  [['company', 'create'], /company create needs --name NAME/],
  [['company', 'create', '--name', ' '], /company create needs --name NAME/],
  [['company', 'list', '--name', 'Acme'], /company list does not take --name/],
  [['company', 'list', 'extra'], /unknown command "company list extra"/],
  [['staff', 'create', '--email', 'ada@insurer.example', '--role', 'owner'], /staff create needs/],
  [['seed', '--policies', 'many'], /seed needs --policies N/],
  [['emails', '--limit', '0'], /emails --limit takes a whole number from 1 to 1000/],
  [['emails', '--colour', 'red'], /^milepost: unknown option '--colour'/im],
  [['emails', '--to'], /^milepost: option '--to <value>' argument missing/im],
  [[], /^usage: npm run cli -- <command>$/m],
];

describe('the CLI checks its command and flags before it opens the database', { skip: embeddedOnly }, () => {
  test('on a DATA_DIR that another process holds, a mistake is still named: exit 2, nothing on stdout', async () => {
    for (const [args, message] of MISTAKES) {
      const r = await cli({ DATA_DIR: lockedDir }, ...args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message, args.join(' '));
      assert.doesNotMatch(r.stderr, /in use by process/, args.join(' '));
      assert.equal(r.stdout, '', args.join(' '));
    }
    // The usage follows an unknown command, so the operator sees what there is.
    assert.match(
      (await cli({ DATA_DIR: lockedDir }, 'frobnicate')).stderr,
      /^ {2}company create --name NAME/m,
    );
  });

  test('a DATA_DIR that does not exist is not created by a mistake', async () => {
    const missing = path.join(root, 'never-made');
    const r = await cli({ DATA_DIR: missing }, 'frobnicate');
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /unknown command "frobnicate"/);
    await assert.rejects(fs.stat(missing), { code: 'ENOENT' });
  });

  test('a DATABASE_URL that nothing answers does not stand in the way of naming the mistake', async () => {
    const r = await cli({ DATABASE_URL: 'postgres://root@127.0.0.1:1/nowhere' }, 'frobnicate');
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /unknown command "frobnicate"/);
  });

  test('--help prints the usage on stdout and exits 0, without a database', async () => {
    const r = await cli({ DATA_DIR: lockedDir }, '--help');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^usage: npm run cli -- <command>$/m);
  });
});
