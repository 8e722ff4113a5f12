/**
 * CSV as in RFC 4180, except that a field may not contain a line break: fields separated by commas,
 * optionally quoted ("" inside quotes is a quote), rows ending in LF or CRLF. Enough for the GeoNames
 * files, whose names and counties may contain commas; lines without quotes take a fast path.
 */
export function parseCsv(
  text: string,
  keepLine: (line: string, index: number) => boolean = () => true,
): string[][] {
  return [...eachCsvRow(text, keepLine)];
}

/** The rows of `parseCsv` one at a time, so that a large file's rows are never all held at once. */
function* eachCsvRow(text: string, keepLine: (line: string, index: number) => boolean): Generator<string[]> {
  for (let start = 0, index = 0; start < text.length; index++) {
    const newline = text.indexOf('\n', start);
    const end = newline < 0 ? text.length : newline;
    const line = text.slice(start, end > start && text.charAt(end - 1) === '\r' ? end - 1 : end);
    start = end + 1;
    if (line === '' || !keepLine(line, index)) continue;
    yield line.includes('"') ? parseQuotedLine(line) : line.split(',');
  }
}

function parseQuotedLine(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const char = line.charAt(i);
    if (quoted) {
      if (char !== '"') field += char;
      else if (line.charAt(i + 1) === '"') {
        field += '"';
        i++;
      } else quoted = false;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      fields.push(field);
      field = '';
    } else field += char;
  }
  fields.push(field);
  return fields;
}

/**
 * Rows as records keyed by the header row's names; throws if a required column is missing. `keepLine` may
 * skip data lines before they are split, which spares the garbage of fields that would be thrown away.
 */
export function parseCsvRecords<K extends string>(
  text: string,
  required: readonly K[],
  keepLine: (line: string) => boolean = () => true,
): Record<K, string>[] {
  return [...eachCsvRecord(text, required, keepLine)];
}

/** The records of `parseCsvRecords` one at a time. */
export function* eachCsvRecord<K extends string>(
  text: string,
  required: readonly K[],
  keepLine: (line: string) => boolean = () => true,
): Generator<Record<K, string>> {
  let positions: number[] | undefined;
  for (const row of eachCsvRow(text, (line, index) => index === 0 || keepLine(line))) {
    if (positions === undefined) {
      positions = required.map((name) => {
        const position = row.indexOf(name);
        if (position < 0) throw new Error(`CSV has no column ${name}`);
        return position;
      });
      continue;
    }
    const record = {} as Record<K, string>;
    for (const [k, name] of required.entries()) record[name] = row[positions[k] ?? -1] ?? '';
    yield record;
  }
}

/** Writes records as CSV with a header row, quoting fields that need it. */
export function toCsv<K extends string>(
  columns: readonly K[],
  rows: readonly Readonly<Record<K, string>>[],
): string {
  const field = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
  return (
    [columns.join(','), ...rows.map((row) => columns.map((column) => field(row[column])).join(','))].join(
      '\n',
    ) + '\n'
  );
}
