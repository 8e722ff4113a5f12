import { randomId } from './objects.ts';

/** A Stripe object as stored and served by the sandbox: JSON with an `id` and an `object` type. */
export interface SandboxObject {
  readonly id: string;
  readonly object: string;
  readonly [field: string]: unknown;
}

export interface StoredResponse {
  readonly status: number;
  readonly body: unknown;
}

/** What the sandbox remembers about an `Idempotency-Key` (per account, as on Stripe). */
export interface IdempotencyRecord {
  readonly account: string;
  readonly key: string;
  /** Hash of method, path and parameters: the same key with other parameters is refused. */
  readonly requestHash: string;
  /** Undefined while the first request with this key is still running. */
  readonly response: StoredResponse | undefined;
  readonly createdAt: Date;
}

/** Partial JSON that an object must contain (PostgreSQL's jsonb `@>`): `{ status: 'succeeded', metadata: { k: 'v' } }`. */
export type ObjectMatch = Readonly<Record<string, unknown>>;

/**
 * Storage for the sandbox. Implementations need no transactions: the sandbox serialises
 * read-modify-write per object in process (one API process serves the sandbox).
 */
export interface SandboxStore {
  get(id: string): Promise<SandboxObject | undefined>;
  /** Inserts or replaces the object with this id. */
  put(object: SandboxObject): Promise<void>;
  /** Objects of one `object` type containing `match`, newest first (by `created`, then id). */
  find(type: string, match?: ObjectMatch, limit?: number): Promise<SandboxObject[]>;
  count(type: string, match?: ObjectMatch): Promise<number>;
  /**
   * Records an in-progress key unless the account already has one; returns the existing record
   * (in progress or complete) when there is one, `undefined` when this call reserved the key.
   */
  reserveIdempotencyKey(record: Omit<IdempotencyRecord, 'response'>): Promise<IdempotencyRecord | undefined>;
  completeIdempotencyKey(account: string, key: string, response: StoredResponse): Promise<void>;
  /** Forgets a key, so that a retry runs again (used when no endpoint began executing). */
  releaseIdempotencyKey(account: string, key: string): Promise<void>;
  /**
   * Whether the sandbox issued this secret key (`sk_test_…`): as on Stripe, a key that names no account
   * is refused (401 `invalid_api_key`) instead of opening an empty account of its own.
   */
  isIssuedKey(secretKey: string): Promise<boolean>;
}

/** jsonb `@>` semantics on plain JSON: objects match by subset, arrays by containment, scalars by equality. */
export function jsonContains(value: unknown, match: unknown): boolean {
  if (match === null || typeof match !== 'object') return value === match;
  if (Array.isArray(match)) {
    return (
      Array.isArray(value) && match.every((m: unknown) => value.some((v: unknown) => jsonContains(v, m)))
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  return Object.entries(match).every(([k, m]) => k in record && jsonContains(record[k], m));
}

const createdOf = (o: SandboxObject): number => (typeof o['created'] === 'number' ? o['created'] : 0);

export function newestFirst(a: SandboxObject, b: SandboxObject): number {
  return createdOf(b) - createdOf(a) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/** A store that issues its own secret keys (the in-memory one). */
export interface MemorySandboxStore extends SandboxStore {
  /** A new account: a random `sk_test_…` key that the sandbox accepts from now on. */
  issueSecretKey(): string;
}

/**
 * The in-memory store: for tests, benchmarks and throwaway sandboxes. Values are copied in and out.
 * Its accounts are `secretKeys` and those it issues (`issueSecretKey`).
 */
export function createMemorySandboxStore(
  options: { secretKeys?: Iterable<string> } = {},
): MemorySandboxStore {
  const issued = new Set(options.secretKeys);
  const objects = new Map<string, SandboxObject>();
  const byType = new Map<string, Set<string>>();
  const keys = new Map<string, IdempotencyRecord>();
  const keyOf = (account: string, key: string): string => `${account}\u0000${key}`;

  const ofType = (type: string, match: ObjectMatch | undefined): SandboxObject[] => {
    const out: SandboxObject[] = [];
    for (const id of byType.get(type) ?? []) {
      const object = objects.get(id);
      if (object !== undefined && (match === undefined || jsonContains(object, match))) out.push(object);
    }
    return out;
  };

  return {
    get: async (id) => {
      const found = objects.get(id);
      return found === undefined ? undefined : structuredClone(found);
    },
    put: async (object) => {
      const previous = objects.get(object.id);
      if (previous !== undefined && previous.object !== object.object)
        byType.get(previous.object)?.delete(object.id);
      objects.set(object.id, structuredClone(object));
      let ids = byType.get(object.object);
      if (ids === undefined) {
        ids = new Set();
        byType.set(object.object, ids);
      }
      ids.add(object.id);
    },
    find: async (type, match, limit = 100) =>
      ofType(type, match)
        .sort(newestFirst)
        .slice(0, limit)
        .map((o) => structuredClone(o)),
    count: async (type, match) => ofType(type, match).length,
    reserveIdempotencyKey: async (record) => {
      const existing = keys.get(keyOf(record.account, record.key));
      if (existing !== undefined) return structuredClone(existing);
      keys.set(keyOf(record.account, record.key), { ...record, response: undefined });
      return undefined;
    },
    completeIdempotencyKey: async (account, key, response) => {
      const existing = keys.get(keyOf(account, key));
      if (existing !== undefined)
        keys.set(keyOf(account, key), { ...existing, response: structuredClone(response) });
    },
    releaseIdempotencyKey: async (account, key) => {
      keys.delete(keyOf(account, key));
    },
    isIssuedKey: async (secretKey) => issued.has(secretKey),
    issueSecretKey: () => {
      const secretKey = `sk_test_${randomId(32)}`;
      issued.add(secretKey);
      return secretKey;
    },
  };
}
