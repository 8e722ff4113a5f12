import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { csvLine } from './csv.ts';

test('a line parses back to its values with a CSV library, quotes, commas and line breaks included', () => {
  const values = ['plain', 'with, comma', 'with "quotes"', 'two\r\nlines', ' padded ', '', 'naïve café'];
  const parsed = parse<string[]>(csvLine(values));
  assert.deepEqual(parsed, [values]);
});

test('numbers and empty values are written as they are', () => {
  assert.equal(csvLine([12.5, -3, 0, null, undefined, true]), '12.5,-3,0,,,true\r\n');
});

test('text a spreadsheet would run as a formula is prefixed with an apostrophe', () => {
  const parsed = parse<string[]>(csvLine(['=HYPERLINK("http://x")', '+1', '-2', '@SUM(A1)', 'O’Neil']));
  assert.deepEqual(parsed, [['\'=HYPERLINK("http://x")', "'+1", "'-2", "'@SUM(A1)", 'O’Neil']]);
});
