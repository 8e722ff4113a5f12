import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { csvLine, guardFormula, unguardFormula } from './csv.ts';

test('a line parses back to its values with a CSV library, quotes, commas and line breaks included', () => {
  const values = ['plain', 'with, comma', 'with "quotes"', 'two\r\nlines', ' padded ', '', 'naïve café'];
  const parsed: string[][] = parse(csvLine(values));
  assert.deepEqual(parsed, [values]);
});

test('numbers, amounts as text and empty values are written as they are', () => {
  assert.equal(csvLine([12.5, -3, 0, null, undefined, true]), '12.5,-3,0,,,true\r\n');
  assert.equal(csvLine(['-5.00', '12.30', '-0.01']), '-5.00,12.30,-0.01\r\n');
});

test('text a spreadsheet would run as a formula is prefixed with an apostrophe', () => {
  const parsed: string[][] = parse(csvLine(['=HYPERLINK("http://x")', '+1', '-2+3', '@SUM(A1)', 'O’Neil']));
  assert.deepEqual(parsed, [['\'=HYPERLINK("http://x")', "'+1", "'-2+3", "'@SUM(A1)", 'O’Neil']]);
});

test('guarded text reads back unguarded exactly, apostrophes of its own included', () => {
  for (const text of [
    '=1+1',
    '+SUM(1)',
    '-x',
    '@x',
    '\t=1',
    "'=1",
    "''+x",
    "'plain",
    '-5',
    '-2.5',
    'plain',
    '',
  ])
    assert.equal(unguardFormula(guardFormula(text)), text, text);
  assert.equal(guardFormula('=1+1'), "'=1+1");
  assert.equal(guardFormula("'=1"), "''=1");
  assert.equal(guardFormula('-5'), '-5');
  assert.equal(unguardFormula("'plain"), "'plain");
});
