import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestAsyncHookHandler } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import type { Executor } from '../../schema.ts';
import { bordereauRoutes } from './bordereau-routes.ts';
import { cashRoutes } from './cash-routes.ts';
import { claimsBordereauRoutes } from './claims-bordereau-routes.ts';
import { renewalCapRoutes } from './renewal-cap-routes.ts';

export interface ReportDeps {
  readonly db: Executor;
  readonly adminAuth: onRequestAsyncHookHandler;
  readonly clock: Clock;
}

/** The finance and pricing reports under `/admin/reports`: the admin key, or a staff session of operations or admin. */
export function reportRoutes(deps: ReportDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(bordereauRoutes(deps));
    await app.register(claimsBordereauRoutes(deps));
    await app.register(cashRoutes(deps));
    await app.register(renewalCapRoutes(deps));
  };
}
