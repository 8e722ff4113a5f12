/*
 * How many versions the bordereau reads a query. A batch's rows (as pg returns them) and the text made
 * of them are what the report holds at once, so a batch is sized by the text it makes rather than by a
 * fixed count: a month of wide rows (JSON, long names) is read fewer versions a query, a month of narrow
 * ones up to the cap, where a round trip is already cheap per row.
 */

/** The most versions read a query, and the first batch's size (no width seen yet). */
export const BORDEREAU_BATCH_ROWS = 2_000;
/** The fewest versions read a query, however wide the rows: below it, round trips dominate. */
export const BORDEREAU_MIN_BATCH_ROWS = 200;
/** The report text (UTF-16 code units) a batch is sized to make: about 1 MiB. */
export const BORDEREAU_BATCH_TEXT_CHARACTERS = 1_048_576;

/** Versions the next query reads, for rows as wide on average as those written so far. */
export function bordereauBatchRows(charactersWritten: number, rowsWritten: number): number {
  if (rowsWritten <= 0 || charactersWritten <= 0) return BORDEREAU_BATCH_ROWS;
  const rows = Math.floor(BORDEREAU_BATCH_TEXT_CHARACTERS / (charactersWritten / rowsWritten));
  return Math.min(BORDEREAU_BATCH_ROWS, Math.max(BORDEREAU_MIN_BATCH_ROWS, rows));
}
