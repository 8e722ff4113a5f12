/**
 * Splits a SQL script (as pg_dump writes one) into its statements, so that each can be sent on its own:
 * PGlite, like any extended-protocol query, takes one statement at a time. A `;` ends a statement only
 * outside a quoted string ('…', or E'…' with backslash escapes), a quoted identifier ("…"), a dollar-quoted body ($tag$…$tag$)
 * and a comment (-- to the end of the line, or a block comment); comments are dropped and statements
 * come back trimmed, without their `;`.
 */
export function splitSqlStatements(script: string): string[] {
  const statements: string[] = [];
  let current = '';
  let index = 0;
  const flush = (): void => {
    const statement = current.trim();
    if (statement !== '') statements.push(statement);
    current = '';
  };
  while (index < script.length) {
    const char = script.charAt(index);
    const next = script[index + 1];
    if (char === '-' && next === '-') {
      const end = script.indexOf('\n', index);
      index = end === -1 ? script.length : end + 1;
      current += '\n';
    } else if (char === '/' && next === '*') {
      const end = script.indexOf('*/', index + 2);
      if (end === -1) throw new Error('unterminated block comment in SQL script');
      index = end + 2;
      current += ' ';
    } else if (char === "'" || char === '"') {
      const escapes =
        char === "'" && /(^|[^A-Za-z0-9_$])[Ee]$/.test(script.slice(Math.max(0, index - 2), index));
      const end = closingQuote(script, index, char, escapes);
      current += script.slice(index, end);
      index = end;
    } else if (char === '$') {
      const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(script.slice(index, index + 64))?.[0];
      if (tag === undefined) {
        current += char;
        index += 1;
      } else {
        const end = script.indexOf(tag, index + tag.length);
        if (end === -1) throw new Error(`unterminated ${tag} body in SQL script`);
        current += script.slice(index, end + tag.length);
        index = end + tag.length;
      }
    } else if (char === ';') {
      flush();
      index += 1;
    } else {
      current += char;
      index += 1;
    }
  }
  flush();
  return statements;
}

/**
 * The index just past the quote that closes the one at `start`: a doubled quote is part of the text, and
 * so is a backslash-escaped one in an E'…' string (`escapes`).
 */
function closingQuote(script: string, start: number, quote: string, escapes: boolean): number {
  let index = start + 1;
  while (index < script.length) {
    const char = script.charAt(index);
    if (escapes && char === '\\') index += 2;
    else if (char !== quote) index += 1;
    else if (script[index + 1] === quote) index += 2;
    else return index + 1;
  }
  throw new Error(`unterminated ${quote} in SQL script`);
}
