import { createSession, type Session, type TokenStore, type Tokens } from '../../../sdk/src/index.ts';
import type { AppConfig } from './config.ts';
import { sessionKey } from './demo.ts';
import { takeEarlyResponse } from './early-request.ts';

/** The session survives a reload: kept in localStorage (the refresh token renews it silently). */
const localStore = (key: string): TokenStore => ({
  load() {
    try {
      const raw = localStorage.getItem(key);
      return raw === null ? undefined : (JSON.parse(raw) as Tokens);
    } catch {
      return undefined;
    }
  },
  save(tokens) {
    if (tokens === undefined) localStorage.removeItem(key);
    else localStorage.setItem(key, JSON.stringify(tokens));
  },
});

export function createAppSession(config: AppConfig, onExpired: () => void): Session {
  return createSession({
    baseUrl: window.location.origin,
    clientId: config.client_id ?? undefined,
    environment: config.environment,
    store: localStore(sessionKey(config)),
    onExpired,
    // The policy request the entry script sent before the app loaded answers the first one made here.
    fetch: (request) => takeEarlyResponse(request) ?? globalThis.fetch(request),
  });
}
