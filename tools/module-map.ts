/**
 * Writes docs/modules.md: the graph of which feature module imports which, read from the imports in
 * src/ (not from anyone's memory of them), as a Mermaid diagram and a table.
 *
 *   npm run docs:modules            # rewrite docs/modules.md
 *   npm run docs:modules -- --check # exit 1 when the committed map differs from the code
 *
 * A solid arrow is an import that runs (the module's code calls the other's); a dotted arrow imports
 * types only (`import type`), which shapes the code but loads nothing. Tests are left out: they may
 * reach into any module.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import prettier from 'prettier';

const ROOT = path.resolve(import.meta.dirname, '..');
const SOURCE = path.join(ROOT, 'src');
export const MAP_FILE = path.join(ROOT, 'docs/modules.md');

/** One import or re-export statement's target and whether it loads code at run time. */
interface ImportSpecifier {
  specifier: string;
  typeOnly: boolean;
}

// `import … from '…'`, `export … from '…'`, `import '…'` and `import('…')`; a statement may span lines.
const STATIC_IMPORT =
  /^\s*(import|export)\s+(type\s+)?(\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?|[\w$]+(?:\s*,\s*(?:\{[^}]*\}|\*\s+as\s+[\w$]+))?)\s*from\s*['"]([^'"]+)['"]/gm;
const SIDE_EFFECT_IMPORT = /^\s*import\s+['"]([^'"]+)['"]/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The import specifiers of a TypeScript source, each marked type-only or not. */
export function importsOf(source: string): ImportSpecifier[] {
  const found: ImportSpecifier[] = [];
  for (const match of source.matchAll(STATIC_IMPORT)) {
    const clause = match[3] ?? '';
    // `import { type A, type B } from` loads nothing either; one value name makes it a run-time import.
    const names = /^\{([\s\S]*)\}$/.exec(clause.trim())?.[1];
    const allNamedTypes =
      names !== undefined &&
      names
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== '')
        .every((name) => name.startsWith('type '));
    found.push({ specifier: match[4] ?? '', typeOnly: match[2] !== undefined || allNamedTypes });
  }
  for (const match of source.matchAll(SIDE_EFFECT_IMPORT))
    found.push({ specifier: match[1] ?? '', typeOnly: false });
  for (const match of source.matchAll(DYNAMIC_IMPORT))
    found.push({ specifier: match[1] ?? '', typeOnly: false });
  return found;
}

/** The area a file of src/ belongs to: `modules/<name>`, `platform`, `integrations/<name>`, or null. */
function areaOf(file: string): string | null {
  const parts = path.relative(SOURCE, file).split(path.sep);
  if (parts[0] === 'modules' && parts.length > 2) return `modules/${parts[1] ?? ''}`;
  if (parts[0] === 'integrations' && parts.length > 2) return `integrations/${parts[1] ?? ''}`;
  if (parts[0] === 'platform') return 'platform';
  return null;
}

function sourceFiles(folder: string): string[] {
  return fs
    .readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    .map((name) => path.join(folder, name))
    .sort();
}

export interface ModuleGraph {
  modules: string[];
  /** `from → to`, with whether any of the imports behind it runs code. */
  edges: Map<string, { from: string; to: string; runtime: boolean }>;
  /** For each module: does it import platform or an integration. */
  uses: Map<string, Set<string>>;
}

/** Reads src/modules/* and returns who imports whom. */
export function readModuleGraph(): ModuleGraph {
  const modules = fs
    .readdirSync(path.join(SOURCE, 'modules'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  const edges: ModuleGraph['edges'] = new Map();
  const uses: ModuleGraph['uses'] = new Map(modules.map((name) => [name, new Set<string>()]));
  for (const module of modules) {
    for (const file of sourceFiles(path.join(SOURCE, 'modules', module))) {
      for (const { specifier, typeOnly } of importsOf(fs.readFileSync(file, 'utf8'))) {
        if (!specifier.startsWith('.')) continue;
        const target = areaOf(path.resolve(path.dirname(file), specifier));
        if (target === null || target === `modules/${module}`) continue;
        if (!target.startsWith('modules/')) {
          uses.get(module)?.add(target);
          continue;
        }
        const to = target.slice('modules/'.length);
        const key = `${module}→${to}`;
        const edge = edges.get(key) ?? { from: module, to, runtime: false };
        edge.runtime ||= !typeOnly;
        edges.set(key, edge);
      }
    }
  }
  return { modules, edges, uses };
}

/** Mermaid ids may not contain hyphens. */
const nodeId = (module: string): string => module.replaceAll('-', '_');

/** The map as Markdown (formatted as the repository's Prettier formats it): the diagram, then a table. */
export async function renderModuleMap(graph: ModuleGraph): Promise<string> {
  const sorted = [...graph.edges.values()].sort(
    (a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to),
  );
  const lines = [
    '# Module map',
    '',
    'Generated from the imports in `src/modules` by `npm run docs:modules` (tools/module-map.ts); a test fails',
    'when this file and the code differ. A solid arrow: the module calls into the other at run time, through',
    "that module's `index.ts`. A dotted arrow: it imports types only.",
    '',
    '```mermaid',
    'flowchart LR',
    ...graph.modules.map((module) => `  ${nodeId(module)}[${module}]`),
    ...sorted.map((edge) => `  ${nodeId(edge.from)} ${edge.runtime ? '-->' : '-.->'} ${nodeId(edge.to)}`),
    '```',
    '',
    '| module | calls | imports types of | uses |',
    '| --- | --- | --- | --- |',
    ...graph.modules.map((module) => {
      const out = sorted.filter((edge) => edge.from === module);
      const list = (runtime: boolean): string =>
        out
          .filter((edge) => edge.runtime === runtime)
          .map((edge) => edge.to)
          .join(', ') || '–';
      const uses = [...(graph.uses.get(module) ?? [])].sort().join(', ') || '–';
      return `| ${module} | ${list(true)} | ${list(false)} | ${uses} |`;
    }),
    '',
  ];
  const options = (await prettier.resolveConfig(MAP_FILE)) ?? {};
  return prettier.format(lines.join('\n'), { ...options, parser: 'markdown' });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
  const map = await renderModuleMap(readModuleGraph());
  if (values.check) {
    const committed = fs.existsSync(MAP_FILE) ? fs.readFileSync(MAP_FILE, 'utf8') : '';
    if (committed !== map) {
      console.error('docs/modules.md is out of date: npm run docs:modules');
      process.exit(1);
    }
  } else {
    fs.writeFileSync(MAP_FILE, map);
    console.log(`wrote ${path.relative(ROOT, MAP_FILE)}`);
  }
}

// Not awaited: tests import this module, and test/support/shard.ts loads them with `require`, which
// refuses a top-level await. A failure still ends the process (an unhandled rejection).
if (import.meta.main) void main();
