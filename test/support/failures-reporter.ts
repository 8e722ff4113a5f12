/**
 * The second reporter of `npm test` and `npm run test:postgres`: after the TAP stream, each test that
 * failed, with its file and the first lines of its error. The suite prints tens of thousands of TAP
 * lines and a CI log is often read from its end, where a failure's own lines are long gone.
 */
import path from 'node:path';
import type { TestEvent } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';

type Failure = Extract<TestEvent, { type: 'test:fail' }>['data'];

const errorLines = 12;
const root = path.resolve(import.meta.dirname, '../..');

function describe(failure: Failure): string {
  const file = failure.file?.startsWith('file:') === true ? fileURLToPath(failure.file) : failure.file;
  const where =
    file === undefined ? '(no file)' : `${path.relative(root, file)}:${String(failure.line ?? '?')}`;
  // The runner wraps what a test threw (failureType 'testCodeFailure', 'hookFailed'…) in an error of its own.
  const error = failure.details.error as Error & { cause?: unknown };
  const thrown = error.cause ?? error;
  // Node's own frames (the runner's, async_hooks') say nothing about the test.
  const lines = inspect(thrown, { depth: 3, breakLength: 120 })
    .split('\n')
    .filter((line) => !/^\s+at (.*\()?node:/.test(line));
  const shown = lines.slice(0, errorLines).map((line) => `#     ${line}`);
  if (lines.length > errorLines) shown.push(`#     … ${String(lines.length - errorLines)} more lines`);
  return [`# ✗ ${failure.name}`, `#   at ${where}`, ...shown].join('\n');
}

export default async function* failuresReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const failures: Failure[] = [];
  let cancelled = 0;
  for await (const event of source) {
    if (event.type !== 'test:fail' || event.data.todo !== undefined) continue;
    const error = event.data.details.error as Error & { failureType?: string };
    // A suite fails because a test inside it did: the test itself is listed.
    if (error.failureType === 'subtestsFailed') continue;
    // Tests cancelled with their suite (its hook failed, or the run was stopped): the cause is listed.
    if (error.failureType === 'cancelledByParent') cancelled += 1;
    else failures.push(event.data);
  }
  if (failures.length === 0 && cancelled === 0) return;
  const also = cancelled === 0 ? '' : `# and ${String(cancelled)} cancelled with their suite\n`;
  yield `# ${String(failures.length)} failed:\n${failures.map((f) => `${describe(f)}\n`).join('')}${also}`;
}
