import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { buildDist, compileModule } from './build.ts';

test('compileModule blanks types out in place and points relative .ts imports at .js', () => {
  const source = [
    "import type { Config } from './config.ts';",
    "import { createContainer } from './container.ts';",
    "import './side-effect.ts';",
    "export { loadConfig } from '../config.ts';",
    'export * from "./geo/index.ts";',
    "import fastify from 'fastify';",
    'const port: number = 3000;',
    "const mod = await import('./lazy.ts');",
    "const name = 'file.ts';",
  ].join('\n');
  const compiled = compileModule(source);
  const lines = compiled.split('\n');
  assert.equal(lines.length, source.split('\n').length);
  assert.equal(lines[0]?.trim(), '');
  assert.equal(lines[1], "import { createContainer } from './container.js';");
  assert.equal(lines[2], "import './side-effect.js';");
  assert.equal(lines[3], "export { loadConfig } from '../config.js';");
  assert.equal(lines[4], 'export * from "./geo/index.js";');
  assert.equal(lines[5], "import fastify from 'fastify';");
  assert.equal(lines[6], 'const port         = 3000;');
  assert.equal(lines[7], "const mod = await import('./lazy.js');");
  assert.equal(lines[8], "const name = 'file.ts';");
});

test('the built service loads without the TypeScript stripper, and a second build writes nothing', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'milepost-dist-'));
  try {
    // dist/ finds package.json, node_modules and web/ as ../, as in the repository.
    const repository = path.resolve(import.meta.dirname, '..');
    for (const name of ['package.json', 'node_modules', 'web'])
      fs.symlinkSync(path.join(repository, name), path.join(root, name));
    const output = path.join(root, 'dist');
    const first = buildDist({ output });
    assert.ok(first.written.includes('main.js'));
    assert.ok(
      first.written.includes(
        path.join('integrations', 'geocoding', 'data', 'uk-postcodes', 'gb-postcodes.kd'),
      ),
    );
    assert.ok(!first.written.some((file) => file.endsWith('.test.js')));
    assert.deepEqual(buildDist({ output }), { written: [], removed: [] });

    fs.writeFileSync(path.join(output, 'gone.js'), '');
    assert.deepEqual(buildDist({ output }).removed, ['gone.js']);

    const child = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `await import(${JSON.stringify(path.join(output, 'app.js'))});
         await import(${JSON.stringify(path.join(output, 'container.js'))});
         process.stdout.write(JSON.stringify(process.moduleLoadList.filter((m) => m.includes('amaro'))));`,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout), []);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
