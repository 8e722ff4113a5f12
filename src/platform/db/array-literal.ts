/**
 * A column of rows as a PostgreSQL array literal: one text parameter, read by `$1::float8[]`,
 * `$1::uuid[]` and the like, so a batch through `unnest` binds the same parameters however many rows.
 * Rather than a JS array, which pg turns into the same literal one element at a time, each through
 * `toString`, two regular expressions and quotes, numbers too: 31 % of the MQTT worker's CPU in a
 * profile of a message of 1,000 positions. Numbers and booleans are written as `String` writes them,
 * strings quoted with any backslash or double quote escaped, null and undefined as NULL. The rows as
 * one JSON text (platform/db/json-rows.ts) cost PostgreSQL more to read than these arrays.
 */
export function arrayLiteral<T>(
  rows: readonly T[],
  value: (row: T) => string | number | boolean | null | undefined,
): string {
  let literal = '{';
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) literal += ',';
    const v = value(rows[i] as T);
    if (v === null || v === undefined) literal += 'NULL';
    else if (typeof v === 'string') literal += `"${NEEDS_ESCAPE.test(v) ? v.replace(ESCAPED, '\\$&') : v}"`;
    else literal += String(v);
  }
  return `${literal}}`;
}

const NEEDS_ESCAPE = /["\\]/;
const ESCAPED = /["\\]/g;
