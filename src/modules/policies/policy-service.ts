import { createNewBusiness } from './new-business-service.ts';
import { policyContext, type PolicyServiceDeps } from './policy-context.ts';
import { createPolicyReads, createPolicyViews, type Built } from './policy-read-service.ts';
import { createTermEnds } from './term-end-service.ts';

export type { PolicyServiceDeps } from './policy-context.ts';
export type { CancelInput } from './term-end-service.ts';

export const END_TERMS_QUEUE = 'policies.end-terms';

/**
 * Policies and their versions: creation with the policyholder's account, adjustment, cancellation,
 * renewal, lapse, and reads. Composed of the use-case families: new business and adjustments
 * (new-business-service.ts), renewal, cancellation and lapse (term-end-service.ts), and reads
 * (policy-read-service.ts), which share one context (policy-context.ts) and one row cache.
 */
export function createPolicyService(deps: PolicyServiceDeps) {
  const ctx = policyContext<Built>(deps);
  const { jobs } = deps;
  jobs.define({ name: END_TERMS_QUEUE, options: { retryLimit: 3, retryDelay: 60, expireInSeconds: 3600 } });
  const views = createPolicyViews(ctx);

  return {
    ...createNewBusiness(ctx, views),
    ...createPolicyReads(ctx, views),
    ...createTermEnds(ctx, views),

    async registerWorkers(): Promise<void> {
      await jobs.work(END_TERMS_QUEUE, async () => {
        await this.endTerms();
      });
      await jobs.schedule(END_TERMS_QUEUE, '30 0 * * *', {}, 'Europe/London');
    },
  };
}

export type PolicyService = ReturnType<typeof createPolicyService>;
