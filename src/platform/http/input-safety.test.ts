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

test('a binary body is bytes, not fields: a photo of many megabytes is not walked', () => {
  const photo = Buffer.alloc(9_000_000, 0);
  // Walked as an object, a photo made a string key per byte: seconds of CPU, and more heap than the
  // service has. A property that notices being read shows whether the walk went in.
  let walked = false;
  Object.defineProperty(photo, 'probe', {
    enumerable: true,
    get: () => {
      walked = true;
      return 'x';
    },
  });
  assert.equal(findUnsafeInput(photo, '/body'), undefined);
  assert.equal(
    findUnsafeInput({ photo: new Uint8Array(photo.buffer, 0, 16), also: photo }, '/body'),
    undefined,
  );
  assert.equal(walked, false, 'the bytes were walked one by one');
});
