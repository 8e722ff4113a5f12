import { CsvError, parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { guardFormula, unguardFormula } from '../../../platform/csv.ts';
import { factorRowProblems } from './rate-book-validation.ts';
import type { BandRow, KeyRow, RatingFactor } from './rate-book.ts';

/*
 * One factor's table as CSV (RFC 4180, CRLF, a header row), for staff who keep rating tables in a
 * spreadsheet: bands as `from,to,factor` (an empty bound is open), keys as `key,factor`. Reading one
 * back names each bad cell by its row (1 is the header) and column. A key a spreadsheet would run as a
 * formula (`=…`, `+…`, `-…`, `@…`) is written after an apostrophe, as the reports' CSV writes text,
 * and read back without it; band bounds and factors are numbers, written as they are. Pure.
 */

export interface CsvProblem {
  /** The CSV record, 1 being the header; null for the file as a whole. */
  readonly row: number | null;
  /** The column's header name; null for a whole row. */
  readonly column: string | null;
  readonly message: string;
}

export type FactorCsvResult =
  | { readonly ok: true; readonly rows: readonly BandRow[] | readonly KeyRow[] }
  | { readonly ok: false; readonly problems: readonly CsvProblem[] };

const COLUMNS = { bands: ['from', 'to', 'factor'], keys: ['key', 'factor'] } as const;
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?$/;

/** The factor's rows as CSV text: a header row, then one record per row, CRLF line ends. */
export function factorToCsv(factor: RatingFactor): string {
  const records =
    factor.kind === 'bands'
      ? factor.rows.map((row) => [
          row.from === null ? '' : String(row.from),
          row.to === null ? '' : String(row.to),
          row.factor,
        ])
      : factor.rows.map((row) => [guardFormula(row.key), row.factor]);
  return stringify([[...COLUMNS[factor.kind]], ...records], { record_delimiter: '\r\n' });
}

/** A band bound from its cell: empty is open (null); otherwise a plain decimal number. */
function bound(cell: string): number | null | undefined {
  if (cell === '') return null;
  return NUMBER.test(cell) ? Number(cell) : undefined;
}

/**
 * Rows for a factor of `factor.kind` and `factor.source` from CSV text, checked as a rate book's rows
 * are; or every problem by row and column.
 */
export function factorFromCsv(csv: string, factor: Pick<RatingFactor, 'kind' | 'source'>): FactorCsvResult {
  let records: string[][];
  try {
    records = parse(csv, { bom: true, trim: true, skip_empty_lines: true, relax_column_count: true });
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    const line = typeof error['lines'] === 'number' ? error['lines'] : null;
    return { ok: false, problems: [{ row: line, column: null, message: `is not CSV: ${error.message}` }] };
  }
  const columns = COLUMNS[factor.kind];
  const header = records[0]?.map((cell) => cell.toLowerCase());
  if (header?.join(',') !== columns.join(','))
    return {
      ok: false,
      problems: [{ row: 1, column: null, message: `the header must be ${columns.join(',')}` }],
    };
  const problems: CsvProblem[] = [];
  const rows = records.slice(1).map((record, index) => {
    const row = index + 2;
    if (record.length !== columns.length)
      problems.push({
        row,
        column: null,
        message: `must have ${columns.length} cells, not ${record.length}`,
      });
    const cell = (column: number) => record[column] ?? '';
    if (factor.kind === 'keys') return { key: unguardFormula(cell(0)), factor: cell(1) };
    const [from, to] = [bound(cell(0)), bound(cell(1))];
    if (from === undefined)
      problems.push({ row, column: 'from', message: 'must be a number, or empty for no bound' });
    if (to === undefined)
      problems.push({ row, column: 'to', message: 'must be a number, or empty for no bound' });
    return { from: from ?? null, to: to ?? null, factor: cell(2) };
  });
  if (problems.length === 0)
    for (const problem of factorRowProblems(factor.kind, factor.source, rows)) {
      const cell = /^rows\[(\d+)\](?:\.(\w+))?$/.exec(problem.path);
      problems.push({
        row: cell === null ? null : Number(cell[1]) + 2,
        column: cell?.[2] ?? null,
        message: problem.message,
      });
    }
  if (problems.length > 0) return { ok: false, problems };
  return factor.kind === 'bands'
    ? { ok: true, rows: rows as BandRow[] }
    : { ok: true, rows: rows as KeyRow[] };
}
