import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import type { Clock } from '../../platform/clock.ts';
import { notFound } from '../../platform/errors.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import type { Executor } from '../../schema.ts';
import { findCompanyByReference } from '../companies/index.ts';
import { minimisesPositions, setMinimisesPositions } from './position-minimisation.ts';

const CompanyParamsSchema = Type.Object(
  { company_reference: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

const TelematicsSettingsSchema = Type.Object(
  {
    minimise_positions: Type.Boolean({
      description:
        'Delete each trip’s raw positions once it is cut and scored, keeping its journey (the coarsened route), driving events and score (EDPB Guidelines 01/2020 on connected vehicles). Positions arriving later inside such a trip are dropped. Default false.',
    }),
  },
  { additionalProperties: false },
);

/** GET and PUT /admin/companies/:company_reference/telematics: the company's data minimisation setting. */
export function minimisationRoutes(deps: {
  db: Executor;
  clock: Clock;
  adminAuth: onRequestAsyncHookHandler;
}): FastifyPluginAsyncTypebox {
  const { db, clock, adminAuth } = deps;
  // The setting is the company's, in both environments.
  const companyId = async (reference: string): Promise<string> => {
    const company = await findCompanyByReference(db, reference);
    if (company === undefined) throw notFound('company');
    return company.id;
  };
  const schema = {
    tags: ['admin'],
    security: [{ adminKey: [] }],
    params: CompanyParamsSchema,
  };
  return async (app) => {
    app.get(
      '/admin/companies/:company_reference/telematics',
      {
        onRequest: adminAuth,
        schema: {
          ...schema,
          operationId: 'telematics.settings',
          summary: 'Whether the company keeps its trips’ raw positions',
          response: { 200: TelematicsSettingsSchema, ...problemResponses(401, 403, 404) },
        },
      },
      async (request) => ({
        minimise_positions: await minimisesPositions(db, await companyId(request.params.company_reference)),
      }),
    );
    app.put(
      '/admin/companies/:company_reference/telematics',
      {
        onRequest: adminAuth,
        schema: {
          ...schema,
          operationId: 'telematics.setSettings',
          summary: 'Set whether the company keeps its trips’ raw positions',
          description:
            'Applies to trips cut from now on; positions of trips cut before stay until the position retention deletes them.',
          body: TelematicsSettingsSchema,
          response: { 200: TelematicsSettingsSchema, ...problemResponses(401, 403, 404, 422) },
        },
      },
      async (request) => ({
        minimise_positions: await setMinimisesPositions(
          db,
          await companyId(request.params.company_reference),
          request.body.minimise_positions,
          clock.now(),
        ),
      }),
    );
  };
}
