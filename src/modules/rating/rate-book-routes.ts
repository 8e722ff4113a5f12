import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { DEFAULT_JSON_BODY_LIMITS, type JsonBodyLimits } from '../../platform/http/body-limits.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import '../../platform/http/actor.ts';
import { ClientHeadersSchema, tenantOf, type ClientAuth } from '../companies/index.ts';
import type { VersionActor } from './rate-book-repository.ts';
import {
  CreateRateBookSchema,
  CreateVersionSchema,
  FactorCsvSchema,
  FactorParamsSchema,
  ImportVersionSchema,
  RateBookExportSchema,
  RateBookListSchema,
  RateBookParamsSchema,
  RateBookSchema,
  RateBookVersionSchema,
  RateBookVersionSummarySchema,
  VersionParamsSchema,
} from './rate-book-schemas.ts';
import type { RateBookService } from './rate-book-service.ts';
import { LIMITS } from './rules/rate-book-validation.ts';

const security = [{ clientId: [], clientSecret: [] }];
const tags = ['rate books'];
const CSV_TYPE = 'text/csv';
const headers = ClientHeadersSchema;
const versionRef = Type.Ref('RateBookVersion');

/** A band row's values and keys, the most a factor's row holds: the object, a key and a value for each field. */
const ROW_TOKENS = 1 + 2 * 3;
/**
 * A version's JSON body (written, rewritten, imported) may hold what the validator allows, so that a
 * version with a factor of 10,000 rows (which its CSV route can write) is exported and taken back: twice
 * the rows of all factors, so a body just over is answered by validation naming the field, plus the
 * default allowance for the rest of a version; arrays up to twice a factor's rows or a rule's list; and
 * conditions nested as deep as the validator allows (a rule's condition at depth 8 is 22 levels down).
 */
const VERSION_JSON_LIMITS: Partial<JsonBodyLimits> = {
  depth: 24,
  itemsPerArray: 2 * Math.max(LIMITS.rowsPerFactor, LIMITS.listValues, LIMITS.rules),
  tokens: 2 * LIMITS.rowsInAllFactors * ROW_TOKENS + DEFAULT_JSON_BODY_LIMITS.tokens,
};
/** Bytes of such a body: about 100 bytes a row at its widest, twice over, indented as an editor saves it. */
const VERSION_BODY_LIMIT_BYTES = 16 * 1024 * 1024;
const versionBody = { bodyLimit: VERSION_BODY_LIMIT_BYTES, config: { jsonBodyLimits: VERSION_JSON_LIMITS } };

type App = Parameters<FastifyPluginAsyncTypebox>[0];
interface Context {
  readonly rateBooks: RateBookService;
  readonly onRequest: ReturnType<ClientAuth>;
}

/** Who acts: the signed-in staff member, else the company's integration (client credentials). */
const actorOf = (request: FastifyRequest): VersionActor =>
  request.actor?.kind === 'staff'
    ? { label: `staff:${request.actor.email}`, staffId: request.actor.staffId }
    : { label: 'integration', staffId: null };

const versionPath = (reference: string, number: number): string =>
  `/rate-books/${encodeURIComponent(reference)}/versions/${number}`;

/** Rate books and their versions, per company and environment; staff need the admin role to change them. */
export function rateBookRoutes(deps: {
  rateBooks: RateBookService;
  clientAuth: ClientAuth;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(RateBookVersionSummarySchema);
    app.addSchema(RateBookSchema);
    app.addSchema(RateBookVersionSchema);
    app.addSchema(RateBookExportSchema);
    const ctx: Context = { rateBooks: deps.rateBooks, onRequest: deps.clientAuth() };
    registerRateBooks(app, ctx);
    registerVersions(app, ctx);
    registerApproval(app, ctx);
    registerExchange(app, ctx);
    registerFactorCsv(app, ctx);
  };
}

