import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { problemResponses } from '../../platform/http/problem.ts';
import { ClientHeadersSchema, tenantOf, type ClientAuth } from '../companies/index.ts';
import { LOGO_MAX_BYTES } from './template-logo.ts';
import {
  CreateDocumentTemplateSchema,
  DocumentTemplateListSchema,
  DocumentTemplateParamsSchema,
  DocumentTemplateSchema,
} from './template-schemas.ts';
import type { TemplateService } from './template-service.ts';

const security = [{ clientId: [], clientSecret: [] }];
const tags = ['documents'];

/** What a logo may do where a browser opens it: nothing but draw (an SVG's scripts were refused too). */
const LOGO_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

/** Document templates: the company's name, insurer, colour and logo on its documents, in versions. */
export function templateRoutes(deps: {
  templates: TemplateService;
  clientAuth: ClientAuth;
}): FastifyPluginAsyncTypebox {
  const { templates, clientAuth } = deps;
  return async (app) => {
    app.addSchema(DocumentTemplateSchema);
    const onRequest = clientAuth();
    const headers = ClientHeadersSchema;

    app.get(
      '/document-templates',
      {
        onRequest,
        schema: {
          operationId: 'documentTemplates.list',
          tags,
          summary: 'List document template versions',
          description:
            'Every version of the company’s document templates (company-wide and per product), newest first, each saying whether documents made today use it, and the defaults from the company’s name used while none is in effect. Client credentials, or a staff session of `admin`.',
          security,
          headers,
          response: { 200: DocumentTemplateListSchema, ...problemResponses(401, 403) },
        },
      },
      async (request) => templates.list(tenantOf(request)),
    );

    app.post(
      '/document-templates',
      {
        onRequest,
        // NOTE: a logo is up to 256 KiB, about 350,000 characters of base64 in one string.
        config: { jsonBodyLimits: { stringCharacters: Math.ceil(LOGO_MAX_BYTES / 3) * 4 + 16 } },
        schema: {
          operationId: 'documentTemplates.create',
          tags,
          summary: 'Add a document template version',
          description:
            'A new version of the company-wide template (no `product_reference`) or of one registered product’s, effective from `effective_from` (a Europe/London day, default today; never before the latest version of the same scope). Documents made on or after that day for a policy of the product use the product’s version in effect, else the company-wide one, else the defaults; documents already issued never change. A logo is sent base64 in `logo.data_base64` and refused with 422 naming what is wrong (size, PNG signature or decoding, SVG scripts, event handlers, `foreignObject`, outside references). Audited. Client credentials, or a staff session of `admin`.',
          security,
          headers,
          body: CreateDocumentTemplateSchema,
          response: { 201: Type.Ref('DocumentTemplate'), ...problemResponses(401, 403, 413, 422) },
        },
      },
      async (request, reply) => {
        const created = await templates.create(tenantOf(request), request.body);
        return reply
          .code(201)
          .header('location', `/document-templates/${String(created.version)}`)
          .send(created);
      },
    );

    app.get(
      '/document-templates/:version/logo',
      {
        onRequest,
        schema: {
          operationId: 'documentTemplates.logo',
          tags,
          summary: 'Read a template version’s logo',
          description:
            'The logo file as uploaded (`image/png` or `image/svg+xml`). A version of another company, or one without a logo, answers 404. Client credentials, or a staff session of `admin`.',
          security,
          headers,
          params: DocumentTemplateParamsSchema,
          response: {
            200: {
              description: 'The logo.',
              content: {
                'image/png': { schema: Type.String({ format: 'binary' }) },
                'image/svg+xml': { schema: Type.String({ format: 'binary' }) },
              },
            },
            ...problemResponses(401, 403, 404, 422),
          },
        },
      },
      async (request, reply) => {
        const logo = await templates.logo(tenantOf(request), Number(request.params.version));
        // A version's logo never changes: cached privately, as the request carried credentials.
        return reply
          .type(logo.mediaType)
          .header('content-security-policy', LOGO_CSP)
          .header('x-content-type-options', 'nosniff')
          .header('cache-control', 'private, max-age=86400, immutable')
          .header('etag', `"${logo.sha256}"`)
          .header('content-disposition', 'inline')
          .send(Buffer.from(logo.bytes.buffer, logo.bytes.byteOffset, logo.bytes.byteLength) as never);
      },
    );
  };
}
