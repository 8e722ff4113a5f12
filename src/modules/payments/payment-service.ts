import type { Tenant } from '../companies/index.ts';
import type { PaymentRecordView, PolicyPaymentHooks } from '../policies/index.ts';
import { createCardService, recordBinding, verifyBinding } from './card-service.ts';
import { createChargeService } from './charge-service.ts';
import { createDirectDebitService } from './direct-debit-service.ts';
import { createDunningService } from './dunning-service.ts';
import {
  COLLECT_DUE_QUEUE,
  createPaymentContext,
  paymentView,
  policyOf,
  RECONCILE_COLLECTIONS_QUEUE,
  SETTLE_QUEUE,
  type PaymentDeps,
} from './payment-context.ts';
import { listPaymentsOfPolicy } from './payment-repository.ts';
import { handleWebhook } from './processor-webhook-service.ts';
import { createQuotePayments } from './quote-payments.ts';
import { settleChange } from './settlement-service.ts';

export {
  COLLECT_DUE_QUEUE,
  RECONCILE_COLLECTIONS_QUEUE,
  SETTLE_QUEUE,
  type ChargeOutcome,
  type PaymentGateways,
} from './payment-context.ts';

/**
 * Card payments: intents for new business, binding checks, charges and refunds for adjustments and
 * cancellations, statement charges with dunning, saved cards, and processor webhooks. Every processor
 * write carries an idempotency key made from our own payment ids, and no processor call is made while
 * a database transaction is open. Each family of use cases lives in its own file; this composes them.
 */
export function createPaymentService(deps: PaymentDeps) {
  deps.jobs.define({
    name: SETTLE_QUEUE,
    options: {
      retryLimit: 10,
      retryDelay: 30,
      retryBackoff: true,
      retryDelayMax: 3600,
      expireInSeconds: 300,
    },
  });
  deps.jobs.define({ name: COLLECT_DUE_QUEUE, options: { retryLimit: 1, expireInSeconds: 900 } });
  deps.jobs.define({
    name: RECONCILE_COLLECTIONS_QUEUE,
    options: { retryLimit: 1, expireInSeconds: 1800 },
  });
  const ctx = createPaymentContext(deps);

  const hooks: PolicyPaymentHooks = {
    verifyBinding: (...args) => verifyBinding(ctx, ...args),
    recordBinding: (...args) => recordBinding(ctx, ...args),
    settleChange: (...args) => settleChange(ctx, ...args),
    async listForPolicy(executor, tenant, policyId) {
      // A payment's policy_version_id is a foreign key to this policy's versions, so it can be shown as is.
      const payments = await listPaymentsOfPolicy(executor, tenant, policyId);
      return payments.filter((p) => p.purpose !== 'intent').map((p) => paymentView(p, p.policyVersionId));
    },
  };

  return {
    hooks,
    ...createCardService(ctx),
    ...createChargeService(ctx),
    ...createDunningService(ctx),
    directDebit: createDirectDebitService(ctx, deps.publishableKey),
    quotePayments: createQuotePayments(ctx),

    handleWebhook: (rawBody: string | Uint8Array, signature: string | undefined) =>
      handleWebhook(ctx, rawBody, signature),

    async listForPolicyReference(tenant: Tenant, policyReference: string): Promise<PaymentRecordView[]> {
      const policy = await policyOf(ctx, tenant, policyReference);
      return hooks.listForPolicy(ctx.db, tenant, policy.id);
    },
  };
}

export type PaymentService = ReturnType<typeof createPaymentService>;
