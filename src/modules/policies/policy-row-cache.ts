import type { ChangeFeed } from '../../platform/db/change-feed.ts';
import type { Tenant } from '../companies/index.ts';
import type { PolicyRecord } from './policy-repository.ts';

/** Migration 0010's trigger notifies here with the owners of changed policies (or `*`). */
export const POLICY_CHANGES_CHANNEL = 'milepost_policies';
/**
 * How long a policyholder's reads skip the cache after this process wrote one of their policies: the
 * writing transaction's commit and its notification come within milliseconds of the write.
 */
export const OWN_WRITE_SHADOW_MS = 1_000;
/** A safety net only: entries are dropped by notifications long before this. */
const ENTRY_TTL_MS = 60_000;
const MAX_ENTRIES = 20_000;
/** Policy views kept per process (oldest evicted first); a few MB at most. */
const MAX_VIEWS = 2_000;

// NOTE: process-wide on purpose. A notification reaches this process a moment after the commit, so a
// request that follows a write here could still find the old row; until then the policyholder's reads
// go to the database. Repositories call notePolicyWrites for every row they insert or update.
const ownWritesUntil = new Map<string, number>();

/** The owners of policy rows this process is writing: their reads go to the database for a moment. */
export function notePolicyWrites(userIds: Iterable<string>): void {
  const now = Date.now();
  const until = now + OWN_WRITE_SHADOW_MS;
  for (const userId of userIds) ownWritesUntil.set(userId, until);
  if (ownWritesUntil.size > MAX_ENTRIES)
    for (const [userId, at] of ownWritesUntil) if (at <= now) ownWritesUntil.delete(userId);
}

const writtenJustNow = (userId: string, now: number): boolean => (ownWritesUntil.get(userId) ?? 0) > now;

interface Entry<T> {
  readonly value: T;
  readonly userId: string;
  readonly at: number;
}

interface ViewEntry<V> extends Entry<V> {
  /** The policy row the view was built from, as a string: a view of any other row state is not it. */
  readonly row: string;
}

/** Where a read started: what it finds in memory must be as new as the writes answered before it. */
export interface PolicyRead {
  readonly generation: number;
  /** performance.now() at the start. */
  readonly startedAtMs: number;
}

const usable = <T>(entry: Entry<T> | undefined, now: number): entry is Entry<T> =>
  entry !== undefined && now - entry.at < ENTRY_TTL_MS && !writtenJustNow(entry.userId, now);
const bounded = <V>(map: Map<string, V>) => {
  if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value as string);
};
const inTenant = (tenant: Tenant, row: PolicyRecord) =>
  row.companyId === tenant.companyId && row.environment === tenant.environment;

/** Keys of a map grouped by the policyholder their entries belong to, so a notification finds them. */
function keysByOwner() {
  const keysOf = new Map<string, Set<string>>();
  return {
    add(userId: string, key: string): void {
      let keys = keysOf.get(userId);
      if (keys === undefined) keysOf.set(userId, (keys = new Set()));
      keys.add(key);
    },
    remove(userId: string, key: string): void {
      const keys = keysOf.get(userId);
      keys?.delete(key);
      if (keys?.size === 0) keysOf.delete(userId);
    },
    /** Forgets the owner's keys and returns them. */
    take(userId: string): Iterable<string> {
      const keys = keysOf.get(userId) ?? [];
      keysOf.delete(userId);
      return keys;
    },
    clear(): void {
      keysOf.clear();
    },
  };
}

/**
 * Whether an entry found in memory still stands. A write answered by another process a moment ago may
 * not have been notified here yet: the entry stands once the feed has caught up and no notification
 * dropped it meanwhile. A catch-up asked for since the read started (for its row, say) covers every
 * write answered before it: no second trip.
 */
function feedFreshness(feed: ChangeFeed | undefined) {
  // performance.now() when the latest call to feed.caughtUp() that answered true was made: every
  // notification committed before then has been applied.
  let caughtUpFromMs = Number.NEGATIVE_INFINITY;
  const caughtUp = async (): Promise<boolean> => {
    const calledAtMs = performance.now();
    if (feed === undefined || !(await feed.caughtUp())) return false;
    caughtUpFromMs = Math.max(caughtUpFromMs, calledAtMs);
    return true;
  };
  return async <T>(
    hit: Entry<T>,
    current: () => Entry<T> | undefined,
    sinceMs = Number.POSITIVE_INFINITY,
  ): Promise<boolean> => (caughtUpFromMs >= sinceMs || (await caughtUp())) && current() === hit;
}

/**
 * The policy rows that reads start from (a policyholder's policies; a policy by reference), and the
 * policy views built from them, kept in memory and dropped when PostgreSQL says their owner's policies
 * changed: reads then cost no query. Every table a view draws on notifies (migrations 0010 and 0039:
 * policies, policy_versions, payments, the account's reference), so no write, whatever wrote it, leaves
 * a view behind. Used only while the change feed is live; otherwise every read goes to the database.
 */
