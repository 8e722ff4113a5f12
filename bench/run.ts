import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// `npm run bench -- <name>` runs bench/<name>.ts in its own process.
const name = process.argv[2];
const available = fs
  .readdirSync(import.meta.dirname)
  .filter((f) => f.endsWith('.ts') && !['run.ts', 'support.ts'].includes(f))
  .map((f) => f.replace(/\.ts$/, ''));
if (name === undefined || !available.includes(name)) {
  process.stderr.write(`usage: npm run bench -- <name>\navailable: ${available.join(', ')}\n`);
  process.exit(64);
}
const child = spawn(
  process.execPath,
  [path.join(import.meta.dirname, `${name}.ts`), ...process.argv.slice(3)],
  { stdio: 'inherit' },
);
child.on('exit', (code) => process.exit(code ?? 1));
