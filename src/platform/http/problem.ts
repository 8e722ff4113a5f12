import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import secureJson from 'secure-json-parse';
import { Type, type Static } from 'typebox';
import { isDatabaseUnavailable } from '../db/database.ts';
import { AppError, ERROR_STATUS, type ErrorCode, type FieldError } from '../errors.ts';
import {
  findFormLimitBreach,
  findJsonLimitBreach,
  jsonBodyLimitsOf,
  type JsonBodyLimits,
} from './body-limits.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export const FieldErrorSchema = Type.Object(
  {
    path: Type.String({ description: 'JSON pointer to the failing value, e.g. `/body/proposer/email`.' }),
    message: Type.String(),
  },
  { $id: 'FieldError' },
);

/** RFC 9457 problem details, plus `message` and `status_code` for clients of the original service. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'A URI naming the problem type.' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({
      description: 'Stable UPPER_SNAKE code to branch on.',
      examples: ['VALIDATION_FAILED'],
    }),
    message: Type.String({ description: 'Same as `detail`.' }),
    status_code: Type.Integer({ description: 'Same as `status`.' }),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(Type.Ref('FieldError'))),
  },
  { $id: 'Problem', description: 'An error, as application/problem+json (RFC 9457).' },
);
export type Problem = Static<typeof ProblemSchema>;

/** The `response` entries for error statuses, to spread into a route schema. */
export function problemResponses(...statuses: number[]): Record<number, unknown> {
  return Object.fromEntries(
    statuses.map((s) => [s, { ...Type.Ref('Problem'), description: STATUS_CODES[s] ?? 'Error' }]),
  );
}

function problemBody(
  requestId: string,
  code: string,
  status: number,
  detail: string,
  errors?: readonly FieldError[],
): Problem {
  return {
    type: `https://milepost.dev/problems/${code.toLowerCase().replaceAll('_', '-')}`,
    title: STATUS_CODES[status] ?? 'Error',
    status,
    detail,
    code,
    message: detail,
    status_code: status,
    request_id: requestId,
    ...(errors === undefined || errors.length === 0 ? {} : { errors: [...errors] }),
  };
}