export function createPolicyRowCache<View>(feed: ChangeFeed | undefined) {
  const holders = new Map<string, Entry<PolicyRecord[]>>();
  const references = new Map<string, Entry<PolicyRecord>>();
  const referenceKeys = keysByOwner();
  // Views by policy id, and the policies of each owner that have one (so a notification finds them).
  const views = new Map<string, ViewEntry<View>>();
  const viewKeys = keysByOwner();
  // Bumped by every drop, so a read that loaded rows before a drop does not store them after it.
  let generation = 0;
  const fresh = feedFreshness(feed);

  const clear = () => {
    generation++;
    holders.clear();
    references.clear();
    referenceKeys.clear();
    views.clear();
    viewKeys.clear();
  };
  const drop = (userId: string) => {
    holders.delete(userId);
    for (const key of referenceKeys.take(userId)) references.delete(key);
    for (const id of viewKeys.take(userId)) views.delete(id);
  };
  feed?.subscribe(POLICY_CHANGES_CHANNEL, {
    onChange(payload) {
      if (payload === '*') {
        clear();
        return;
      }
      generation++;
      for (const userId of payload.split(',')) drop(userId);
    },
    onReset: clear,
  });

  const canStore = (userId: string, since: number, now: number) =>
    feed?.live === true && since === generation && !writtenJustNow(userId, now);
  const forget = (id: string, userId: string) => {
    views.delete(id);
    viewKeys.remove(userId, id);
  };

  return {
    /** Marks the start of a read: pass it to `view`. */
    startRead(): PolicyRead {
      return { generation, startedAtMs: performance.now() };
    },

    /**
     * The view of `row` (built with its versions, payments and account), from memory or from `build`.
     * A kept view serves only the same row state, while `stillShown` says its term is the one shown.
     */
    async view(
      read: PolicyRead,
      row: PolicyRecord,
      stillShown: (view: View) => boolean,
      build: () => Promise<View>,
    ): Promise<View> {
      const now = Date.now();
      const state = JSON.stringify(row);
      const hit = feed?.live === true ? views.get(row.id) : undefined;
      if (
        usable(hit, now) &&
        hit.row === state &&
        stillShown(hit.value) &&
        (await fresh(hit, () => views.get(row.id), read.startedAtMs))
      )
        return hit.value;
      const value = await build();
      if (canStore(row.userId, read.generation, Date.now())) {
        forget(row.id, views.get(row.id)?.userId ?? row.userId);
        if (views.size >= MAX_VIEWS) {
          const [oldId, oldest] = views.entries().next().value as [string, ViewEntry<View>];
          forget(oldId, oldest.userId);
        }
        views.set(row.id, { value, userId: row.userId, at: Date.now(), row: state });
        viewKeys.add(row.userId, row.id);
      }
      return value;
    },

    /** A policyholder's policies, oldest first, from memory or from `load`. */
    async ofHolder(
      tenant: Tenant,
      userId: string,
      load: () => Promise<PolicyRecord[]>,
    ): Promise<PolicyRecord[]> {
      const now = Date.now();
      const hit = feed?.live === true ? holders.get(userId) : undefined;
      if (
        usable(hit, now) &&
        hit.value.every((row) => inTenant(tenant, row)) &&
        (await fresh(hit, () => holders.get(userId)))
      )
        return hit.value;
      const since = generation;
      const rows = await load();
      if (canStore(userId, since, Date.now())) {
        bounded(holders);
        holders.set(userId, { value: rows, userId, at: Date.now() });
      }
      return rows;
    },

    /** A policy by reference in a tenant, from memory or from `load`. */
    async byReference(
      tenant: Tenant,
      reference: string,
      load: () => Promise<PolicyRecord | undefined>,
    ): Promise<PolicyRecord | undefined> {
      const key = `${tenant.companyId}/${tenant.environment}/${reference}`;
      const now = Date.now();
      const hit = feed?.live === true ? references.get(key) : undefined;
      if (usable(hit, now) && (await fresh(hit, () => references.get(key)))) return hit.value;
      const since = generation;
      const row = await load();
      if (row !== undefined && canStore(row.userId, since, Date.now())) {
        if (references.size >= MAX_ENTRIES) {
          // The oldest entry goes, and its owner's index with it, so the index stays as small as the map.
          const [oldKey, oldest] = references.entries().next().value as [string, Entry<PolicyRecord>];
          references.delete(oldKey);
          referenceKeys.remove(oldest.userId, oldKey);
        }
        references.set(key, { value: row, userId: row.userId, at: Date.now() });
        referenceKeys.add(row.userId, key);
      }
      return row;
    },
  };
}

export type PolicyRowCache<View> = ReturnType<typeof createPolicyRowCache<View>>;
