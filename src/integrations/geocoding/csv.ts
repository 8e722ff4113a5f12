/**
 * CSV as in RFC 4180, except that a field may not contain a line break: fields separated by commas,
 * optionally quoted ("" inside quotes is a quote), rows ending in LF or CRLF. Enough for the GeoNames
 * files, whose names and counties may contain commas; lines without quotes take a fast path.
 */
export function parseCsv(
  text: string,
  keepLine: (line: string, index: number) => boolean = () => true,
): string[][] {
  const rows: string[][] = [];
  for (const [index, rawLine] of text.split('\n').entries()) {
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (line === '' || !keepLine(line, index)) continue;
    rows.push(line.includes('"') ? parseQuotedLine(line) : line.split(','));
  }
  return rows;
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
  const [header, ...rows] = parseCsv(text, (line, index) => index === 0 || keepLine(line));
  if (header === undefined) return [];
  const positions = required.map((name) => {
    const position = header.indexOf(name);
    if (position < 0) throw new Error(`CSV has no column ${name}`);
    return position;
  });
  return rows.map((row) => {
    const record = {} as Record<K, string>;
    required.forEach((name, k) => {
      record[name] = row[positions[k] ?? -1] ?? '';
    });
    return record;
  });
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
