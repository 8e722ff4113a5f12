import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findUnsafeInput } from './input-safety.ts';

test('a problem is named by its JSON pointer, keys escaped, array items by index', () => {
  assert.equal(findUnsafeInput({ a: [1, { 'b/c~d': 'x\u0000' }] }, '/body')?.path, '/body/a/1/b~1c~0d');
  const poisoned = JSON.parse('{"positions":[{"lat":1},{"__proto__":{"x":1}}]}') as unknown;
  assert.deepEqual(findUnsafeInput(poisoned, '/body'), {
    path: '/body/positions/1/__proto__',
    message: 'is a forbidden name',
  });
  assert.equal(
    findUnsafeInput({ ['bad\ud800']: 1 }, '/query')?.message,
    'names a field that must be well-formed Unicode (no lone surrogate)',
  );
  assert.deepEqual(findUnsafeInput('a\u0000', '/body'), {
    path: '/body',
    message: 'must not contain a NUL character (\\u0000)',
  });
  assert.equal(findUnsafeInput({ n: 1, b: true, z: null, s: 'fine', deep: [[['ok']]] }, '/body'), undefined);
});

test('a deeply nested body is walked without recursion', () => {
  let deep: unknown = 'x\u0000';
  for (let i = 0; i < 100_000; i++) deep = [deep];
  assert.equal(findUnsafeInput(deep, '/body')?.path.length, '/body'.length + 2 * 100_000);
});
