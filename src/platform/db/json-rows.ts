/**
 * Rows as one JSON text parameter, read by `json_to_recordset($1::json) as t(column type, …)`: a
 * fixed number of parameters however many rows. NOTE: rather than one array a column, because pg turns
 * each array element into text one by one (a Date through its local-time formatter, every string
 * through two regular expressions), which cost a billing run more of this process's CPU than the rest
 * of a chunk's work; JSON.stringify is one native call, and PostgreSQL parses JSON as fast as arrays.
 * A Date is best sent as its milliseconds (`to_timestamp(ms / 1000)` in SQL): its `toJSON` is half of
 * the cost of stringifying a statement's row.
 */
export function jsonRows(rows: readonly object[]): string {
  return JSON.stringify(rows);
}
