import Fastify from 'fastify';
import { stripeSandboxPlugin, type StripeSandboxOptions } from './sandbox-plugin.ts';
import { createMemorySandboxStore, type SandboxStore } from './store.ts';

export const SANDBOX_PREFIX = '/sandbox/stripe';

export interface RunningSandbox {
  /** `http://127.0.0.1:<port>/sandbox/stripe`: the adapter's `apiBase`. */
  readonly apiBase: string;
  readonly store: SandboxStore;
  /**
   * A secret key of an account of this sandbox, issued at start when the sandbox made its own store;
   * undefined with a store of the caller's, whose keys the caller knows.
   */
  readonly secretKey: string | undefined;
  close(): Promise<void>;
}

/**
 * The sandbox alone on its own port, mounted as the service mounts it: for tests, benchmarks and
 * local experiments. The service itself registers `stripeSandboxPlugin` in its app instead.
 */
export async function startStripeSandbox(
  options: StripeSandboxOptions & { readonly host?: string; readonly port?: number } = {},
): Promise<RunningSandbox> {
  const { host = '127.0.0.1', port = 0, ...sandboxOptions } = options;
  let secretKey: string | undefined;
  let store = sandboxOptions.store;
  if (store === undefined) {
    const own = createMemorySandboxStore();
    secretKey = own.issueSecretKey();
    store = own;
  }
  const app = Fastify({ logger: false });
  await app.register(stripeSandboxPlugin({ ...sandboxOptions, store }), { prefix: SANDBOX_PREFIX });
  await app.listen({ host, port });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('sandbox did not bind a TCP port');
  return {
    apiBase: `http://${host}:${address.port}${SANDBOX_PREFIX}`,
    store,
    secretKey,
    close: () => app.close(),
  };
}
