/*
 * CSV as RFC 4180 writes it, one line at a time, so a report of a million rows is streamed rather
 * than built. Pure: the reports write with it, and rating's factor tables guard their text cells with
 * it. Text that a spreadsheet would run as a formula (a surname typed as `=HYPERLINK(…)`) is prefixed
 * with an apostrophe, as OWASP advises for CSV injection; numbers, and text that is a plain decimal
 * such as an amount `-5.00`, are written as they are.
 */

export type CsvValue = string | number | boolean | null | undefined;

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;
const FORMULA_START = /^[=+\-@\t\r]/;
/** A plain decimal (`-5.00`) is a number to a spreadsheet, never a formula: written as it is. */
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/;

/** Whether a spreadsheet would run `text` as a formula: it starts with `=`, `+`, `-`, `@`, a tab or CR. */
export function isFormulaLike(text: string): boolean {
  return FORMULA_START.test(text) && !PLAIN_NUMBER.test(text);
}

/** One field as RFC 4180 writes it (quoted when it must be), guarded against formulas. */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const text = isFormulaLike(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * Text guarded as `csvCell` guards it, for a file that is read back: text that already starts with
 * apostrophes before formula-like text gets one more too, so `unguardFormula` gives back exactly `text`.
 */
export function guardFormula(text: string): string {
  return isFormulaLike(text.replace(/^'+/, '')) ? `'${text}` : text;
}

/** The text `guardFormula` was given, from what it wrote: the guarding apostrophe, if any, removed. */
export function unguardFormula(cell: string): string {
  return cell.startsWith("'") && isFormulaLike(cell.replace(/^'+/, '')) ? cell.slice(1) : cell;
}

/** One record, ended by CRLF as RFC 4180 has it. */
export function csvLine(values: readonly CsvValue[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}
