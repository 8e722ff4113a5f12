import assert from 'node:assert/strict';
import { test } from 'node:test';
import { arrayLiteral } from './array-literal.ts';

test('numbers and booleans are written as JavaScript writes them, null and undefined as NULL', () => {
  const rows = [{ v: 51.123456 }, { v: null }, { v: -0.5 }, { v: 1_700_000_000 }, { v: undefined }];
  assert.equal(
    arrayLiteral(rows, (r) => r.v),
    '{51.123456,NULL,-0.5,1700000000,NULL}',
  );
  assert.equal(
    arrayLiteral([true, false, null], (b) => b),
    '{true,false,NULL}',
  );
  assert.equal(
    arrayLiteral([], (n: number) => n),
    '{}',
  );
});

test('strings are quoted, a double quote or backslash in them escaped, so NULL and delimiters stay text', () => {
  assert.equal(
    arrayLiteral(['plain', 'NULL', '{"a":"b\\\\c"}', 'x,y}'], (s) => s),
    String.raw`{"plain","NULL","{\"a\":\"b\\\\c\"}","x,y}"}`,
  );
});
