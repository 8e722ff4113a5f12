/*
 * CSV as RFC 4180 writes it, one line at a time, so a report of a million rows is streamed rather
 * than built. Text that a spreadsheet would run as a formula (a surname typed as `=HYPERLINK(…)`) is
 * prefixed with an apostrophe, as OWASP advises for CSV injection; numbers, and text that is a plain
 * decimal such as an amount `-5.00`, are written as they are.
 */

export type CsvValue = string | number | boolean | null | undefined;

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;
const FORMULA_START = /^[=+\-@\t\r]/;
/** A plain decimal (`-5.00`) is a number to a spreadsheet, never a formula: written as it is. */
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/;

/** One field as RFC 4180 writes it (quoted when it must be), guarded against formulas. */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const text = FORMULA_START.test(value) && !PLAIN_NUMBER.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One record, ended by CRLF as RFC 4180 has it. */
export function csvLine(values: readonly CsvValue[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}
