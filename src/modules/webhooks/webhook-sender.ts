import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { addressAllowed, checkEndpointUrl, classifyAddress, type UrlPolicy } from './rules/url-safety.ts';

/** Resolves a hostname to every address it has (the port; tests pass their own). */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

export const systemResolver: Resolver = (hostname) =>
  dns.promises.lookup(hostname, { all: true, order: 'verbatim' });

/** A delivery attempt waits this long for a complete answer. */
export const DELIVERY_TIMEOUT_MS = 15_000;
/** Kept from a receiver's answer for the delivery log: enough to read an error page's message. */
export const RESPONSE_BODY_LIMIT_BYTES = 1024;

export interface AttemptOutcome {
  readonly delivered: boolean;
  /** Null when no HTTP answer arrived (refused address, DNS, connection, timeout). */
  readonly statusCode: number | null;
  readonly durationMs: number;
  readonly responseBody: string | null;
  readonly error: string | null;
}

class RefusedAddressError extends Error {
  readonly code = 'EADDRREFUSED';
}

/** Why a set of resolved addresses may not be called under `policy`; undefined when they all may. */
function refusal(addresses: ReadonlyArray<{ address: string }>, policy: UrlPolicy): string | undefined {
  if (addresses.length === 0) return 'resolves to no address';
  for (const { address } of addresses) {
    const category = classifyAddress(address) ?? 'reserved';
    if (!addressAllowed(category, policy)) return `resolves to a ${category} address (${address})`;
  }
  return undefined;
}

/**
 * Whether a failed lookup says that the name has no address (NXDOMAIN, or no A or AAAA record), rather
 * than that the resolver could not answer for now (`EAI_AGAIN`, a timeout).
 */
export function isUnknownName(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return code === 'ENOTFOUND' || code === 'ENODATA';
}

/** Resolves `hostname` and checks every address it has; for registration, before any connection. */
export async function checkResolvedHost(
  hostname: string,
  policy: UrlPolicy,
  resolve: Resolver,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const reason = refusal(await resolve(hostname), policy);
  return reason === undefined ? { ok: true } : { ok: false, reason };
}

/**
 * A `lookup` for the socket that refuses disallowed addresses. Checking the addresses the connection
 * actually uses, rather than a separate lookup beforehand, leaves no gap for DNS rebinding.
 */
function guardedLookup(policy: UrlPolicy, resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const reason = refusal(addresses, policy);
        const wanted = options.family === 6 || options.family === 4 ? options.family : undefined;
        const usable = addresses.filter((a) => wanted === undefined || a.family === wanted);
        const first = usable[0];
        if (reason !== undefined || first === undefined) {
          const why = reason ?? `has no IPv${String(wanted)} address`;
          callback(new RefusedAddressError(`${hostname} ${why}, which is not allowed`), '', 4);
        } else if (options.all === true) {
          callback(
            null,
            usable.map((a) => ({ address: a.address, family: a.family })),
          );
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: unknown) => {
        callback(error as NodeJS.ErrnoException, '', 4);
      },
    );
  };
}

const describe = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  return code === undefined || error.message.includes(code) ? error.message : `${code}: ${error.message}`;
};

/**
 * POSTs one signed message. Never throws: every failure is an outcome for the delivery log. No
 * redirect is followed (a 3xx is a failure), the whole exchange is bounded by `timeoutMs`, and at most
 * `RESPONSE_BODY_LIMIT_BYTES` of the answer is read. Each attempt opens its own connection, so a
 * pooled socket can never bypass the address check.
 */
export async function sendWebhook(request: {
  url: string;
  headers: Record<string, string>;
  body: string;
  policy: UrlPolicy;
  resolve?: Resolver;
  timeoutMs?: number;
  signal?: AbortSignal;
}): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const failed = (error: string, statusCode: number | null = null, responseBody: string | null = null) => ({
    delivered: false,
    statusCode,
    durationMs: elapsed(),
    responseBody,
    error,
  });
  const check = checkEndpointUrl(request.url, request.policy);
  if (!check.ok) return failed(`the URL ${check.reason}`);
  const { url } = check;
  const timeout = AbortSignal.timeout(request.timeoutMs ?? DELIVERY_TIMEOUT_MS);
  const signal = request.signal === undefined ? timeout : AbortSignal.any([timeout, request.signal]);
  const client = url.protocol === 'https:' ? https : http;
  const bodyBytes = Buffer.from(request.body, 'utf8');

  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const req = client.request(
      url,
      {
        method: 'POST',
        agent: false,
        lookup: guardedLookup(request.policy, request.resolve ?? systemResolver),
        signal,
        headers: {
          ...request.headers,
          'content-length': String(bodyBytes.length),
          'user-agent': 'Milepost-Webhooks/1',
        },
      },
      (res) => {
        const statusCode = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let kept = 0;
        const done = () => {
          const text = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT_BYTES).toString('utf8');
          const responseBody = text === '' ? null : text;
          if (statusCode >= 200 && statusCode <= 299)
            finish({ delivered: true, statusCode, durationMs: elapsed(), responseBody, error: null });
          else finish(failed(`the endpoint answered ${statusCode}`, statusCode, responseBody));
          res.destroy();
        };
        res.on('data', (chunk: Buffer) => {
          if (kept < RESPONSE_BODY_LIMIT_BYTES) chunks.push(chunk);
          kept += chunk.length;
          // Enough for the log: stop reading rather than take in an unbounded answer.
          if (kept >= RESPONSE_BODY_LIMIT_BYTES) done();
        });
        res.on('end', done);
        // NOTE: a 2xx within the time limit is a delivery even if the rest of its body is cut off.
        res.on('error', done);
        res.on('close', done);
      },
    );
    req.on('error', (error) => {
      if (timeout.aborted)
        finish(failed(`no response within ${request.timeoutMs ?? DELIVERY_TIMEOUT_MS} ms`));
      else if (request.signal?.aborted === true) finish(failed('aborted: the worker is shutting down'));
      else finish(failed(describe(error)));
    });
    // Whatever else happens, a closed connection settles the attempt.
    req.on('close', () => {
      finish(failed('the connection closed without an answer'));
    });
    req.end(bodyBytes);
  });
}
