import type { FastifyBaseLogger } from 'fastify';
import type { PaymentEvent, PaymentGateway } from '../../integrations/payments/index.ts';
import type { Clock } from '../../platform/clock.ts';
import { notFound } from '../../platform/errors.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import { fromPence } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import { findSandboxKey, type DataEnvironment, type Tenant } from '../companies/index.ts';
import type { NotificationService } from '../notifications/index.ts';
import {
  findPolicy,
  findPolicyReference,
  type PaymentRecordView,
  type PolicyRecord,
} from '../policies/index.ts';
import type { PaymentRecord } from './payment-repository.ts';

export const SETTLE_QUEUE = 'payments.settle';
export const COLLECT_DUE_QUEUE = 'payments.collect-due';
/** The hourly sweep of Direct Debits still processing long after their day (lost webhooks). */
export const RECONCILE_COLLECTIONS_QUEUE = 'payments.reconcile-collections';
export const PROVIDER = 'stripe';
export const CURRENCY = 'GBP';
/** How long after an `unknown` outcome the charge is replayed (same idempotency key) to learn what happened. */
export const RECONCILE_AFTER_MS = 10 * 60_000;

/** Resolves the processor per environment: Stripe in production, the built-in sandbox otherwise. */
export interface PaymentGateways {
  /** In the sandbox, `sandboxKey` names the company's own sandbox account. */
  forEnvironment(environment: DataEnvironment, sandboxKey?: string): PaymentGateway;
  /** Verifies a processor webhook against each environment's signing secret. */
  verifyWebhook(
    rawBody: string | Uint8Array,
    signature: string | undefined,
  ): { environment: DataEnvironment; event: PaymentEvent };
}

export interface ChargeOutcome {
  readonly payment_amount: number | null;
  readonly error_message?: string;
  readonly payment_reference: string;
  readonly status: PaymentRecord['status'];
}

/** What the payment service is built from (see `createPaymentService`). */
export interface PaymentDeps {
  readonly db: Executor;
  readonly clock: Clock;
  readonly jobs: Jobs;
  readonly gateways: PaymentGateways;
  readonly notifications: NotificationService;
  readonly logger: FastifyBaseLogger;
  readonly retryDays?: readonly number[];
  /**
   * How long an attempt in progress holds its payment (PAYMENT_LEASE_SECONDS). A process that dies
   * mid-attempt leaves the payment `pending` with this lease, after which the reconciler replays the
   * attempt under the same idempotency key (the processor answers with the original charge, or makes it
   * if it never arrived), so a lease shorter than a processor call costs a replay, never a second charge.
   */
  readonly leaseMs: number;
  /** Stripe's publishable key for production browsers (a SetupIntent's confirmation); none in the sandbox. */
  readonly publishableKey?: string | undefined;
}

/** The dependencies every use case of the payment service shares, with the processor of a tenant. */
export interface PaymentContext extends PaymentDeps {
  /** The processor of the tenant's environment: in the sandbox, the company's own sandbox account. */
  gateway(tenant: Tenant): Promise<PaymentGateway>;
  /** Until when an attempt starting at `now` holds its payment. */
  leaseUntil(now: Date): Date;
}

export function createPaymentContext(deps: PaymentDeps): PaymentContext {
  // A company's sandbox key never changes: read once per process.
  const sandboxKeys = new Map<string, string>();
  const gateway = async (tenant: Tenant): Promise<PaymentGateway> => {
    if (tenant.environment === 'production') return deps.gateways.forEnvironment('production');
    let key = sandboxKeys.get(tenant.companyId);
    if (key === undefined) {
      key = await findSandboxKey(deps.db, tenant.companyId);
      if (key === undefined) throw notFound('company');
      sandboxKeys.set(tenant.companyId, key);
    }
    return deps.gateways.forEnvironment(tenant.environment, key);
  };
  return { ...deps, gateway, leaseUntil: (now) => new Date(now.getTime() + deps.leaseMs) };
}

/** The tenant's policy by reference; 404 when there is none. */
export async function policyOf(
  ctx: PaymentContext,
  tenant: Tenant,
  reference: string,
): Promise<PolicyRecord> {
  const policy = await findPolicy(ctx.db, tenant, reference);
  if (policy === undefined) throw notFound('policy');
  return policy;
}

export const policyReferenceOf = async (
  executor: Executor,
  policyId: string | null,
): Promise<string | null> =>
  policyId === null ? null : ((await findPolicyReference(executor, policyId)) ?? null);

/** The fields every payment event carries (the webhook catalogue's `payment.*` payloads). */
export const eventBase = async (executor: Executor, payment: PaymentRecord) => ({
  payment_reference: payment.id,
  policy_reference: await policyReferenceOf(executor, payment.policyId),
  policy_version_reference: payment.policyVersionId,
  amount: fromPence(payment.amountPence),
  currency: payment.currency,
});

/** A payment record as the API shows it (the policy object's `payments`, GET /payments). */
export const paymentView = (p: PaymentRecord, versionRef: string | null): PaymentRecordView => ({
  payment_reference: p.id,
  type: p.kind,
  purpose: p.purpose,
  status: p.status,
  amount: fromPence(p.amountPence),
  refunded_amount: fromPence(p.refundedPence),
  currency: p.currency,
  policy_version_reference: versionRef,
  payment_provider: p.provider,
  provider_payment_reference: p.providerPaymentId,
  payment_method_id: p.paymentMethodId,
  decline_code: p.declineCode,
  error_message: p.errorMessage,
  attempts: p.attempts,
  next_attempt_at: p.nextAttemptAt?.toISOString() ?? null,
  created_at: p.createdAt.toISOString(),
  method_type: p.methodType,
  collect_on: p.collectOn,
});
