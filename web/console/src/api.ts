import { errorFromResponse, MilepostError, networkError } from '../../../sdk/src/errors.ts';
import { formatWait } from '../../app/src/format.ts';
import type { Tenant } from './types.ts';

type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface RequestOptions {
  readonly query?: Query;
  readonly body?: unknown;
  /** A company-scoped route: sent with the company's `client_id` and the environment. */
  readonly tenant?: Tenant;
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

export type Api = ReturnType<typeof createApi>;

const pathWith = (path: string, query: Query | undefined): string => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {}))
    if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
};

async function bodyOf(response: Response): Promise<unknown> {
  const type = response.headers.get('content-type') ?? '';
  if (response.status === 204 || !/json/.test(type)) return undefined;
  try {
    return await response.json();
  } catch {
    return undefined;
  }
}

/**
 * The console's calls to the service, same origin: the staff cookie goes by itself; every request that
 * changes something carries the session's CSRF token. A 401 outside signing in means the session ended.
 */
export function createApi(onSessionEnded: () => void) {
  let csrfToken: string | undefined;

  const send = async (method: string, path: string, options: RequestOptions = {}): Promise<Response> => {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET' && csrfToken !== undefined) headers['x-csrf-token'] = csrfToken;
    if (options.tenant !== undefined) {
      headers['client_id'] = options.tenant.company.client_id;
      headers['environment'] = options.tenant.environment;
    }
    let response: Response;
    try {
      response = await fetch(pathWith(path, options.query), {
        method,
        headers,
        credentials: 'same-origin',
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    } catch (cause) {
      throw networkError(cause);
    }
    if (!response.ok) {
      const error = errorFromResponse(response, await bodyOf(response));
      // A wrong code or password is the caller's to tell; any other 401 means the session is over.
      if (
        response.status === 401 &&
        error.code !== 'INVALID_CREDENTIALS' &&
        !path.startsWith('/staff/session')
      )
        onSessionEnded();
      throw error;
    }
    return response;
  };

  const request = async <T>(method: string, path: string, options?: RequestOptions): Promise<T> =>
    (await bodyOf(await send(method, path, options))) as T;

  return {
    /** The token of the current session, sent as `x-csrf-token` (undefined after signing out). */
    setCsrfToken(token: string | undefined) {
      csrfToken = token;
    },
    get: <T>(path: string, options?: RequestOptions) => request<T>('GET', path, options),
    post: <T>(path: string, options?: RequestOptions) => request<T>('POST', path, options),
    put: <T>(path: string, options?: RequestOptions) => request<T>('PUT', path, options),
    patch: <T>(path: string, options?: RequestOptions) => request<T>('PATCH', path, options),
    delete: <T>(path: string, options?: RequestOptions) => request<T>('DELETE', path, options),
    /**
     * A POST answered with server-sent events, each passed to `onEvent` as it arrives (EventSource
     * cannot POST, so the stream is read from fetch).
     */
    async stream(
      path: string,
      body: unknown,
      onEvent: (name: string, data: unknown) => void,
      signal?: AbortSignal,
    ): Promise<void> {
      const response = await send('POST', path, {
        body,
        headers: { accept: 'text/event-stream' },
        ...(signal === undefined ? {} : { signal }),
      });
      // A run that finishes before its first progress report may answer plain JSON: the result.
      if (/json/.test(response.headers.get('content-type') ?? '')) {
        onEvent('done', await bodyOf(response));
        return;
      }
      if (response.body === null) return;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffered = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (value !== undefined) buffered += value;
        // Events end with a blank line; a partial one waits for the next chunk.
        const events = buffered.replace(/\r\n/g, '\n').split('\n\n');
        buffered = done ? '' : (events.pop() ?? '');
        for (const event of events) {
          let name = 'message';
          const data: string[] = [];
          for (const line of event.split('\n')) {
            if (line.startsWith('event:')) name = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          if (data.length === 0) continue;
          let parsed: unknown = data.join('\n');
          try {
            parsed = JSON.parse(data.join('\n'));
          } catch {
            // Not JSON: passed on as text.
          }
          onEvent(name, parsed);
        }
        if (done) return;
      }
    },
  };
}

/** A failure as a sentence for staff: the service's detail, with the fields it refused. */
export function consoleError(error: unknown): string {
  // A form the console checks itself (JSON typed into a field) names what is wrong.
  if (error instanceof SyntaxError) return error.message;
  if (!(error instanceof MilepostError)) return 'Something went wrong. Please try again, or reload the page.';
  if (error.code === 'RATE_LIMITED' || error.status === 429)
    return error.retryAfterSeconds === undefined
      ? 'Too many attempts. Please wait a moment and try again.'
      : `Too many attempts. Please wait ${formatWait(error.retryAfterSeconds)} and try again.`;
  const fields = error.errors.map(
    (problem) => `${problem.path.replace(/^\/body\//, '')}: ${problem.message}`,
  );
  return fields.length === 0 ? error.message : `${error.message} (${fields.join('; ')})`;
}