export function sendProblem(
  reply: FastifyReply,
  code: ErrorCode,
  detail: string,
  errors?: readonly FieldError[],
  retryAfterSeconds?: number,
): FastifyReply {
  const status = ERROR_STATUS[code];
  if (retryAfterSeconds !== undefined)
    void reply.header('retry-after', String(Math.max(1, Math.ceil(retryAfterSeconds))));
  return reply
    .code(status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(problemBody(reply.request.id, code, status, detail, errors));
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/**
 * The most field errors one answer lists. Validation reports every failing value, and a body of a few
 * megabytes within its limits can fail in a hundred thousand places: listed whole (twice, in `errors`
 * and `detail`), 2 MB of bad positions would make a 30 MB answer and hold the event loop for seconds.
 */
export const MAX_LISTED_FIELD_ERRORS = 1000;

/**
 * Ajv's errors as `{path, message}` with JSON pointers rooted at the request part that failed: the
 * first `MAX_LISTED_FIELD_ERRORS` distinct ones.
 */
export function fieldErrors(validation: readonly AjvError[], context: string): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of validation) {
    if (out.length === MAX_LISTED_FIELD_ERRORS) break;
    let path = `/${context}${e.instancePath}`;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties' && typeof e.params['additionalProperty'] === 'string') {
      path = `${path}/${e.params['additionalProperty']}`;
      message = 'is not a known field';
    } else if (e.keyword === 'required' && typeof e.params['missingProperty'] === 'string') {
      path = `${path}/${e.params['missingProperty']}`;
      message = 'is required';
    }
    // anyOf/oneOf repeat one failure per branch; keep the first per path so the list stays readable.
    const key = `${path}\u0000${e.keyword === 'anyOf' || e.keyword === 'oneOf' ? '' : message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path, message });
  }
  return out;
}

/** Fastify's own errors for unusable input, each to a 4xx: bad input never becomes a 5xx. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'MALFORMED_BODY',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'MALFORMED_BODY',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'MALFORMED_BODY',
  FST_ERR_CTP_EMPTY_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_BAD_URL: 'ROUTE_NOT_FOUND',
  FST_ERR_ASYNC_CONSTRAINT: 'VALIDATION_FAILED',
};

/**
 * A JSON body as the service reads it: its shape checked against `limits` (a route's: `jsonBodyLimitsOf`)
 * on the raw bytes before it is parsed (PAYLOAD_TOO_LARGE, naming where), an empty body is no body (many
 * clients send the JSON content type on bodiless requests), and prototype-poisoning keys are refused
 * (MALFORMED_BODY).
 */
export function parseJsonBody(body: Buffer | string, limits?: JsonBodyLimits): unknown {
  const breach =
    limits === undefined
      ? undefined
      : findJsonLimitBreach(typeof body === 'string' ? Buffer.from(body) : body, limits);
  if (breach !== undefined)
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `The body holds more than this route takes: ${breach.path} ${breach.message}`,
      { errors: [breach] },
    );
  const text = typeof body === 'string' ? body : body.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return secureJson.parse(text, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    throw new AppError(
      'MALFORMED_BODY',
      `The body is not valid JSON: ${error instanceof Error ? error.message : 'parse error'}`,
    );
  }
}

interface Exhaustion {
  readonly detail: string;
  readonly retryAfterSeconds: number;
}
const STORAGE_FULL: Exhaustion = {
  detail: 'The service has run out of storage space; try again later',
  retryAfterSeconds: 60,
};
const DATABASE_RESOURCES: Exhaustion = {
  detail: 'The database has run out of a resource it needs; try again later',
  retryAfterSeconds: 30,
};
/**
 * PostgreSQL's class 53 (insufficient resources; its own writes to a full disk, PGlite's included, fail
 * as 53100) and the file system's "no space left" (Node's ENOSPC, EDQUOT for a quota): the request did
 * nothing wrong, and the same request can work once space or connections are freed, so it is a 503
 * with when to try again.
 */
const EXHAUSTED: Readonly<Record<string, Exhaustion>> = {
  '53000': DATABASE_RESOURCES,
  '53100': STORAGE_FULL,
  '53200': { detail: 'The database is out of memory; try again in a moment', retryAfterSeconds: 10 },
  '53300': {
    detail: 'The database has no connection free; try again in a moment',
    retryAfterSeconds: 5,
  },
  '53400': DATABASE_RESOURCES,
  ENOSPC: STORAGE_FULL,
  EDQUOT: STORAGE_FULL,
};

/** The resource an error says is exhausted (its own code or one of its causes'), or undefined. */
export function resourceExhaustion(error: unknown): Exhaustion | undefined {
  let at = error;
  for (let hops = 0; hops < 5 && typeof at === 'object' && at !== null; hops++) {
    const { code, cause } = at as { code?: unknown; cause?: unknown };
    if (typeof code === 'string') {
      const found = EXHAUSTED[code] ?? (/^53[0-9A-Z]{3}$/.test(code) ? DATABASE_RESOURCES : undefined);
      if (found !== undefined) return found;
    }
    at = cause;
  }
  return undefined;
}

/** One error handler for the whole service; every error leaves as problem+json. */
export function installProblemHandling(app: FastifyInstance): void {
  app.addSchema(FieldErrorSchema);
  app.addSchema(ProblemSchema);

  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(null, parseJsonBody(body, jsonBodyLimitsOf(request)));
    } catch (error) {
      done(error as AppError, undefined);
    }
  });

  // NOTE: form bodies (as OAuth-style clients send them) become an object of strings, and other text
  // types (`text/json`, sent by some clients) a string; routes' schemas still decide, so anything but
  // the object they describe answers 422. Text/plain is Fastify's own parser.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      // One field is one key of the object it becomes: bounded as a JSON object's keys are.
      const breach = findFormLimitBreach(text, {
        fields: jsonBodyLimitsOf(request).keysPerObject,
        brackets: Number.POSITIVE_INFINITY,
      });
      if (breach !== undefined) {
        done(
          new AppError('PAYLOAD_TOO_LARGE', `The body holds more than this route takes: ${breach.message}`, {
            errors: [breach],
          }),
          undefined,
        );
        return;
      }
      // fromEntries defines own properties: a `__proto__` field cannot reach the prototype.
      done(null, Object.fromEntries(new URLSearchParams(text)));
    },
  );
  app.addContentTypeParser(/^text\/(?!plain\b)[\w.+-]+/i, { parseAs: 'string' }, (_request, body, done) => {
    done(null, typeof body === 'string' ? body : body.toString('utf8'));
  });

  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    const exhausted = error instanceof AppError && error.status < 500 ? undefined : resourceExhaustion(error);
    if (exhausted !== undefined) {
      // An operator must free space or connections: logged as an error, not a client's fault.
      request.log.error({ err: error }, 'a resource is exhausted');
      return sendProblem(
        reply,
        'SERVICE_UNAVAILABLE',
        exhausted.detail,
        undefined,
        exhausted.retryAfterSeconds,
      );
    }
    if (error instanceof AppError) {
      if (error.status >= 500) request.log.error({ err: error }, error.message);
      return sendProblem(reply, error.code, error.message, error.errors, error.retryAfterSeconds);
    }
    if (error.validation !== undefined) {
      const errors = fieldErrors(error.validation, error.validationContext ?? 'body');
      const more = errors.length === MAX_LISTED_FIELD_ERRORS ? '; and more' : '';
      const detail = `The request is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}${more}`;
      return sendProblem(reply, 'VALIDATION_FAILED', detail, errors);
    }
    const mapped = FASTIFY_CODES[error.code];
    if (mapped !== undefined) return sendProblem(reply, mapped, error.message);
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      // Other client errors raised by plugins keep their status but still speak problem+json.
      const status = error.statusCode;
      return reply
        .code(status)
        .type(PROBLEM_CONTENT_TYPE)
        .send(problemBody(request.id, 'BAD_REQUEST', status, error.message));
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'the database is unavailable');
      return sendProblem(
        reply,
        'SERVICE_UNAVAILABLE',
        'The database is unavailable; try again in a moment',
        undefined,
        2,
      );
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(
      reply,
      'INTERNAL',
      'An unexpected error occurred; it has been logged with this request id.',
    );
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, 'ROUTE_NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0] ?? ''}`),
  );
}

