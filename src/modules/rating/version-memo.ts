import type { Tenant } from '../companies/index.ts';
import type { VersionInForce } from './rate-book-repository.ts';

/** A remembered version and the product whose rate book it belongs to (what a check of it needs). */
export interface RememberedVersion extends VersionInForce {
  readonly productId: string;
}

export interface VersionMemoLimits {
  /** Products remembered at most; past it the memo starts again empty. */
  readonly products: number;
  /** Versions remembered per product at most; past it that product's start again with the newest. */
  readonly versionsPerProduct: number;
}

/**
 * Approved rate book versions already read, per tenant's product, so that rating one need not read and
 * parse its content again. An approved version never changes (nor does its `effective_from`), and
 * products and rate books are never deleted, so what is remembered stays true; what the memo cannot
 * know is whether another version, approved since (perhaps by another process), is now in force at a
 * given date. Its `candidate` is therefore only a candidate: the caller confirms it in the statement
 * that uses it (the quotes' `store_quote`, migration 0064), and on a miss reads the version in force and
 * remembers it.
 */
export function createVersionMemo(limits: VersionMemoLimits = { products: 1_000, versionsPerProduct: 8 }) {
  const byProduct = new Map<string, { productId: string; versions: VersionInForce[] }>();
  const keyOf = (tenant: Tenant, productReference: string): string =>
    `${tenant.companyId}/${tenant.environment}/${productReference}`;

  return {
    /**
     * Of the product's remembered versions, the one with the latest `effective_from` at or before
     * `onDate` (the version in force then, unless one not remembered is later); undefined for none.
     */
    candidate(tenant: Tenant, productReference: string, onDate: Date): RememberedVersion | undefined {
      const entry = byProduct.get(keyOf(tenant, productReference));
      if (entry === undefined) return undefined;
      let best: VersionInForce | undefined;
      let bestFromMs = -Infinity;
      for (const seen of entry.versions) {
        const fromMs = seen.version.effectiveFrom?.getTime();
        if (fromMs !== undefined && fromMs <= onDate.getTime() && fromMs > bestFromMs) {
          best = seen;
          bestFromMs = fromMs;
        }
      }
      return best === undefined ? undefined : { productId: entry.productId, ...best };
    },

    /** Remembers `inForce`, an approved version of the product's rate book just read. */
    remember(tenant: Tenant, productReference: string, productId: string, inForce: VersionInForce): void {
      if (inForce.version.status !== 'approved') return;
      const key = keyOf(tenant, productReference);
      const entry = byProduct.get(key);
      if (entry === undefined) {
        if (byProduct.size >= limits.products) byProduct.clear();
        byProduct.set(key, { productId, versions: [inForce] });
        return;
      }
      if (entry.versions.some((seen) => seen.version.id === inForce.version.id)) return;
      if (entry.versions.length >= limits.versionsPerProduct) entry.versions.length = 0;
      entry.versions.push(inForce);
    },
  };
}

export type VersionMemo = ReturnType<typeof createVersionMemo>;
