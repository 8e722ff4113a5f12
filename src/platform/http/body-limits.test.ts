import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  DEFAULT_JSON_BODY_LIMITS,
  findFormLimitBreach,
  findJsonLimitBreach,
  type JsonBodyLimits,
} from './body-limits.ts';

const generous: JsonBodyLimits = {
  depth: 1000,
  keysPerObject: 1e9,
  itemsPerArray: 1e9,
  stringCharacters: 1e9,
  tokens: 1e9,
};
const scan = (text: string, limits: Partial<JsonBodyLimits>) =>
  findJsonLimitBreach(Buffer.from(text), { ...generous, ...limits });

/** Characters as the limits count them: code points (a string iterates by them). */
function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** What a parsed value holds, measured as the limits count it. */
function measure(value: unknown): JsonBodyLimits {
  const out = { depth: 0, keysPerObject: 0, itemsPerArray: 0, stringCharacters: 0, tokens: 0 };
  const walk = (v: unknown, depth: number): void => {
    out.tokens++;
    if (typeof v === 'string') out.stringCharacters = Math.max(out.stringCharacters, codePoints(v));
    if (typeof v !== 'object' || v === null) return;
    out.depth = Math.max(out.depth, depth + 1);
    if (Array.isArray(v)) {
      out.itemsPerArray = Math.max(out.itemsPerArray, v.length);
      for (const item of v) walk(item, depth + 1);
      return;
    }
    const entries = Object.entries(v);
    out.keysPerObject = Math.max(out.keysPerObject, entries.length);
    for (const [key, item] of entries) {
      out.tokens++;
      out.stringCharacters = Math.max(out.stringCharacters, codePoints(key));
      walk(item, depth + 1);
    }
  };
  walk(value, 0);
  return out;
}

test('any JSON text passes limits equal to what it holds, and fails each limit one below', () => {
  fc.assert(
    fc.property(fc.jsonValue({ stringUnit: 'binary', maxDepth: 6 }), fc.boolean(), (value, pretty) => {
      const text = JSON.stringify(value, null, pretty ? 2 : undefined);
      const held = measure(JSON.parse(text));
      assert.equal(scan(text, held), undefined);
      for (const limit of Object.keys(held) as Array<keyof JsonBodyLimits>) {
        if (held[limit] === 0) continue;
        assert.notEqual(scan(text, { ...held, [limit]: held[limit] - 1 }), undefined, `${limit} ${text}`);
      }
    }),
    { numRuns: 300 },
  );
});

test('each limit names where it was passed', () => {
  const cases: Array<[string, Partial<JsonBodyLimits>, string, RegExp]> = [
    ['{"a":1,"b":2,"c":3}', { keysPerObject: 2 }, '/body', /more than 2 keys/],
    ['{"list":[{"x/y":[1,2,3]}]}', { itemsPerArray: 2 }, '/body/list/0/x~1y', /more than 2 items/],
    ['{"a":[[["deep"]]]}', { depth: 3 }, '/body/a/0/0', /more than 3 deep/],
    ['{"a":{"s":"abcd"}}', { stringCharacters: 3 }, '/body/a/s', /longer than 3 characters/],
    ['["ab","abcd"]', { stringCharacters: 3 }, '/body/1', /longer than 3 characters/],
    ['{"abcd":1}', { stringCharacters: 3 }, '/body', /names a field longer than 3/],
    ['"abcd"', { stringCharacters: 3 }, '/body', /longer than 3/],
    ['[1,2,3]', { tokens: 3 }, '/body', /more than 3 values and keys/],
    ['{"k\\u00e9y":{"a":1,"b":2}}', { keysPerObject: 1 }, '/body/k\u00e9y', /more than 1 keys/],
  ];
  for (const [text, limits, path, message] of cases) {
    const breach = scan(text, limits);
    assert.equal(breach?.path, path, text);
    assert.match(breach.message, message, text);
  }
});

test('strings: escapes, quotes after backslashes and multi-byte characters are read as JSON reads them', () => {
  // Escaped quotes and backslashes, before and after the bytes read one by one.
  for (const body of ['a\\"b', 'x'.repeat(40) + '\\"', '\\\\'.repeat(40), 'é'.repeat(40) + '\\\\']) {
    const text = `{"s":"${body}","t":[1,2,3]}`;
    const characters = codePoints((JSON.parse(text) as { s: string }).s);
    assert.equal(scan(text, { stringCharacters: characters, itemsPerArray: 3 }), undefined, text);
    assert.equal(scan(text, { stringCharacters: characters - 1 })?.path, '/body/s', text);
    assert.equal(scan(text, { itemsPerArray: 2 })?.path, '/body/t', text);
  }
  assert.equal(scan('"\\ud83d\\ude00"', { stringCharacters: 2 }), undefined);
  assert.equal(scan('"😀"', { stringCharacters: 1 }), undefined);
  assert.equal(scan('\ufeff{"a":1}', { keysPerObject: 1 }), undefined);
});

test('malformed JSON is left to the parser: no breach, no throw', () => {
  for (const text of ['', '{', '{"a', '"abc', ']]]}}}', '{1:2}', 'nul', '[1,,2', '{"a":"\\']) {
    assert.equal(scan(text, { tokens: 10, depth: 2 }), undefined, text);
  }
  assert.equal(findJsonLimitBreach(Buffer.from(' '.repeat(1000)), DEFAULT_JSON_BODY_LIMITS), undefined);
});

test('a bomb is refused at its limit, not after reading it all', () => {
  const keys = Buffer.from(`{${Array.from({ length: 200_000 }, (_, k) => `"k${String(k)}":0`).join(',')}}`);
  assert.match(findJsonLimitBreach(keys, DEFAULT_JSON_BODY_LIMITS)?.message ?? '', /more than 128 keys/);
  const deep = Buffer.from('['.repeat(100_000) + ']'.repeat(100_000));
  assert.equal(findJsonLimitBreach(deep, DEFAULT_JSON_BODY_LIMITS)?.path, `/body${'/0'.repeat(16)}`);
});

test('form bodies: fields, and brackets in a name (encoded too)', () => {
  const limits = { fields: 3, brackets: 2 };
  assert.equal(findFormLimitBreach('a=1&b=2&&c=3&', limits), undefined);
  assert.match(findFormLimitBreach('a=1&b=2&c=3&d', limits)?.message ?? '', /more than 3 fields/);
  assert.equal(findFormLimitBreach('a[b][c]=[[[[', limits), undefined);
  assert.match(findFormLimitBreach('a[b][c][d]=1', limits)?.message ?? '', /more than 2 brackets/);
  assert.match(findFormLimitBreach('a%5Bb%5d[c]%5bd]=1', limits)?.message ?? '', /more than 2 brackets/);
});
