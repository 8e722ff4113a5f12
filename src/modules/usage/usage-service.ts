import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import type { NotificationService } from '../notifications/index.ts';
import { createMileageBudgetService } from './mileage-budget-service.ts';
import { createUsageAlertService, type StoredJourney } from './usage-alert-service.ts';

export type { BudgetReader } from './mileage-budget-service.ts';
export type { StoredJourney } from './usage-alert-service.ts';

/**
 * Mileage budgets (a policyholder's monthly target, never billed) and the usage alerts journeys
 * trigger: budget exceeded, daily cap reached, annual cap reached, each once per period.
 */
export function createUsageService(deps: {
  db: Executor;
  clock: Clock;
  notifications: NotificationService;
  logger: FastifyBaseLogger;
}) {
  const alerts = createUsageAlertService(deps);
  // A budget set here is checked from the next journey on (other processes: after their cache's TTL).
  const budgets = createMileageBudgetService({
    ...deps,
    onBudgetSet: (policyId) => {
      alerts.forget(policyId);
    },
  });
  return {
    ...budgets,
    /** After a journey is stored: the usage alerts it makes due, each once per period; never throws. */
    afterJourney: (tenant: Tenant, journey: StoredJourney): Promise<void> =>
      alerts.afterJourney(tenant, journey),
  };
}

export type UsageService = ReturnType<typeof createUsageService>;