/**
 * Answers what Node's HTTP parser rejects before Fastify sees a request (headers beyond the size limit,
 * an unparsable request line, a client too slow to send its headers) as problem+json with a request id
 * and the CORS headers, like every other error; Fastify's default writes bare JSON.
 */
export function createClientErrorHandler(
  nextRequestId: () => string,
  exposedHeaders: readonly string[],
): (error: Error & { code?: string }, socket: Socket) => void {
  const exposed = exposedHeaders.join(', ');
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, code, detail] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'HEADERS_TOO_LARGE', 'The request line and headers exceed the size this service accepts']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'REQUEST_TIMEOUT', 'The request was not received in time']
          : [400, 'BAD_REQUEST', 'The request could not be parsed as HTTP'];
    const id = nextRequestId();
    const body = JSON.stringify(problemBody(id, code, status, detail));
    if (socket.writable)
      socket.write(
        [
          `HTTP/1.1 ${String(status)} ${STATUS_CODES[status] ?? 'Error'}`,
          `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
          `Content-Length: ${String(Buffer.byteLength(body))}`,
          `x-request-id: ${id}`,
          'Access-Control-Allow-Origin: *',
          `Access-Control-Expose-Headers: ${exposed}`,
          'Connection: close',
          '',
          body,
        ].join('\r\n'),
      );
    socket.destroy(error);
  };
}
