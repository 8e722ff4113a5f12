import { createSession, type Session, type TokenStore, type Tokens } from '../../../sdk/src/index.ts';
import type { AppConfig } from './config.ts';

const KEY = 'milepost.session';

/** The session survives a reload: kept in localStorage (the refresh token renews it silently). */
const localStore: TokenStore = {
  load() {
    try {
      const raw = localStorage.getItem(KEY);
      return raw === null ? undefined : (JSON.parse(raw) as Tokens);
    } catch {
      return undefined;
    }
  },
  save(tokens) {
    if (tokens === undefined) localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, JSON.stringify(tokens));
  },
};

export function createAppSession(config: AppConfig, onExpired: () => void): Session {
  return createSession({
    baseUrl: window.location.origin,
    clientId: config.client_id ?? undefined,
    environment: config.environment,
    store: localStore,
    onExpired,
  });
}
