import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PositionInputSchema } from '../telematics-schemas.ts';
import {
  attributeFieldError,
  findAttributeProblem,
  KNOWN_POSITION_FIELDS,
  MAX_ATTRIBUTES_PER_POSITION,
  otherAttributes,
} from './position-attributes.ts';

const fix = (extra: object = {}) => ({ time: 1_749_556_800, lat: 51.5, lon: -0.1, speed_kmh: 30, ...extra });
const many = (count: number) =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`io_${String(i)}`, i]));

describe('position attributes', () => {
  test('the known fields are the schema’s, so nothing the schema names is taken for an attribute', () => {
    assert.deepEqual([...KNOWN_POSITION_FIELDS].sort(), Object.keys(PositionInputSchema.properties).sort());
  });

  test('the fields beyond the known ones, as they came; none is null', () => {
    assert.equal(otherAttributes(fix()), null);
    assert.deepEqual(
      { ...otherAttributes(fix({ altitude: 31.5, sat: 9, moving: true, fw: 'a.1' })) },
      {
        altitude: 31.5,
        sat: 9,
        moving: true,
        fw: 'a.1',
      },
    );
  });

  test('within the bounds: no problem', () => {
    assert.equal(findAttributeProblem([fix(), fix(many(MAX_ATTRIBUTES_PER_POSITION))]), undefined);
    assert.equal(
      findAttributeProblem([fix({ [`_${'a'.repeat(63)}`]: 'x'.repeat(256), 'fw.v-1': false })]),
      undefined,
    );
    // Characters are code points, as the schema counts them: 256 emoji are 512 UTF-16 units.
    assert.equal(findAttributeProblem([fix({ mood: '🚗'.repeat(256) })]), undefined);
    assert.equal(findAttributeProblem([fix({ mood: '🚗'.repeat(257) })])?.name, 'mood');
  });

  test('the first problem names its position and attribute', () => {
    const cases: Array<[object, { index: number; name?: string; message: RegExp }]> = [
      [fix(many(33)), { index: 1, message: /^has 33 other attributes; at most 32$/ }],
      [fix({ ['a'.repeat(65)]: 1 }), { index: 1, name: 'a'.repeat(65), message: /longer than 64/ }],
      [fix({ '9lives': 1 }), { index: 1, name: '9lives', message: /start with a letter/ }],
      [fix({ 'a b': 1 }), { index: 1, name: 'a b', message: /only letters, digits/ }],
      [fix({ note: 'x'.repeat(257) }), { index: 1, name: 'note', message: /at most 256 characters/ }],
      [fix({ big: Infinity }), { index: 1, name: 'big', message: /finite/ }],
      [fix({ obj: {} }), { index: 1, name: 'obj', message: /number, a string or a boolean/ }],
      [fix({ nothing: null }), { index: 1, name: 'nothing', message: /number, a string or a boolean/ }],
    ];
    for (const [bad, expected] of cases) {
      const problem = findAttributeProblem([fix(), bad, bad]);
      assert.ok(problem !== undefined, JSON.stringify(expected));
      assert.equal(problem.index, expected.index);
      assert.equal(problem.name, expected.name);
      assert.match(problem.message, expected.message);
    }
  });

  test('as a field error: a JSON pointer under the given root, the name escaped', () => {
    assert.deepEqual(attributeFieldError([fix({ 'a/b~c': 1 })], '/payload'), {
      path: '/payload/positions/0/a~1b~0c',
      message:
        'is not an attribute name: it must start with a letter or `_` and hold only letters, digits, `_`, `.` and `-`',
    });
    assert.equal(attributeFieldError([fix()], '/body'), undefined);
  });
});
