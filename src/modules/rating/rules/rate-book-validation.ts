import { USAGE_RATE_MAX, USAGE_UNITS } from '../../policies/rules/index.ts';
import {
  APPLIES_TO,
  CONDITION_FIELDS,
  CONDITION_OPS,
  FACTOR_SOURCES,
  QUOTE_FIELD_PATHS,
  TEXT_SOURCES,
  UNDERWRITING_OUTCOMES,
  type FactorSource,
  type RateBookContent,
  type RateBookFees,
} from './rate-book.ts';

/*
 * Untrusted rate book JSON (an upload, an import) → RateBookContent, or every problem with the path of
 * its cell (`factors[2].rows[5].factor`), so a staff member can fix a whole file in one pass. Nothing
 * is coerced: a number sent as text or a decimal sent as a number is a problem, because the version
 * stored must be exactly the one approved.
 */

export interface ContentProblem {
  /** Where, in the JSON: `factors[2].rows[5].factor`; `` for the whole document. */
  readonly path: string;
  readonly message: string;
}

export type ContentValidation =
  | { readonly ok: true; readonly value: RateBookContent }
  | { readonly ok: false; readonly problems: readonly ContentProblem[] };

export const LIMITS = {
  factors: 100,
  rowsPerFactor: 10_000,
  /**
   * Rows of all factors together: what bounds a version's size, so that any version, however it was
   * written (a factor's CSV included), is one the JSON routes take back (their body limits follow).
   */
  rowsInAllFactors: 50_000,
  rules: 500,
  conditionDepth: 8,
  conditionItems: 200,
  listValues: 10_000,
  textLength: 500,
  /** £1,000,000 in pence: no fee or premium bound above it (a policy takes up to `MONEY_MAX`). */
  pence: 100_000_000,
  bandBound: 1_000_000_000,
  factorPlaces: 6,
  ratePlaces: 6,
  percentPlaces: 4,
} as const;

const FACTOR_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const DECIMAL = /^(-)?(0|[1-9]\d{0,11})(?:\.(\d+))?$/;
const CANONICAL_NUMBER = /^-?(0|[1-9]\d{0,11})(\.\d*[1-9])?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

type Problems = ContentProblem[];
type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const join = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);

/** Unknown keys and missing required keys of an object, each a problem; false when not an object. */
function shape(
  problems: Problems,
  value: unknown,
  path: string,
  required: readonly string[],
  optional: readonly string[] = [],
): value is Json {
  if (!isRecord(value)) {
    problems.push({ path, message: 'must be an object' });
    return false;
  }
  for (const key of Object.keys(value))
    if (!required.includes(key) && !optional.includes(key))
      problems.push({ path: join(path, key), message: 'is not a field of a rate book' });
  for (const key of required)
    if (value[key] === undefined) problems.push({ path: join(path, key), message: 'is required' });
  return true;
}

function pence(problems: Problems, value: unknown, path: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    problems.push({ path, message: 'must be a whole number of pence' });
    return false;
  }
  if (value < 0 || value > LIMITS.pence) {
    problems.push({ path, message: `must be from 0 to ${LIMITS.pence} pence` });
    return false;
  }
  return true;
}

interface DecimalRule {
  readonly places: number;
  /** Zero is refused (factors). */
  readonly positive?: boolean;
  /** Inclusive upper bound. */
  readonly max?: number;
  /** Exclusive upper bound. */
  readonly below?: number;
}

/** A decimal string (`"1.25"`) within its rule; the problem says exactly what is wrong. */
function decimal(problems: Problems, value: unknown, path: string, rule: DecimalRule): boolean {
  if (value === undefined) return false;
  const match = typeof value === 'string' ? DECIMAL.exec(value) : null;
  const problem = (message: string) => {
    problems.push({ path, message });
    return false;
  };
  if (match === null)
    return problem(`must be a decimal written as text, e.g. "1.25", not ${JSON.stringify(value)}`);
  if (match[1] !== undefined) return problem('must not be negative');
  if ((match[3]?.length ?? 0) > rule.places)
    return problem(`must have at most ${rule.places} decimal places`);
  const number = Number(value);
  if (rule.positive === true && number === 0) return problem('must be above 0');
  if (rule.max !== undefined && number > rule.max) return problem(`must be at most ${rule.max}`);
  if (rule.below !== undefined && number >= rule.below) return problem(`must be below ${rule.below}`);
  return true;
}

function text(problems: Problems, value: unknown, path: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'string' || value.trim() === '' || value.length > LIMITS.textLength) {
    problems.push({ path, message: `must be text of 1 to ${LIMITS.textLength} characters` });
    return false;
  }
  return true;
}

