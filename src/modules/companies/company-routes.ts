import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../../platform/errors.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import {
  CompanyCredentialsSchema,
  CompanyListSchema,
  CompanyReferenceParamsSchema,
  CompanySummarySchema,
  CreateCompanySchema,
  ListCompaniesQuerySchema,
  RotateSecretsSchema,
} from './company-schemas.ts';
import { ClientHeadersSchema, tenantOf, type ClientAuth } from './client-auth.ts';
import type { CompanyService } from './company-service.ts';

/** Client route: lets an integrator check its credentials and see which company and environment they reach. */
export function currentCompanyRoutes(deps: {
  companies: CompanyService;
  clientAuth: ClientAuth;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/companies/current',
      {
        onRequest: deps.clientAuth(),
        schema: {
          operationId: 'companies.current',
          tags: ['companies'],
          summary: 'The company the client credentials belong to',
          description:
            'Answers 200 when `client_id`, `client_secret` and `environment` are valid together; 401 otherwise.',
          security: [{ clientId: [], clientSecret: [] }],
          headers: ClientHeadersSchema,
          response: {
            200: Type.Object({
              company_reference: Type.String(),
              name: Type.String(),
              environment: Type.String(),
            }),
            ...problemResponses(401, 422),
          },
        },
      },
      async (request) => {
        const tenant = tenantOf(request);
        const company = await deps.companies.findById(tenant.companyId);
        if (company === undefined) throw notFound('company');
        return {
          company_reference: company.company_reference,
          name: company.name,
          environment: tenant.environment,
        };
      },
    );
  };
}

/** Admin routes for tenants: behind `Authorization: Bearer <ADMIN_API_KEY>`. */
export function companyRoutes(deps: {
  companies: CompanyService;
  adminAuth: onRequestAsyncHookHandler;
}): FastifyPluginAsyncTypebox {
  const { companies, adminAuth } = deps;
  return async (app) => {
    app.addSchema(CompanyCredentialsSchema);
    app.addSchema(CompanySummarySchema);
    app.addHook('onRequest', adminAuth);
    const security = [{ adminKey: [] }];

    app.post(
      '/admin/companies',
      {
        schema: {
          operationId: 'companies.create',
          tags: ['admin'],
          summary: 'Create a company (tenant)',
          description:
            'Creates a company with a public `client_id`, a production secret and a sandbox secret. The secrets are in this response only; Milepost keeps their SHA-256 hashes.',
          security,
          body: CreateCompanySchema,
          response: { 201: Type.Ref('CompanyCredentials'), ...problemResponses(401, 422) },
        },
      },
      async (request, reply) => {
        const created = await companies.create(request.body.name, request.body.contact_email);
        return reply
          .code(201)
          .header('location', `/admin/companies/${encodeURIComponent(created.company_reference)}`)
          .send(created);
      },
    );

    app.get(
      '/admin/companies',
      {
        schema: {
          operationId: 'companies.list',
          tags: ['admin'],
          summary: 'List companies',
          description:
            'Companies in reference order, without secrets. Page with `after` = the previous `next_cursor`.',
          security,
          querystring: ListCompaniesQuerySchema,
          response: { 200: CompanyListSchema, ...problemResponses(401, 422) },
        },
      },
      async (request) => companies.list({ limit: request.query.limit ?? 100, after: request.query.after }),
    );

    app.get(
      '/admin/companies/:company_reference',
      {
        schema: {
          operationId: 'companies.get',
          tags: ['admin'],
          summary: 'Read a company',
          security,
          params: CompanyReferenceParamsSchema,
          response: { 200: Type.Ref('CompanySummary'), ...problemResponses(401, 404) },
        },
      },
      async (request) => {
        const company = await companies.findByReference(request.params.company_reference);
        if (company === undefined) throw notFound('company');
        return company;
      },
    );

    app.post(
      '/admin/companies/:company_reference/secrets/rotate',
      {
        schema: {
          operationId: 'companies.rotateSecrets',
          tags: ['admin'],
          summary: 'Rotate client secrets',
          description:
            'Issues new secrets (both, or the one named by `environment`). Old secrets stop working at once in this process and within 5 seconds in others. The `client_id` is kept.',
          security,
          params: CompanyReferenceParamsSchema,
          body: RotateSecretsSchema,
          response: { 200: Type.Ref('CompanyCredentials'), ...problemResponses(401, 404, 422) },
        },
      },
      async (request) =>
        companies.rotateSecrets(request.params.company_reference, request.body?.environment ?? undefined),
    );
  };
}
