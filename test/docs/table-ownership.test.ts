import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

/**
 * Each table belongs to one module (the one whose `…Tables` interface, gathered in src/schema.ts,
 * declares it); another module reads or writes it only through functions the owner exports. The
 * finance reports and the data protection module are read models: they may read any table (a month's
 * bordereau, a person's history) but write none but their own.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const SOURCE = path.join(ROOT, 'src');
const READ_MODELS = new Set(['modules/reports', 'modules/data-protection']);

/** The area that owns a file: `modules/<name>`, `integrations/<name>`, `platform` or the file itself. */
function areaOf(file: string): string {
  const parts = path.relative(SOURCE, file).split(path.sep);
  if ((parts[0] === 'modules' || parts[0] === 'integrations') && parts.length > 2)
    return `${parts[0]}/${parts[1]}`;
  if (parts[0] === 'platform') return 'platform';
  return parts.join('/');
}

/** Table → owning area, from the `…Tables` interfaces src/schema.ts gathers into `Database`. */
function owners(): Map<string, string> {
  const schemaFile = path.join(SOURCE, 'schema.ts');
  const program = ts.createProgram([schemaFile], {
    noEmit: true,
    allowImportingTsExtensions: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const database = program
    .getSourceFile(schemaFile)!
    .statements.find(
      (statement): statement is ts.InterfaceDeclaration =>
        ts.isInterfaceDeclaration(statement) && statement.name.text === 'Database',
    )!;
  const owned = new Map<string, string>();
  for (const table of checker.getPropertiesOfType(checker.getTypeAtLocation(database))) {
    const declaration = table.declarations?.[0];
    assert.ok(declaration !== undefined, `${table.name} has a declaration`);
    owned.set(table.name, areaOf(declaration.getSourceFile().fileName));
  }
  return owned;
}

interface Access {
  file: string;
  line: number;
  table: string;
  writes: boolean;
}

const ACCESS =
  /\b(selectFrom|insertInto|updateTable|deleteFrom|mergeInto|innerJoin|leftJoin|rightJoin|fullJoin)\(\s*'([a-z_]+)/g;

/** Every query builder call that names a table, in the service's source (tests excepted). */
function accesses(): Access[] {
  const found: Access[] = [];
  const files = fs
    .readdirSync(SOURCE, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.startsWith('migrations'));
  for (const name of files) {
    const file = path.join(SOURCE, name);
    const text = fs.readFileSync(file, 'utf8');
    // A common table expression (`.with('matched', …)`) is named in the query, not a table.
    const cteNames = new Set([...text.matchAll(/\.with(?:Recursive)?\(\s*'([a-z_]+)'/g)].map((m) => m[1]));
    for (const match of text.matchAll(ACCESS)) {
      if (cteNames.has(match[2])) continue;
      const verb = match[1] ?? '';
      found.push({
        file,
        line: text.slice(0, match.index).split('\n').length,
        table: match[2] ?? '',
        writes: ['insertInto', 'updateTable', 'deleteFrom', 'mergeInto'].includes(verb),
      });
    }
  }
  return found;
}

test('a table is read and written only by the module that owns it, and read by the read models', () => {
  const owned = owners();
  const problems: string[] = [];
  for (const access of accesses()) {
    const owner = owned.get(access.table);
    const area = areaOf(access.file);
    const where = `${path.relative(ROOT, access.file)}:${access.line}`;
    if (owner === undefined) {
      problems.push(`${where}: ${access.table} is no module's table`);
      continue;
    }
    if (owner === area) continue;
    if (READ_MODELS.has(area) && !access.writes) continue;
    problems.push(
      `${where}: ${area} ${access.writes ? 'writes' : 'reads'} ${access.table}, which ${owner} owns`,
    );
  }
  assert.deepEqual(problems, []);
});
