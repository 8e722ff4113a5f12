/** Mileage budgets: a policyholder's monthly target, never billed, read with this London month's distance. */
import type { Clock } from '../../platform/clock.ts';
import { notFound } from '../../platform/errors.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { sumJourneyMetres } from '../journeys/index.ts';
import { capMetres } from '../products/index.ts';
import { londonPeriodsOf } from './rules/usage-alerts.ts';
import {
  findPolicyProduct,
  findPolicyUsageSettings,
  upsertMileageBudget,
  type PolicyUsageSettings,
} from './usage-repository.ts';
import type { MileageBudget, MileageBudgetInput } from './usage-schemas.ts';

/** Who reads or sets a budget: the company's client, or a policyholder (their own policies only). */
export type BudgetReader =
  { readonly kind: 'client' } | { readonly kind: 'policyholder'; readonly userId: string };

/** GET and PUT of a policy's budget; `onBudgetSet` hears the policy whose budget changed. */
export function createMileageBudgetService(deps: {
  db: Executor;
  clock: Clock;
  onBudgetSet: (policyId: string) => void;
}) {
  const { db, clock } = deps;

  /** The tenant's policy, if the reader may see it (another policyholder's answers 404). */
  async function readablePolicy(
    tenant: Tenant,
    reader: BudgetReader,
    reference: string,
  ): Promise<PolicyUsageSettings> {
    const policy = await findPolicyUsageSettings(db, tenant, reference);
    if (policy === undefined || (reader.kind === 'policyholder' && policy.userId !== reader.userId))
      throw notFound('policy');
    return policy;
  }

  async function budgetView(policy: PolicyUsageSettings, now: Date): Promise<MileageBudget> {
    const { budget } = policy;
    if (budget === null) throw notFound('mileage budget');
    const periods = londonPeriodsOf(now);
    const metres = await sumJourneyMetres(db, policy.id, periods.monthStartAt, periods.monthEndAt);
    return {
      policy_reference: policy.policyReference,
      distance_per_month: Number(budget.distancePerMonth),
      usage_unit: budget.usageUnit,
      month: periods.month,
      distance_this_month_in_metres: metres,
      exceeded: metres > capMetres(budget.distancePerMonth, budget.usageUnit),
    };
  }

  return {
    /** GET /policys/:ref/mileage-budget: the budget and this London month's distance; 404 when none is set. */
    async getBudget(tenant: Tenant, reader: BudgetReader, reference: string): Promise<MileageBudget> {
      return budgetView(await readablePolicy(tenant, reader, reference), clock.now());
    },

    /**
     * PUT /policys/:ref/mileage-budget: sets or replaces the budget, in the unit of the policy's
     * registered product (miles without one); the unit is kept with the budget.
     */
    async setBudget(
      tenant: Tenant,
      reader: BudgetReader,
      reference: string,
      input: MileageBudgetInput,
    ): Promise<MileageBudget> {
      const policy = await readablePolicy(tenant, reader, reference);
      const product = await findPolicyProduct(db, tenant, policy.productReference);
      const now = clock.now();
      const budget = {
        // The number's shortest decimal text: exact, never a binary float's expansion.
        distancePerMonth: String(input.distance_per_month),
        usageUnit: product?.usageUnit ?? 'mile',
        updatedAt: now,
      };
      await upsertMileageBudget(db, tenant, policy.id, { ...budget, at: now });
      deps.onBudgetSet(policy.id);
      return budgetView({ ...policy, budget }, now);
    },
  };
}
