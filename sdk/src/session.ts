import {
  createMilepostClient,
  unwrap,
  type ClientOptions,
  type Fetch,
  type MilepostClient,
} from './client.ts';
import { MilepostError } from './errors.ts';
import type { operations } from './openapi.ts';

type TokenRequest = operations['auth.token']['requestBody']['content']['application/json'];

/** A signed-in policyholder's tokens. */
export interface Tokens {
  readonly username: string;
  readonly accessToken: string;
  /** Opaque and single use: every refresh answers a new one (the old one is spent). */
  readonly refreshToken: string;
  /** UNIX seconds at which the access token expires. */
  readonly expiresAt: number;
}

/** Where the tokens are kept between page loads (the browser app uses localStorage). */
export interface TokenStore {
  load(): Tokens | undefined;
  save(tokens: Tokens | undefined): void;
}

export function memoryTokenStore(initial?: Tokens): TokenStore {
  let kept = initial;
  return {
    load: () => kept,
    save: (tokens) => {
      kept = tokens;
    },
  };
}

/** What a sign-in led to: signed in, or a temporary password that must be replaced first. */
export type SignInResult =
  | { readonly step: 'SIGNED_IN'; readonly username: string }
  | { readonly step: 'NEW_PASSWORD_REQUIRED'; readonly username: string; readonly session: string };

export interface SessionOptions extends ClientOptions {
  readonly store?: TokenStore | undefined;
  /** Called when the session ends without `signOut`: the refresh token was refused. */
  readonly onExpired?: (() => void) | undefined;
  /** Seconds before `expiresAt` at which a request refreshes first (default 30). */
  readonly refreshMarginSeconds?: number | undefined;
  /** The clock, in milliseconds (tests). */
  readonly now?: (() => number) | undefined;
}

const AUTH_PATHS = /\/auth\/(token|revoke)$/;

/**
 * The policyholder's session over the typed client: every step of the login flow, the tokens kept
 * in `store`, `Authorization` added to each request, the access token renewed silently (before it
 * expires, and once on a 401 with the rotating refresh token: if that fails, the session ends), and
 * sign-out revoking the refresh token.
 */
