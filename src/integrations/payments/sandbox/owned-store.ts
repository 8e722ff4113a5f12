import { AsyncLocalStorage } from 'node:async_hooks';
import type { SandboxObject, SandboxStore } from './store.ts';

/** Where a stored object keeps the account that made it (never served: removed on every read). */
const OWNER = '_sandbox_account';
/** The owner of a card a browser made with a publishable key, until a secret key attaches it. */
const UNCLAIMED = '*unclaimed';

interface RequestScope {
  /** The caller's account (a secret key's), or undefined for a browser confirming with a client secret. */
  readonly account: string | undefined;
  /** The owner of the objects this request read, for what it writes next (a browser's confirm). */
  owner: string | undefined;
}

/** The account a stored object belongs to, as the raw store holds it (for work the sandbox does on its own). */
export function ownerOf(object: SandboxObject): string | undefined {
  const owner = object[OWNER];
  return typeof owner === 'string' && owner !== UNCLAIMED ? owner : undefined;
}

function withoutOwner(object: SandboxObject): SandboxObject {
  const { [OWNER]: _owner, ...served } = object;
  return served;
}

/**
 * The sandbox's objects by account, as on Stripe, where objects belong to the account whose key made
 * them and another key gets 404 (`resource_missing`) and empty lists. Each secret key is an account of
 * its own (the service gives every company a key), so a key reaches only what it made. A browser
 * without a secret key (confirming with a client secret) reaches the intent it names, and what it
 * writes stays with that intent's account. Objects stored before ownership existed belong to no
 * account any key reaches. A card a browser makes with a publishable key (`runUnclaimed`) belongs to no
 * account yet: the sandbox cannot tell whose publishable key it was, so the first secret key to use it
 * (attaching it to a customer) makes it that account's, and other keys get 404 from then on. Its id
 * is as unguessable as a client secret and travels only from the browser to the service.
 * The request's account travels in async context, so the engine (and its per-object locks) stays one.
 */
export function ownedStore(store: SandboxStore): {
  store: SandboxStore;
  run<T>(account: string | undefined, work: () => Promise<T>): Promise<T>;
  /** A browser's request with a publishable key: what it writes is unclaimed (see above). */
  runUnclaimed<T>(work: () => Promise<T>): Promise<T>;
} {
  const scopes = new AsyncLocalStorage<RequestScope>();
  const matchOf = (match: Readonly<Record<string, unknown>> | undefined) => {
    const account = scopes.getStore()?.account;
    return account === undefined ? match : { ...match, [OWNER]: account };
  };
  return {
    run: (account, work) => scopes.run({ account, owner: account }, work),
    runUnclaimed: (work) => scopes.run({ account: undefined, owner: UNCLAIMED }, work),
    store: {
      ...store,
      async get(id) {
        const found = await store.get(id);
        if (found === undefined) return undefined;
        const scope = scopes.getStore();
        const owner = typeof found[OWNER] === 'string' ? found[OWNER] : undefined;
        const claimable = owner === UNCLAIMED && found.object === 'payment_method';
        if (scope?.account !== undefined && owner !== scope.account && !claimable) return undefined;
        if (scope !== undefined) scope.owner ??= owner;
        return withoutOwner(found);
      },
      async put(object) {
        const owner = scopes.getStore()?.owner;
        await store.put(owner === undefined ? object : { ...object, [OWNER]: owner });
      },
      async find(type, match, limit) {
        return (await store.find(type, matchOf(match), limit)).map(withoutOwner);
      },
      count: (type, match) => store.count(type, matchOf(match)),
    },
  };
}
