/**
 * Stripe's request encoding: `application/x-www-form-urlencoded` with bracket keys
 * (`metadata[policy]=x`, `invoice_settings[default_payment_method]=pm_1`, `allowed_payment_method_types[0]=card`).
 */

export type FormValue = string | FormObject | FormValue[];
export interface FormObject {
  [key: string]: FormValue;
}

/** A form body as the sandbox's parser hands it over: the text as sent (for idempotency) and its parameters. */
export interface FormBody {
  readonly raw: string;
  readonly params: FormObject;
}

/** A request the sandbox cannot read: answered as Stripe's 400 invalid_request_error. */
export class FormError extends Error {
  readonly param: string | undefined;
  readonly code: string;
  constructor(message: string, param?: string, code = 'parameter_invalid') {
    super(message);
    this.name = 'FormError';
    this.param = param;
    this.code = code;
  }
}

const KEY = /^([^[\]]+)((?:\[[^[\]]*\])*)$/;

/** Names that would reach an object's prototype if a parser ever assigned them: refused outright. */
const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype']);

function segmentsOf(key: string): string[] {
  const match = KEY.exec(key);
  if (match === null) throw new FormError(`Invalid parameter name: ${key}`, key);
  const [, head = '', rest = ''] = match;
  const tail = [...rest.matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] ?? '');
  const segments = [head, ...tail];
  if (segments.some((segment) => FORBIDDEN_SEGMENTS.has(segment)))
    throw new FormError(`Invalid parameter name: ${key}`, head);
  return segments;
}

const isObject = (value: FormValue | undefined): value is FormObject =>
  typeof value === 'object' && !Array.isArray(value);

/** Objects whose keys are exactly 0..n-1 (how the SDK sends arrays) become arrays. */
function normalise(value: FormValue): FormValue {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(normalise);
  const keys = Object.keys(value);
  const entries = keys.map((k) => [k, normalise(value[k] ?? '')] as const);
  if (keys.length > 0 && keys.every((k, i) => k === String(i))) return entries.map(([, v]) => v);
  return Object.fromEntries(entries);
}

/** Parses a form body or query string into nested objects; values stay strings. */
export function parseForm(text: string): FormObject {
  // Null-prototype objects throughout: even a name that slipped past the check above stays an own key.
  const root: FormObject = Object.create(null) as FormObject;
  for (const [key, value] of new URLSearchParams(text)) {
    const path = segmentsOf(key);
    // Stripe refuses NUL too; PostgreSQL could not store it.
    if (key.includes('\u0000') || value.includes('\u0000'))
      throw new FormError(`Invalid string: ${key} contains a NUL character`, path[0]);
    let node: FormObject | FormValue[] = root;
    for (let i = 0; i < path.length; i++) {
      const segment = path[i] ?? '';
      const last = i === path.length - 1;
      if (Array.isArray(node)) {
        // `expand[]=a&expand[]=b`: an empty segment appends.
        if (segment !== '') throw new FormError(`Invalid array parameter: ${key}`, path[0]);
        if (!last) throw new FormError(`Invalid array parameter: ${key}`, path[0]);
        node.push(value);
        break;
      }
      if (last) {
        if (segment === '') throw new FormError(`Invalid parameter name: ${key}`, path[0]);
        if (isObject(node[segment]) || Array.isArray(node[segment])) {
          throw new FormError(`Conflicting values for parameter: ${key}`, path[0]);
        }
        node[segment] = value;
        break;
      }
      const next: FormValue | undefined = node[segment];
      if (next === undefined) {
        const created: FormObject | FormValue[] =
          path[i + 1] === '' ? [] : (Object.create(null) as FormObject);
        node[segment] = created;
        node = created;
      } else if (typeof next === 'string') {
        throw new FormError(`Conflicting values for parameter: ${key}`, path[0]);
      } else {
        node = next;
      }
    }
  }
  const normalised = normalise(root);
  return typeof normalised === 'object' && !Array.isArray(normalised) ? normalised : {};
}

/** Typed reads of form parameters, failing the way Stripe does (400, naming the parameter). */
export function readParams(params: FormObject, allowed: readonly string[]) {
  for (const name of Object.keys(params)) {
    if (!allowed.includes(name))
      throw new FormError(`Received unknown parameter: ${name}`, name, 'parameter_unknown');
  }
  const string = (name: string): string | undefined => {
    const value = params[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw new FormError(`Invalid string: ${name} must be a string`, name);
    return value;
  };
  const requiredString = (name: string): string => {
    const value = string(name);
    if (value === undefined || value === '')
      throw new FormError(`Missing required param: ${name}.`, name, 'parameter_missing');
    return value;
  };
  const integer = (name: string): number | undefined => {
    const value = string(name);
    if (value === undefined) return undefined;
    if (!/^-?\d{1,15}$/.test(value))
      throw new FormError(`Invalid integer: ${value}`, name, 'parameter_invalid_integer');
    return Number(value);
  };
  const boolean = (name: string): boolean | undefined => {
    const value = string(name);
    if (value === undefined) return undefined;
    if (value !== 'true' && value !== 'false') throw new FormError(`Invalid boolean: ${value}`, name);
    return value === 'true';
  };
  const object = (name: string): FormObject | undefined => {
    const value = params[name];
    if (value === undefined || value === '') return undefined;
    if (!isObject(value)) throw new FormError(`Invalid object: ${name} must be a hash`, name);
    return value;
  };
  const stringArray = (name: string): string[] | undefined => {
    const value = params[name];
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
      throw new FormError(`Invalid array: ${name} must be an array of strings`, name);
    }
    return value;
  };
  /** Metadata: ≤ 50 keys of ≤ 40 characters, values ≤ 500 characters; an empty value unsets a key. */
  const metadata = (): Record<string, string> | undefined => {
    const value = object('metadata');
    if (value === undefined) return params['metadata'] === '' ? {} : undefined;
    const out: Record<string, string> = {};
    for (const [key, v] of Object.entries(value)) {
      if (typeof v !== 'string')
        throw new FormError(`Invalid metadata[${key}]: values must be strings`, `metadata[${key}]`);
      if (key.length > 40)
        throw new FormError(`Metadata keys can have up to 40 characters (${key}).`, `metadata[${key}]`);
      if (v.length > 500)
        throw new FormError(`Metadata values can have up to 500 characters (${key}).`, `metadata[${key}]`);
      out[key] = v;
    }
    if (Object.keys(out).length > 50) throw new FormError('Metadata can have up to 50 keys.', 'metadata');
    return out;
  };
  return { string, requiredString, integer, boolean, object, stringArray, metadata };
}

/** Merges a metadata update into existing metadata: empty values remove keys, as on Stripe. */
export function mergeMetadata(
  current: Readonly<Record<string, string>>,
  update: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const merged = { ...current, ...update };
  return Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== ''));
}
