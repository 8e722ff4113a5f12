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

/**
 * The policy rows that reads start from (a policyholder's policies; a policy by reference), kept in
 * memory and dropped when PostgreSQL says their owner's policies changed: reads then cost no query. Used
 * only while the change feed is live; otherwise every read goes to the database, as without it.
 */
export function createPolicyRowCache(feed: ChangeFeed | undefined) {
  const holders = new Map<string, Entry<PolicyRecord[]>>();
  const references = new Map<string, Entry<PolicyRecord>>();
  const referenceKeysOf = new Map<string, Set<string>>();
  // Bumped by every drop, so a read that loaded rows before a drop does not store them after it.
  let generation = 0;

  const clear = () => {
    generation++;
    holders.clear();
    references.clear();
    referenceKeysOf.clear();
  };
  const drop = (userId: string) => {
    holders.delete(userId);
    for (const key of referenceKeysOf.get(userId) ?? []) references.delete(key);
    referenceKeysOf.delete(userId);
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

  const usable = <T>(entry: Entry<T> | undefined, now: number): entry is Entry<T> =>
    entry !== undefined && now - entry.at < ENTRY_TTL_MS && !writtenJustNow(entry.userId, now);
  // A write answered by another process a moment ago may not have been notified here yet: the entry
  // stands once the feed has caught up and no notification dropped it meanwhile.
  const fresh = async <T>(hit: Entry<T>, current: () => Entry<T> | undefined): Promise<boolean> =>
    feed !== undefined && (await feed.caughtUp()) && current() === hit;
  const canStore = (userId: string, since: number, now: number) =>
    feed?.live === true && since === generation && !writtenJustNow(userId, now);
  const bounded = <V>(map: Map<string, V>) => {
    if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value as string);
  };
  const inTenant = (tenant: Tenant, row: PolicyRecord) =>
    row.companyId === tenant.companyId && row.environment === tenant.environment;

  return {
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
          const keys = referenceKeysOf.get(oldest.userId);
          keys?.delete(oldKey);
          if (keys?.size === 0) referenceKeysOf.delete(oldest.userId);
        }
        references.set(key, { value: row, userId: row.userId, at: Date.now() });
        let keys = referenceKeysOf.get(row.userId);
        if (keys === undefined) referenceKeysOf.set(row.userId, (keys = new Set()));
        keys.add(key);
      }
      return row;
    },
  };
}

export type PolicyRowCache = ReturnType<typeof createPolicyRowCache>;
