import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { GENERATED_FILE, generateTypes } from '../../../sdk/generate.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

test('the committed SDK types are what the served OpenAPI document generates (else: npm run sdk)', async () => {
  const served = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(served.statusCode, 200);
  const expected = await generateTypes(served.json());
  const committed = await readFile(GENERATED_FILE, 'utf8');
  if (committed === expected) return;
  // Name the first line that differs, so the message says what changed without a 600 KB diff.
  const want = expected.split('\n');
  const have = committed.split('\n');
  const line = want.findIndex((text, i) => text !== have[i]);
  assert.fail(
    `sdk/src/openapi.ts is out of date with the OpenAPI document: run \`npm run sdk\` and commit the result.\n` +
      `First difference at line ${line + 1}:\n  committed: ${have[line] ?? '(end of file)'}\n  generated: ${want[line] ?? '(end of file)'}`,
  );
});