export function createSession(options: SessionOptions) {
  const store = options.store ?? memoryTokenStore();
  const now = options.now ?? Date.now;
  const margin = options.refreshMarginSeconds ?? 30;
  const send: Fetch = options.fetch ?? ((request) => globalThis.fetch(request));
  // The login steps go out without a token.
  const auth = createMilepostClient({ ...options, fetch: send });
  let tokens = store.load();
  let refreshing: Promise<boolean> | undefined;

  const keep = (next: Tokens | undefined): void => {
    tokens = next;
    store.save(next);
  };

  /** Ends the session here (the service is told by `signOut`). */
  const expire = (): void => {
    if (tokens === undefined) return;
    keep(undefined);
    options.onExpired?.();
  };

  async function refreshNow(spent: Tokens): Promise<boolean> {
    try {
      const answer = await unwrap(
        auth.POST('/auth/token', { body: { type: 'REFRESH_TOKEN', refresh_token: spent.refreshToken } }),
      );
      if (answer.type !== 'DONE')
        throw new MilepostError('The session could not be renewed.', { status: 200, code: 'UNEXPECTED' });
      // Signed out (or in as someone else) meanwhile: this answer is not wanted.
      if (tokens !== spent) return tokens !== undefined;
      keep({
        username: answer.username,
        accessToken: answer.access_token,
        refreshToken: answer.refresh_token,
        expiresAt: answer.expiry,
      });
      return true;
    } catch (error) {
      // A refused refresh token ends the session; a network failure leaves it for the next try.
      if (error instanceof MilepostError && error.status >= 400 && error.status < 500 && tokens === spent)
        expire();
      return false;
    }
  }

  /** One refresh at a time: parallel requests that meet a 401 share it (a spent token is never reused). */
  function refresh(seen: Tokens): Promise<boolean> {
    if (tokens !== seen) return Promise.resolve(tokens !== undefined);
    refreshing ??= refreshNow(seen).finally(() => {
      refreshing = undefined;
    });
    return refreshing;
  }

  const withToken = (request: Request, current: Tokens): Request => {
    request.headers.set('authorization', `Bearer ${current.accessToken}`);
    return request;
  };

  const authorised: Fetch = async (request) => {
    if (AUTH_PATHS.test(new URL(request.url).pathname)) return send(request);
    let current = tokens;
    if (current !== undefined && current.expiresAt - margin <= now() / 1000) {
      await refresh(current);
      current = tokens;
    }
    if (current === undefined) return send(request);
    const spare = request.clone();
    const response = await send(withToken(request, current));
    if (response.status !== 401) return response;
    // Once: refresh and replay; a second 401 ends the session.
    if (!(await refresh(current)) || tokens === undefined) return response;
    const replayed = await send(withToken(spare, tokens));
    if (replayed.status === 401) expire();
    return replayed;
  };

  /** The typed client, signed in: `await unwrap(session.client.GET('/policys/details'))`. */
  const client: MilepostClient = createMilepostClient({ ...options, fetch: authorised });

  const token = (body: TokenRequest) => unwrap(auth.POST('/auth/token', { body }));

  return {
    client,
    /** The current tokens, or undefined when signed out. */
    tokens: (): Tokens | undefined => tokens,
    isSignedIn: (): boolean => tokens !== undefined,

    /** USER_PASSWORD_AUTH: with the personal password, signed in; with a temporary one, a new password is needed first. */
    async signIn(username: string, password: string): Promise<SignInResult> {
      const answer = await token({ type: 'USER_PASSWORD_AUTH', username, password });
      if (answer.type === 'NEW_PASSWORD_REQUIRED')
        return { step: 'NEW_PASSWORD_REQUIRED', username: answer.username, session: answer.session };
      if (answer.type !== 'DONE')
        throw new MilepostError('The sign-in could not be completed.', { status: 200, code: 'UNEXPECTED' });
      keep({
        username: answer.username,
        accessToken: answer.access_token,
        refreshToken: answer.refresh_token,
        expiresAt: answer.expiry,
      });
      return { step: 'SIGNED_IN', username: answer.username };
    },

    /** NEW_PASSWORD_REQUIRED: replaces the temporary password, then signs in with the new one. */
    async choosePassword(
      challenge: { username: string; session: string },
      newPassword: string,
    ): Promise<SignInResult> {
      await token({
        type: 'NEW_PASSWORD_REQUIRED',
        username: challenge.username,
        session: challenge.session,
        new_password: newPassword,
      });
      return this.signIn(challenge.username, newPassword);
    },

    /** FORGOT_PASSWORD: a 6-digit code is emailed (the answer is the same for any username). */
    async forgotPassword(username: string): Promise<void> {
      await token({ type: 'FORGOT_PASSWORD', username });
    },

    /** FORGOT_PASSWORD_CODE: sets the new password with the emailed code, then signs in with it. */
    async resetPassword(username: string, code: string, newPassword: string): Promise<SignInResult> {
      await token({ type: 'FORGOT_PASSWORD_CODE', username, code, new_password: newPassword });
      return this.signIn(username, newPassword);
    },

    /** RESEND_PASSWORD: a new temporary password is emailed (for one that expired). */
    async resendPassword(username: string): Promise<void> {
      await token({ type: 'RESEND_PASSWORD', username });
    },

    /** Renews the access token now (normally done for you). False when the session has ended. */
    async refresh(): Promise<boolean> {
      return tokens === undefined ? false : refresh(tokens);
    },

    /** Revokes the refresh token (and the login's access tokens) and forgets them. */
    async signOut(): Promise<void> {
      const ending = tokens;
      keep(undefined);
      if (ending === undefined) return;
      try {
        await unwrap(auth.POST('/auth/revoke', { body: { refresh_token: ending.refreshToken } }));
      } catch {
        // Signed out here all the same; the refresh token expires by itself.
      }
    },
  };
}

export type Session = ReturnType<typeof createSession>;