function registerRateBooks(app: App, { rateBooks, onRequest }: Context): void {
  app.post(
    '/rate-books',
    {
      onRequest,
      schema: {
        operationId: 'rateBooks.create',
        tags,
        summary: 'Register a rate book for a product',
        description:
          'One rate book per product, without versions yet. 409 when the reference is taken or the product has one; 422 `UNKNOWN_PRODUCT` when the product is not the company’s.',
        security,
        headers,
        body: CreateRateBookSchema,
        response: { 201: Type.Ref('RateBook'), ...problemResponses(401, 403, 409, 422) },
      },
    },
    async (request, reply) => {
      const book = await rateBooks.create(tenantOf(request), request.body);
      return reply
        .code(201)
        .header('location', `/rate-books/${encodeURIComponent(book.rate_book_reference)}`)
        .send(book);
    },
  );

  app.get(
    '/rate-books',
    {
      onRequest,
      schema: {
        operationId: 'rateBooks.list',
        tags,
        summary: 'List rate books',
        description:
          'Every rate book of the company and environment, with its versions and the one in force.',
        security,
        headers,
        response: { 200: RateBookListSchema, ...problemResponses(401) },
      },
    },
    async (request) => ({ rate_books: await rateBooks.list(tenantOf(request)) }),
  );

  app.get(
    '/rate-books/:rate_book_reference',
    {
      onRequest,
      schema: {
        operationId: 'rateBooks.get',
        tags,
        summary: 'Read a rate book',
        description: 'Its versions (without their content) and the one in force now. Another company’s: 404.',
        security,
        headers,
        params: RateBookParamsSchema,
        response: { 200: Type.Ref('RateBook'), ...problemResponses(401, 404, 422) },
      },
    },
    async (request) => rateBooks.get(tenantOf(request), request.params.rate_book_reference),
  );
}

