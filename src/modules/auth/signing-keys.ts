import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import {
  insertSigningKey,
  listPublishedKeys,
  lockSigningKeys,
  retireSigningKeys,
  withdrawSigningKeys,
  type SigningKeyRow,
} from './auth-repository.ts';

/** A public key as published at /.well-known/jwks.json (RFC 8037 OKP). */
export interface PublicJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly kid: string;
  readonly alg: 'Ed25519';
  readonly use: 'sig';
}

interface LoadedKey {
  readonly row: SigningKeyRow;
  readonly publicKey: KeyObject;
  readonly jwk: PublicJwk;
}

/** How often an instance re-reads the keys, so that a rotation elsewhere reaches it. */
const RELOAD_EVERY_MS = 60_000;
/** An unknown `kid` triggers a reload at most this often (a token from a key another instance just made). */
const UNKNOWN_KID_RELOAD_MS = 1_000;
/** Published this long past the last token a key may have signed, for clock skew between instances. */
const PUBLISH_MARGIN_SECONDS = 300;

export interface KeyRingSettings {
  readonly rotationSeconds: number;
  readonly accessTokenTtlSeconds: number;
}

/**
 * Ed25519 signing keys, kept in the database so every instance signs and verifies alike. The newest
 * key signs for `rotationSeconds`, then a new one is made (once, under an advisory lock); a retired
 * key stays published until every token it signed has expired, so rotation never logs anybody out.
 */
export function createKeyRing(deps: { db: Executor; clock: Clock; settings: KeyRingSettings }) {
  const { db, clock, settings } = deps;
  let keys = new Map<string, LoadedKey>();
  let loadedAt = -Infinity;
  let loading: Promise<void> | undefined;

  const toLoaded = (row: SigningKeyRow): LoadedKey => {
    const publicKey = createPublicKey({ key: row.publicJwk, format: 'jwk' });
    return {
      row,
      publicKey,
      jwk: {
        kty: 'OKP',
        crv: 'Ed25519',
        x: String(row.publicJwk['x']),
        kid: row.kid,
        alg: 'Ed25519',
        use: 'sig',
      },
    };
  };

  async function reload(): Promise<void> {
    // Concurrent callers share one query.
    loading ??= (async () => {
      try {
        const rows = await listPublishedKeys(db, clock.now());
        keys = new Map(rows.map((row) => [row.kid, toLoaded(row)]));
        loadedAt = Date.now();
      } finally {
        loading = undefined;
      }
    })();
    return loading;
  }

  const signer = (now: Date): LoadedKey | undefined => {
    let best: LoadedKey | undefined;
    for (const key of keys.values())
      if (
        key.row.signsUntil > now &&
        key.row.createdAt <= now &&
        (best === undefined || key.row.createdAt > best.row.createdAt)
      )
        best = key;
    return best;
  };

  function newKeyRow(now: Date): SigningKeyRow {
    const pair = generateKeyPairSync('ed25519');
    const jwk = pair.publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
    const signsUntil = new Date(now.getTime() + settings.rotationSeconds * 1000);
    return {
      kid: `${now.toISOString().slice(0, 10)}_${randomBytes(6).toString('base64url')}`,
      publicJwk: jwk,
      privateKeyPkcs8: pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      createdAt: now,
      signsUntil,
      publishedUntil: new Date(
        signsUntil.getTime() + (settings.accessTokenTtlSeconds + PUBLISH_MARGIN_SECONDS) * 1000,
      ),
    };
  }

  /** Makes a key unless another instance made one that signs now; both under the advisory lock. */
  async function ensureSigner(now: Date, force: boolean): Promise<string> {
    return inTransaction(db, async (trx) => {
      await lockSigningKeys(trx);
      const rows = await listPublishedKeys(trx, now);
      const current = rows.find((r) => r.signsUntil > now && r.createdAt <= now);
      if (current !== undefined && !force) return current.kid;
      const row = newKeyRow(now);
      await insertSigningKey(trx, row);
      return row.kid;
    });
  }

  const privateKeys = new Map<string, KeyObject>();

  return {
    /** The key to sign with now, making one when none signs (first start, or its period is over). */
    async signingKey(): Promise<{ kid: string; privateKey: KeyObject }> {
      const now = clock.now();
      if (Date.now() - loadedAt > RELOAD_EVERY_MS) await reload();
      let key = signer(now);
      if (key === undefined) {
        await ensureSigner(now, false);
        await reload();
        key = signer(now);
      }
      if (key === undefined) throw new Error('no signing key after creating one');
      let privateKey = privateKeys.get(key.row.kid);
      if (privateKey === undefined) {
        privateKey = createPrivateKey(key.row.privateKeyPkcs8);
        privateKeys.set(key.row.kid, privateKey);
      }
      return { kid: key.row.kid, privateKey };
    },

    /** The public key for `kid`, synchronously when known; undefined when it is not (or no longer) published. */
    publicKey(kid: string): KeyObject | undefined {
      const key = keys.get(kid);
      return key !== undefined && key.row.publishedUntil > clock.now() ? key.publicKey : undefined;
    },

    /** Re-reads the keys when `kid` is unknown here (another instance may have just made it); rate-limited. */
    async refreshFor(kid: string): Promise<KeyObject | undefined> {
      if (!keys.has(kid) && Date.now() - loadedAt > UNKNOWN_KID_RELOAD_MS) await reload();
      else if (Date.now() - loadedAt > RELOAD_EVERY_MS) await reload();
      return this.publicKey(kid);
    },

    /** The published public keys, newest first. */
    async jwks(): Promise<{ keys: PublicJwk[] }> {
      if (Date.now() - loadedAt > RELOAD_EVERY_MS || signer(clock.now()) === undefined)
        await this.signingKey();
      const now = clock.now();
      return {
        keys: [...keys.values()].filter((k) => k.row.publishedUntil > now).map((k) => k.jwk),
      };
    },

    /**
     * Starts a new key now. The previous keys stop signing; with `withdrawPrevious` they are also
     * unpublished at once, so tokens they signed stop working (for a key that may have leaked).
     */
    async rotate(withdrawPrevious: boolean): Promise<{ kid: string; withdrawn: boolean }> {
      const now = clock.now();
      const kid = await ensureSigner(now, true);
      await inTransaction(db, async (trx) => {
        if (withdrawPrevious) await withdrawSigningKeys(trx, kid, now);
        else await retireSigningKeys(trx, kid, now);
      });
      await reload();
      return { kid, withdrawn: withdrawPrevious };
    },
  };
}

export type KeyRing = ReturnType<typeof createKeyRing>;
