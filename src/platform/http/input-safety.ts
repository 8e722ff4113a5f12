import type { FastifyInstance } from 'fastify';
import { AppError, type FieldError } from '../errors.ts';

/** Keys that reach an object's prototype when a parser or a merge assigns them. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** JSON-pointer escaping of one path segment (RFC 6901). */
const pointer = (segment: string): string => segment.replaceAll('~', '~0').replaceAll('/', '~1');

function textProblem(text: string): string | undefined {
  // NOTE: PostgreSQL stores no NUL in text or jsonb (it answered "invalid byte sequence" as a 500), and a
  // lone surrogate has no UTF-8 form: the driver would store U+FFFD in its place, silently.
  if (text.includes('\u0000')) return 'must not contain a NUL character (\\u0000)';
  if (!text.isWellFormed()) return 'must be well-formed Unicode (no lone surrogate)';
  return undefined;
}

const NUMBER_TEXT = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?\s*$/i;

/**
 * A query or path value that reads as a number too large for one (`1e309`): Ajv's coercion turns it into
 * Infinity and lets it through every bound, so it is refused here.
 */
function findInfiniteNumberText(part: unknown, root: string): FieldError | undefined {
  if (typeof part !== 'object' || part === null) return undefined;
  for (const [key, value] of Object.entries(part)) {
    for (const text of Array.isArray(value) ? (value as unknown[]) : [value])
      if (typeof text === 'string' && NUMBER_TEXT.test(text) && !Number.isFinite(Number(text)))
        return { path: `${root}/${pointer(key)}`, message: 'must be a finite number' };
  }
  return undefined;
}

/** Where a container sits in a request part: its parent and its key or index there. */
interface Place {
  readonly parent: Place | undefined;
  readonly segment: string | number;
}

/** The JSON pointer of `segment` inside the container at `place` (built only for a problem found). */
function pathOf(root: string, place: Place | undefined, segment?: string | number): string {
  const segments: Array<string | number> = segment === undefined ? [] : [segment];
  for (let at = place; at !== undefined; at = at.parent) segments.push(at.segment);
  return segments.reduceRight<string>(
    (path, s) => `${path}/${typeof s === 'number' ? String(s) : pointer(s)}`,
    root,
  );
}

/**
 * Every string and key of a parsed request part, checked once: the first problem found, as a field
 * error. Iterative, so a deeply nested body cannot exhaust the stack.
 */
export function findUnsafeInput(value: unknown, root: string): FieldError | undefined {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem === undefined ? undefined : { path: root, message: problem };
  }
  // NOTE: a binary body (a claim's photo) is bytes, not parsed text: walking it as an object made a
  // string key per byte, and a 9 MB photo ran the process out of heap before its route authenticated.
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return undefined;
  // NOTE: only containers go on the stack, and paths are built only for a problem: a batch of a
  // thousand positions is nine thousand numbers, which need no check and no path.
  const stack: Array<{ container: object; place: Place | undefined }> = [
    { container: value, place: undefined },
  ];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { container, place } = next;
    const visit = (child: unknown, segment: string | number): FieldError | undefined => {
      if (typeof child === 'string') {
        const problem = textProblem(child);
        if (problem !== undefined) return { path: pathOf(root, place, segment), message: problem };
      } else if (typeof child === 'object' && child !== null && !ArrayBuffer.isView(child)) {
        stack.push({ container: child, place: { parent: place, segment } });
      }
      return undefined;
    };
    if (Array.isArray(container)) {
      for (let i = 0; i < container.length; i++) {
        const found = visit(container[i], i);
        if (found !== undefined) return found;
      }
    } else {
      for (const key of Object.keys(container)) {
        if (FORBIDDEN_KEYS.has(key))
          return { path: pathOf(root, place, key), message: 'is a forbidden name' };
        const problem = textProblem(key);
        if (problem !== undefined)
          return { path: pathOf(root, place, key), message: `names a field that ${problem}` };
        const found = visit((container as Record<string, unknown>)[key], key);
        if (found !== undefined) return found;
      }
    }
  }
  return undefined;
}

/**
 * Rejects URLs longer than `maxUrlLength` (414), and, before any schema or handler sees them, strings that cannot be stored (NUL, lone
 * surrogates) and keys that could reach a prototype, in the body, query string and path parameters of
 * every route: 422 naming the field.
 */
export function installInputSafety(app: FastifyInstance, maxUrlLength: number): void {
  app.addHook('onRequest', async (request) => {
    if (request.url.length > maxUrlLength)
      throw new AppError(
        'URI_TOO_LONG',
        `The URL is ${String(request.url.length)} characters long; at most ${String(maxUrlLength)} are accepted`,
      );
  });
  app.addHook('preValidation', async (request) => {
    const found =
      findUnsafeInput(request.params, '/params') ??
      findUnsafeInput(request.query, '/querystring') ??
      findUnsafeInput(request.body, '/body') ??
      findInfiniteNumberText(request.query, '/querystring') ??
      findInfiniteNumberText(request.params, '/params');
    if (found !== undefined)
      throw new AppError('VALIDATION_FAILED', `The request is invalid: ${found.path} ${found.message}`, {
        errors: [found],
      });
  });
}