function oneOf<T extends string>(
  problems: Problems,
  value: unknown,
  path: string,
  allowed: readonly T[],
): value is T {
  if (value === undefined) return false;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return true;
  problems.push({ path, message: `must be one of ${allowed.join(', ')}, not ${JSON.stringify(value)}` });
  return false;
}

function list(problems: Problems, value: unknown, path: string, max: number, min = 0): value is unknown[] {
  if (value === undefined) return false;
  if (!Array.isArray(value)) {
    problems.push({ path, message: 'must be a list' });
    return false;
  }
  if (value.length < min || value.length > max) {
    problems.push({ path, message: `must hold ${min} to ${max} items, not ${value.length}` });
    return false;
  }
  return true;
}

const FACTOR_FIELD = (kind: 'bands' | 'keys') =>
  kind === 'bands' ? ['from', 'to', 'factor'] : ['key', 'factor'];

function bandBound(problems: Problems, value: unknown, path: string): value is number | null {
  if (value === null) return true;
  if (typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value) > LIMITS.bandBound) {
    problems.push({ path, message: 'must be a number (or null for no bound)' });
    return false;
  }
  return true;
}

/** Band rows: each well formed, `from < to`, ascending, each starting where the one before ends. */
function bandRows(problems: Problems, rows: unknown[], path: string): void {
  let previous: { to: number | null; index: number } | null = null;
  rows.forEach((row, index) => {
    const at = `${path}[${index}]`;
    if (!shape(problems, row, at, FACTOR_FIELD('bands'))) return;
    decimal(problems, row['factor'], `${at}.factor`, { places: LIMITS.factorPlaces, positive: true });
    const fromOk = row['from'] !== undefined && bandBound(problems, row['from'], `${at}.from`);
    const toOk = row['to'] !== undefined && bandBound(problems, row['to'], `${at}.to`);
    if (!fromOk || !toOk) {
      previous = null;
      return;
    }
    const from = row['from'] as number | null;
    const to = row['to'] as number | null;
    if (from !== null && to !== null && from >= to)
      problems.push({ path: `${at}.to`, message: `must be above from (${from})` });
    if (from === null && index > 0)
      problems.push({ path: `${at}.from`, message: 'only the first band may be unbounded below' });
    if (to === null && index < rows.length - 1)
      problems.push({ path: `${at}.to`, message: 'only the last band may be unbounded above' });
    const before: { to: number | null; index: number } | null = previous;
    if (before !== null && before.to !== null && from !== null && from !== before.to)
      problems.push({
        path: `${at}.from`,
        message:
          from > before.to
            ? `leaves a gap: the band before (rows[${before.index}]) ends at ${before.to}`
            : `overlaps the band before (rows[${before.index}]), which ends at ${before.to}`,
      });
    previous = { to, index };
  });
}

function keyRows(problems: Problems, rows: unknown[], path: string, source: FactorSource | null): void {
  const seen = new Map<string, number>();
  rows.forEach((row, index) => {
    const at = `${path}[${index}]`;
    if (!shape(problems, row, at, FACTOR_FIELD('keys'))) return;
    decimal(problems, row['factor'], `${at}.factor`, { places: LIMITS.factorPlaces, positive: true });
    const key = row['key'];
    if (!text(problems, key, `${at}.key`)) return;
    const keyText = key as string;
    if (source !== null && !TEXT_SOURCES.has(source) && !CANONICAL_NUMBER.test(keyText))
      problems.push({
        path: `${at}.key`,
        message: `must be a number as written canonically (e.g. 7, 12.5) for ${source}`,
      });
    const first = seen.get(keyText);
    if (first !== undefined)
      problems.push({ path: `${at}.key`, message: `repeats rows[${first}].key ${JSON.stringify(keyText)}` });
    else seen.set(keyText, index);
  });
}

