import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { importsOf, MAP_FILE, readModuleGraph, renderModuleMap } from '../../tools/module-map.ts';

test('the committed module map is what the imports in src/ draw (else: npm run docs:modules)', async () => {
  const committed = fs.readFileSync(MAP_FILE, 'utf8');
  const generated = await renderModuleMap(readModuleGraph());
  const have = committed.split('\n');
  const want = generated.split('\n');
  const line = want.findIndex((text, index) => have[index] !== text);
  assert.equal(
    line,
    -1,
    `docs/modules.md differs from the code at line ${line + 1}:\n  committed: ${have[line] ?? '(end)'}\n  generated: ${want[line] ?? '(end)'}`,
  );
  assert.equal(have.length, want.length);
});

test('imports are read as the code runs them: type-only imports load nothing', () => {
  const source = [
    "import type { A } from '../a/index.ts';",
    "import { type B, type C } from '../b/index.ts';",
    "import { type D, e } from '../c/index.ts';",
    "export { f } from '../d/index.ts';",
    "import {\n  g,\n  h,\n} from '../e/index.ts';",
    "import '../f/index.ts';",
    "const lazy = await import('../g/index.ts');",
  ].join('\n');
  assert.deepEqual(importsOf(source), [
    { specifier: '../a/index.ts', typeOnly: true },
    { specifier: '../b/index.ts', typeOnly: true },
    { specifier: '../c/index.ts', typeOnly: false },
    { specifier: '../d/index.ts', typeOnly: false },
    { specifier: '../e/index.ts', typeOnly: false },
    { specifier: '../f/index.ts', typeOnly: false },
    { specifier: '../g/index.ts', typeOnly: false },
  ]);
});
