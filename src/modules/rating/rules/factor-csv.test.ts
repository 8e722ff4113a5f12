import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EXAMPLE_RATE_BOOK } from './example-rate-book.ts';
import { factorFromCsv, factorToCsv } from './factor-csv.ts';

const [driverAge, area] = EXAMPLE_RATE_BOOK.factors as [
  (typeof EXAMPLE_RATE_BOOK.factors)[number],
  (typeof EXAMPLE_RATE_BOOK.factors)[number],
];
const bands = { kind: 'bands', source: 'driver_age' } as const;

describe('factor tables as CSV', () => {
  test('bands and keys are written with a header, CRLF, empty cells for open bounds', () => {
    assert.equal(
      factorToCsv(driverAge),
      'from,to,factor\r\n17,21,2.2\r\n21,25,1.6\r\n25,30,1.2\r\n30,70,1\r\n70,,1.25\r\n',
    );
    assert.equal(factorToCsv(area), 'key,factor\r\nEC1A,1.3\r\nM1,1.2\r\nSW,1.15\r\n');
  });

  test('each table reads back as it was written', () => {
    for (const factor of EXAMPLE_RATE_BOOK.factors) {
      const result = factorFromCsv(factorToCsv(factor), factor);
      assert.deepEqual(result, { ok: true, rows: factor.rows }, factor.name);
    }
  });

  test('keys a spreadsheet would run as formulas are written guarded and read back as they were', () => {
    const keys = { kind: 'keys', source: 'use' } as const;
    const rows = ["=cmd|'/C calc'!A0", '+SUM(1)', '@x', '-x', "'=1", 'plain'].map((key) => ({
      key,
      factor: '1.1',
    }));
    const csv = factorToCsv({ name: 'use', source: 'use', kind: 'keys', applies_to: 'both', rows });
    assert.equal(
      csv,
      `key,factor\r\n'=cmd|'/C calc'!A0,1.1\r\n'+SUM(1),1.1\r\n'@x,1.1\r\n'-x,1.1\r\n''=1,1.1\r\nplain,1.1\r\n`,
    );
    assert.deepEqual(factorFromCsv(csv, keys), { ok: true, rows });
    // A negative number is a number, not a formula, in a key or a band bound: written as it is.
    const numbers = [{ key: '-5', factor: '1.1' }];
    const numeric = factorToCsv({
      name: 'age',
      source: 'vehicle_age',
      kind: 'keys',
      applies_to: 'both',
      rows: numbers,
    });
    assert.equal(numeric, 'key,factor\r\n-5,1.1\r\n');
    assert.deepEqual(factorFromCsv(numeric, { kind: 'keys', source: 'vehicle_age' }), {
      ok: true,
      rows: numbers,
    });
    const bounds = [{ from: -5, to: 0, factor: '1.1' }];
    const banded = factorToCsv({
      name: 'age',
      source: 'vehicle_age',
      kind: 'bands',
      applies_to: 'both',
      rows: bounds,
    });
    assert.equal(banded, 'from,to,factor\r\n-5,0,1.1\r\n');
    assert.deepEqual(factorFromCsv(banded, { kind: 'bands', source: 'vehicle_age' }), {
      ok: true,
      rows: bounds,
    });
  });

  test('a spreadsheet export: a BOM, spaces, a header in capitals, blank lines, quoted cells', () => {
    const csv = '\uFEFFFrom, To ,Factor\n\n"17", 21 ,2.2\r\n21,,"1.6"\n';
    assert.deepEqual(factorFromCsv(csv, bands), {
      ok: true,
      rows: [
        { from: 17, to: 21, factor: '2.2' },
        { from: 21, to: null, factor: '1.6' },
      ],
    });
  });

  test('bad cells are named by row (the header is 1) and column', () => {
    const csv = 'from,to,factor\n17,21,2.2\n21,abc,1.6\n25,30,-1\n31,40,1\n40\n';
    assert.deepEqual(factorFromCsv(csv, bands), {
      ok: false,
      problems: [
        { row: 3, column: 'to', message: 'must be a number, or empty for no bound' },
        { row: 6, column: null, message: 'must have 3 cells, not 1' },
      ],
    });
    const checked = factorFromCsv('from,to,factor\n17,21,2.2\n22,30,-1\n30,40,1.2.3\n', bands);
    assert.deepEqual(checked.ok ? [] : checked.problems.map((p) => [p.row, p.column]), [
      [3, 'factor'],
      [3, 'from'],
      [4, 'factor'],
    ]);
    assert.match(checked.ok ? '' : checked.problems[1]!.message, /gap/);
  });

  test('keys: repeated keys, non-canonical numbers for a numeric source, a wrong header, no rows, not CSV', () => {
    const repeated = factorFromCsv('key,factor\nEC1A,1.3\nEC1A,1.2\n', area);
    assert.deepEqual(repeated.ok ? [] : repeated.problems.map((p) => [p.row, p.column]), [[3, 'key']]);
    const numeric = factorFromCsv('key,factor\n07,1.1\n', { kind: 'keys', source: 'vehicle_group' });
    assert.deepEqual(numeric.ok ? [] : numeric.problems.map((p) => [p.row, p.column]), [[2, 'key']]);
    assert.deepEqual(factorFromCsv('district,factor\nEC1A,1\n', area), {
      ok: false,
      problems: [{ row: 1, column: null, message: 'the header must be key,factor' }],
    });
    const empty = factorFromCsv('key,factor\n', area);
    assert.deepEqual(empty.ok ? [] : empty.problems.map((p) => p.row), [null]);
    const broken = factorFromCsv('key,factor\n"EC1A,1\n', area);
    if (broken.ok) assert.fail('expected a problem');
    assert.match(broken.problems[0]!.message, /is not CSV/);
  });
});