function factor(problems: Problems, value: unknown, path: string, names: Map<string, number>, index: number) {
  const fields = ['name', 'source', 'kind', 'applies_to', 'rows'];
  if (!shape(problems, value, path, fields, ['default', 'customer_visible'])) return;
  if (text(problems, value['name'], `${path}.name`)) {
    const name = value['name'] as string;
    if (!FACTOR_NAME.test(name))
      problems.push({
        path: `${path}.name`,
        message: 'must be 1 to 64 of a-z, 0-9, _ and -, starting with a letter or digit',
      });
    const first = names.get(name);
    if (first !== undefined)
      problems.push({ path: `${path}.name`, message: `repeats factors[${first}].name` });
    else names.set(name, index);
  }
  const source = oneOf(problems, value['source'], `${path}.source`, FACTOR_SOURCES) ? value['source'] : null;
  oneOf(problems, value['applies_to'], `${path}.applies_to`, APPLIES_TO);
  if (value['default'] !== undefined)
    decimal(problems, value['default'], `${path}.default`, { places: LIMITS.factorPlaces, positive: true });
  if (value['customer_visible'] !== undefined && typeof value['customer_visible'] !== 'boolean')
    problems.push({ path: `${path}.customer_visible`, message: 'must be true or false' });
  if (!oneOf(problems, value['kind'], `${path}.kind`, ['bands', 'keys'] as const)) return;
  const kind = value['kind'];
  if (kind === 'bands' && source !== null && TEXT_SOURCES.has(source))
    problems.push({ path: `${path}.kind`, message: `${source} is text: it takes keys, not bands` });
  const rows = value['rows'];
  if (!list(problems, rows, `${path}.rows`, LIMITS.rowsPerFactor, 1)) return;
  if (kind === 'bands') bandRows(problems, rows, `${path}.rows`);
  else keyRows(problems, rows, `${path}.rows`, source);
}

function fees(problems: Problems, value: unknown, path: string): void {
  const names: (keyof RateBookFees)[] = [
    'admin_fee_pence',
    'adjustment_fee_pence',
    'cancellation_fee_pence',
    'deposit_fee_pence',
  ];
  if (value === undefined || !shape(problems, value, path, names)) return;
  for (const name of names) pence(problems, value[name], `${path}.${name}`);
}

function plans(problems: Problems, value: unknown, path: string): void {
  if (!list(problems, value, path, 2, 1)) return;
  const kinds = new Map<string, number>();
  value.forEach((plan, index) => {
    const at = `${path}[${index}]`;
    if (!isRecord(plan)) {
      problems.push({ path: at, message: 'must be an object' });
      return;
    }
    if (!oneOf(problems, plan['kind'], `${at}.kind`, ['single', 'monthly'] as const)) return;
    const kind = plan['kind'];
    const first = kinds.get(kind);
    if (first !== undefined) problems.push({ path: `${at}.kind`, message: `repeats ${path}[${first}].kind` });
    else kinds.set(kind, index);
    if (kind === 'single') {
      shape(problems, plan, at, ['kind']);
      return;
    }
    shape(problems, plan, at, ['kind', 'installments', 'loading_rate']);
    const count = plan['installments'];
    if (
      count !== undefined &&
      (typeof count !== 'number' || !Number.isInteger(count) || count < 2 || count > 12)
    )
      problems.push({ path: `${at}.installments`, message: 'must be a whole number from 2 to 12' });
    decimal(problems, plan['loading_rate'], `${at}.loading_rate`, { places: LIMITS.ratePlaces, below: 1 });
  });
}

const FIELDS: ReadonlySet<string> = new Set<string>([...CONDITION_FIELDS, ...QUOTE_FIELD_PATHS]);

function comparison(problems: Problems, value: Json, path: string): void {
  if (!shape(problems, value, path, ['field', 'op', 'value'])) return;
  const field = value['field'];
  if (field !== undefined && (typeof field !== 'string' || !FIELDS.has(field)))
    problems.push({
      path: `${path}.field`,
      message: `${JSON.stringify(field)} is neither a derived value nor a quote field`,
    });
  if (!oneOf(problems, value['op'], `${path}.op`, CONDITION_OPS)) return;
  const op = value['op'];
  const operand = value['value'];
  const scalar = (v: unknown) =>
    typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
  if (op === 'in' || op === 'not_in') {
    if (!list(problems, operand, `${path}.value`, LIMITS.listValues, 1)) return;
    operand.forEach((item, index) => {
      if (!scalar(item))
        problems.push({ path: `${path}.value[${index}]`, message: 'must be a number, text or true/false' });
    });
  } else if (operand !== undefined && !scalar(operand)) {
    problems.push({ path: `${path}.value`, message: 'must be a number, text or true/false' });
  } else if (['lt', 'lte', 'gt', 'gte'].includes(op)) {
    if (typeof operand !== 'number' && !(typeof operand === 'string' && DATE.test(operand)))
      problems.push({ path: `${path}.value`, message: `${op} compares with a number or a YYYY-MM-DD date` });
  }
}

