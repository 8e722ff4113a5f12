/**
 * What a statement's span is called: its operation and the table (or function) it works on, read from
 * Kysely's query tree or, for raw SQL, from the statement's text. Never its parameters, and never the
 * text itself: a raw statement may inline a literal.
 */
import { SpanKind, inSpan, inTrace } from '../tracing.ts';

/** A statement as Kysely compiles it: its text, and the tree it was built from (none for raw SQL). */
export interface StatementLike {
  readonly sql: string;
  readonly query?: unknown;
}

export interface StatementName {
  /** `SELECT`, `INSERT`, `UPDATE`, `DELETE`, `MERGE`, `BEGIN`, … */
  readonly operation: string;
  /** The table written or read first (`policies`, `pgboss.job`), if one is named. */
  readonly table?: string;
  /** A function a bare `select f(…)` calls (`store_journey`). */
  readonly procedure?: string;
}

interface NodeLike {
  readonly kind: string;
  readonly [key: string]: unknown;
}

const isNode = (value: unknown): value is NodeLike =>
  typeof value === 'object' && value !== null && typeof (value as { kind?: unknown }).kind === 'string';

/** `schema.table` of a TableNode (through an alias), or undefined for a subquery or a function. */
function tableOf(node: unknown): string | undefined {
  if (!isNode(node)) return undefined;
  if (node.kind === 'AliasNode') return tableOf(node['node']);
  if (node.kind !== 'TableNode') return undefined;
  const table = node['table'] as { schema?: { name: string }; identifier: { name: string } };
  return table.schema === undefined ? table.identifier.name : `${table.schema.name}.${table.identifier.name}`;
}

const firstFrom = (from: unknown): string | undefined =>
  isNode(from) ? tableOf((from['froms'] as unknown[] | undefined)?.[0]) : undefined;

const OPERATIONS: Readonly<Record<string, [string, (node: NodeLike) => string | undefined]>> = {
  SelectQueryNode: ['SELECT', (node) => firstFrom(node['from'])],
  InsertQueryNode: ['INSERT', (node) => tableOf(node['into'])],
  UpdateQueryNode: ['UPDATE', (node) => tableOf(node['table'])],
  DeleteQueryNode: ['DELETE', (node) => firstFrom(node['from'])],
  MergeQueryNode: ['MERGE', (node) => tableOf(node['into'])],
};

const IDENTIFIER = String.raw`"?([A-Za-z_][\w$]*)"?(?:\."?([A-Za-z_][\w$]*)"?)?`;
const WRITE = new RegExp(
  // `for update of t` and `for no key update` lock rows of a select: not writes.
  String.raw`(?<!\bfor\s+(?:no\s+key\s+)?)\b(insert\s+into|update|delete\s+from|merge\s+into)\s+(?:only\s+)?${IDENTIFIER}`,
  'i',
);
// A name followed by `(` is a set-returning function (`from json_to_recordset(…)`), not a table.
const FROM = new RegExp(String.raw`\bfrom\s+(?:only\s+)?${IDENTIFIER}\s*(\()?`, 'i');
const CALL = /^\s*select\s+"?([A-Za-z_][\w$]*)"?\s*\(/i;

const joined = (first: string | undefined, second: string | undefined): string | undefined =>
  first === undefined ? undefined : second === undefined ? first : `${first}.${second}`;

/** The name of a raw statement, from its text: the first word, and the table it writes or reads. */
export function nameSqlText(text: string): StatementName {
  const bare = text.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, ' ');
  const first = (/^[\s(]*([A-Za-z]+)/.exec(bare)?.[1] ?? 'SQL').toUpperCase();
  if (
    first !== 'SELECT' &&
    first !== 'WITH' &&
    first !== 'INSERT' &&
    first !== 'UPDATE' &&
    first !== 'DELETE'
  )
    return { operation: first };
  const write = WRITE.exec(bare);
  if (write !== null) {
    const operation = (write[1] ?? '').split(/\s+/)[0]?.toUpperCase() ?? first;
    const table = joined(write[2], write[3]);
    return table === undefined ? { operation } : { operation, table };
  }
  const from = FROM.exec(bare);
  const source = joined(from?.[1], from?.[2]);
  if (source !== undefined)
    return from?.[3] === undefined
      ? { operation: 'SELECT', table: source }
      : { operation: 'SELECT', procedure: source };
  const call = CALL.exec(bare)?.[1];
  return call === undefined ? { operation: 'SELECT' } : { operation: 'SELECT', procedure: call };
}

/** The name of a compiled statement: from Kysely's tree when it built one, else from the text. */
export function nameStatement(query: StatementLike): StatementName {
  const node = query.query;
  const known = isNode(node) ? OPERATIONS[node.kind] : undefined;
  if (known === undefined) return nameSqlText(query.sql);
  const [operation, find] = known;
  const table = find(node as NodeLike);
  return table === undefined ? { operation } : { operation, table };
}

/** The span name (`SELECT policies`) and the database semantic conventions' attributes. */
export function statementSpan(name: StatementName) {
  const target = name.table ?? name.procedure;
  return {
    name: target === undefined ? name.operation : `${name.operation} ${target}`,
    attributes: {
      'db.system.name': 'postgresql',
      'db.operation.name': name.operation,
      ...(name.table === undefined ? {} : { 'db.collection.name': name.table }),
      ...(name.procedure === undefined ? {} : { 'db.stored_procedure.name': name.procedure }),
      'db.query.summary': target === undefined ? name.operation : `${name.operation} ${target}`,
    },
  };
}

/**
 * Runs a statement inside a CLIENT span named for it, when it belongs to a trace (a request's, a
 * job's); directly otherwise, naming nothing.
 */
export function inStatementSpan<T>(query: StatementLike, work: () => Promise<T>): Promise<T> {
  if (!inTrace()) return work();
  const { name, attributes } = statementSpan(nameStatement(query));
  return inSpan(name, { kind: SpanKind.CLIENT, attributes }, work);
}