function registerVersions(app: App, { rateBooks, onRequest }: Context): void {
  app.post(
    '/rate-books/:rate_book_reference/versions',
    {
      onRequest,
      ...versionBody,
      schema: {
        operationId: 'rateBooks.createVersion',
        tags,
        summary: 'Write a draft version',
        description:
          'A draft, numbered after the last version. 422 names every bad cell of `content` (e.g. `/body/content/factors/2/rows/5/factor`) and an `effective_from` in the past or not after the latest approved version’s.',
        security,
        headers,
        params: RateBookParamsSchema,
        body: CreateVersionSchema,
        response: { 201: versionRef, ...problemResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const reference = request.params.rate_book_reference;
      const version = await rateBooks.createVersion(
        tenantOf(request),
        actorOf(request),
        reference,
        request.body,
      );
      return reply.code(201).header('location', versionPath(reference, version.version_number)).send(version);
    },
  );

  app.get(
    '/rate-books/:rate_book_reference/versions/:version_number',
    {
      onRequest,
      schema: {
        operationId: 'rateBooks.getVersion',
        tags,
        summary: 'Read a version with its tables',
        security,
        headers,
        params: VersionParamsSchema,
        response: { 200: versionRef, ...problemResponses(401, 404, 422) },
      },
    },
    async (request) =>
      rateBooks.getVersion(
        tenantOf(request),
        request.params.rate_book_reference,
        Number(request.params.version_number),
      ),
  );

  app.put(
    '/rate-books/:rate_book_reference/versions/:version_number',
    {
      onRequest,
      ...versionBody,
      schema: {
        operationId: 'rateBooks.updateVersion',
        tags,
        summary: 'Rewrite a draft',
        description:
          'Replaces a draft’s content and `effective_from`; whoever changes it becomes one of its writers, who may not approve it. 409 once it is approved: an approved version never changes.',
        security,
        headers,
        params: VersionParamsSchema,
        body: CreateVersionSchema,
        response: { 200: versionRef, ...problemResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request) =>
      rateBooks.updateVersion(
        tenantOf(request),
        actorOf(request),
        request.params.rate_book_reference,
        Number(request.params.version_number),
        request.body,
      ),
  );
}

function registerApproval(app: App, { rateBooks, onRequest }: Context): void {
  app.post(
    '/rate-books/:rate_book_reference/versions/:version_number/approve',
    {
      onRequest,
      schema: {
        operationId: 'rateBooks.approveVersion',
        tags,
        summary: 'Approve a draft (four eyes)',
        description:
          'By a signed-in staff member with the admin role who wrote none of the draft: 403 `FOUR_EYES_REQUIRED` for its author or anyone who changed it, and for client credentials. It then never changes, and is in force from its `effective_from` (now when it has none). 409 when it is approved already, or its `effective_from` has passed or is not after the latest approved version’s. Audited.',
        security,
        headers,
        params: VersionParamsSchema,
        response: { 200: versionRef, ...problemResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request) =>
      rateBooks.approve(
        tenantOf(request),
        actorOf(request),
        request.params.rate_book_reference,
        Number(request.params.version_number),
      ),
  );
}

function registerExchange(app: App, { rateBooks, onRequest }: Context): void {
  app.get(
    '/rate-books/:rate_book_reference/versions/:version_number/export',
    {
      onRequest,
      schema: {
        operationId: 'rateBooks.exportVersion',
        tags,
        summary: 'Export a version as JSON',
        description: 'A file (`Content-Disposition: attachment`) that `POST …/versions/import` takes back.',
        security,
        headers,
        params: VersionParamsSchema,
        response: { 200: Type.Ref('RateBookExport'), ...problemResponses(401, 404, 422) },
      },
    },
    async (request, reply) => {
      const { rate_book_reference: reference, version_number: number } = request.params;
      const file = await rateBooks.exportVersion(tenantOf(request), reference, Number(number));
      return reply
        .header('content-disposition', `attachment; filename="${reference}-v${number}.json"`)
        .send(file);
    },
  );

  app.post(
    '/rate-books/:rate_book_reference/versions/import',
    {
      onRequest,
      ...versionBody,
      schema: {
        operationId: 'rateBooks.importVersion',
        tags,
        summary: 'Import a version from JSON (a new draft)',
        description:
          'An exported version (of this rate book or another: from sandbox to production, say) becomes a new draft here, numbered after the last, to be approved as any draft. Its `effective_from` is kept while still to come, else dropped (the draft then takes effect at its approval). 422 names every bad cell.',
        security,
        headers,
        params: RateBookParamsSchema,
        body: ImportVersionSchema,
        response: { 201: versionRef, ...problemResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const reference = request.params.rate_book_reference;
      const version = await rateBooks.importVersion(
        tenantOf(request),
        actorOf(request),
        reference,
        request.body,
      );
      return reply.code(201).header('location', versionPath(reference, version.version_number)).send(version);
    },
  );
}

function registerFactorCsv(app: App, { rateBooks, onRequest }: Context): void {
  const path = '/rate-books/:rate_book_reference/versions/:version_number/factors/:factor_name';
  app.get(
    path,
    {
      onRequest,
      schema: {
        operationId: 'rateBooks.exportFactor',
        tags,
        summary: 'A rating factor’s table as CSV',
        security,
        headers,
        params: FactorParamsSchema,
        response: {
          200: { description: 'The table', content: { [CSV_TYPE]: { schema: FactorCsvSchema } } },
          ...problemResponses(401, 404, 422),
        },
      },
    },
    async (request, reply) => {
      const { rate_book_reference: reference, version_number: number, factor_name: name } = request.params;
      const { csv, filename } = await rateBooks.exportFactorCsv(
        tenantOf(request),
        reference,
        Number(number),
        name,
      );
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${filename.replaceAll('"', '')}"`)
        .send(csv);
    },
  );

  app.put(
    path,
    {
      onRequest,
      schema: {
        operationId: 'rateBooks.importFactor',
        tags,
        summary: 'Replace a rating factor’s table in a draft from CSV',
        description:
          'The factor keeps its name, source, kind and what it applies to; its rows become the CSV’s. 422 names each bad cell as `/body/<row>/<column>`; 409 once the version is approved; 404 for a factor the version does not have (add one with `PUT …/versions/:n` in JSON).',
        security,
        headers,
        params: FactorParamsSchema,
        body: { content: { [CSV_TYPE]: { schema: FactorCsvSchema } } },
        response: { 200: versionRef, ...problemResponses(401, 403, 404, 409, 415, 422) },
      },
    },
    async (request) => {
      const { rate_book_reference: reference, version_number: number, factor_name: name } = request.params;
      return rateBooks.importFactorCsv(
        tenantOf(request),
        actorOf(request),
        reference,
        Number(number),
        name,
        // Fastify has validated the CSV body as a string; the provider infers nothing from a per-type body.
        request.body as string,
      );
    },
  );
}