function condition(problems: Problems, value: unknown, path: string, depth: number): void {
  if (!isRecord(value)) {
    problems.push({ path, message: 'must be an object: {all: […]}, {any: […]} or {field, op, value}' });
    return;
  }
  const group = 'all' in value ? 'all' : 'any' in value ? 'any' : null;
  if (group === null) {
    comparison(problems, value, path);
    return;
  }
  if (!shape(problems, value, path, [group])) return;
  if (depth >= LIMITS.conditionDepth) {
    problems.push({ path, message: `nests more than ${LIMITS.conditionDepth} deep` });
    return;
  }
  const items = value[group];
  if (!list(problems, items, `${path}.${group}`, LIMITS.conditionItems, 1)) return;
  items.forEach((item, index) => {
    condition(problems, item, `${path}.${group}[${index}]`, depth + 1);
  });
}

function rules(problems: Problems, value: unknown, path: string): void {
  if (!list(problems, value, path, LIMITS.rules)) return;
  value.forEach((rule, index) => {
    const at = `${path}[${index}]`;
    if (!shape(problems, rule, at, ['outcome', 'reason', 'when'])) return;
    oneOf(problems, rule['outcome'], `${at}.outcome`, UNDERWRITING_OUTCOMES);
    text(problems, rule['reason'], `${at}.reason`);
    if (rule['when'] !== undefined) condition(problems, rule['when'], `${at}.when`, 0);
  });
}

/**
 * The problems of one factor table's rows (an upload of its CSV), with paths `rows[3].factor`: the
 * same checks as in a whole rate book. Pure.
 */
export function factorRowProblems(
  kind: 'bands' | 'keys',
  source: FactorSource,
  rows: readonly unknown[],
): readonly ContentProblem[] {
  const problems: Problems = [];
  if (!list(problems, rows, 'rows', LIMITS.rowsPerFactor, 1)) return problems;
  if (kind === 'bands') bandRows(problems, rows, 'rows');
  else keyRows(problems, rows, 'rows', source);
  return problems;
}

const TOP_LEVEL = [
  'usage_unit',
  'base_fixed_premium_pence',
  'base_rate_per_unit',
  'factors',
  'min_fixed_premium_pence',
  'max_fixed_premium_pence',
  'fees',
  'ipt_rate',
  'commission_rate',
  'installment_plans',
  'underwriting_rules',
] as const;

/**
 * Checks untrusted JSON as a rate book version's content: `{ ok: true, value }` (the same object,
 * typed) or every problem, each with its cell's path. Pure.
 */
export function validateRateBookContent(content: unknown): ContentValidation {
  const problems: Problems = [];
  if (!shape(problems, content, '', TOP_LEVEL)) return { ok: false, problems };
  oneOf(problems, content['usage_unit'], 'usage_unit', USAGE_UNITS);
  pence(problems, content['base_fixed_premium_pence'], 'base_fixed_premium_pence');
  decimal(problems, content['base_rate_per_unit'], 'base_rate_per_unit', {
    places: LIMITS.ratePlaces,
    // The most a policy's `usage_rate` takes; factors and IPT may still price beyond it, which `rate` refuses.
    max: USAGE_RATE_MAX,
  });
  const factors = content['factors'];
  if (list(problems, factors, 'factors', LIMITS.factors)) {
    const names = new Map<string, number>();
    factors.forEach((item, index) => {
      factor(problems, item, `factors[${index}]`, names, index);
    });
    const rows = factors.reduce<number>(
      (sum, item) => sum + (isRecord(item) && Array.isArray(item['rows']) ? item['rows'].length : 0),
      0,
    );
    if (rows > LIMITS.rowsInAllFactors)
      problems.push({
        path: 'factors',
        message: `have ${rows} rows in all, more than ${LIMITS.rowsInAllFactors}`,
      });
  }
  const min = content['min_fixed_premium_pence'];
  const max = content['max_fixed_premium_pence'];
  const minOk = pence(problems, min, 'min_fixed_premium_pence');
  if (pence(problems, max, 'max_fixed_premium_pence') && minOk && (min as number) > (max as number))
    problems.push({
      path: 'min_fixed_premium_pence',
      message: `must not exceed max_fixed_premium_pence (${String(max)})`,
    });
  fees(problems, content['fees'], 'fees');
  decimal(problems, content['ipt_rate'], 'ipt_rate', { places: LIMITS.percentPlaces, max: 100 });
  decimal(problems, content['commission_rate'], 'commission_rate', {
    places: LIMITS.percentPlaces,
    max: 100,
  });
  plans(problems, content['installment_plans'], 'installment_plans');
  rules(problems, content['underwriting_rules'], 'underwriting_rules');
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, value: content as unknown as RateBookContent };
}
