import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import type { PaymentBlock, PaymentRecordView } from './policy-schemas.ts';
import type { PolicySnapshot } from './rules/policy-versions.ts';

/** A payment checked with the processor before a policy is bound; opaque to the policies module. */
export type BindingPayment = { readonly __binding: true } & object;

export interface PolicyChange {
  readonly kind: 'adjustment' | 'cancellation';
  readonly policyId: string;
  readonly policyVersionId: string;
  readonly previous: PolicySnapshot;
  readonly next: PolicySnapshot;
  readonly effectiveAt: Date;
  /** `payment.payment_amount` when the client gave one (pounds; negative is a refund). */
  readonly paymentAmount: number | undefined;
  /** The versions of the term changed: its premium was paid with the first of them (nb or rn). */
  readonly termVersionIds: readonly string[];
  /**
   * When the term's contract was concluded: its new business or renewal version written, and its
   * documents issued. A cancellation's cooling-off period runs from it, or from the start if later.
   */
  readonly concludedAt: Date;
}

/**
 * What the policies module asks of card payments, implemented by the payments module and wired by the
 * container. The policies module never calls a processor itself.
 */
/** What settling a change does: a charge to the card on file, or a refund to the card that paid. */
export interface ChangeSettlement {
  readonly kind: 'charge' | 'refund';
  readonly amountPence: number;
}

export interface PolicyPaymentHooks {
  /**
   * Before the transaction: checks the payment block of a new policy or a renewal with the processor
   * against the term's upfront premium (pounds); 422 on a mismatch. Undefined when no payment was sent.
   */
  verifyBinding(
    tenant: Tenant,
    block: PaymentBlock | undefined,
    upfrontPremium: number,
  ): Promise<BindingPayment | undefined>;
  /** In the policy's transaction: records the verified payment against the new policy or renewal. */
  recordBinding(
    trx: Executor,
    tenant: Tenant,
    binding: BindingPayment,
    ids: { policyId: string; policyVersionId: string; userId: string },
    purpose: 'new_business' | 'renewal',
  ): Promise<void>;
  /** In the change's transaction: records the charge or refund an adjustment or cancellation owes, taken after commit. */
  /** Records the charge or refund a change calls for; what it is, or undefined when there is none. */
  settleChange(trx: Executor, tenant: Tenant, change: PolicyChange): Promise<ChangeSettlement | undefined>;
  /** The policy's payment records, for the policy object's `payments`. */
  listForPolicy(db: Executor, tenant: Tenant, policyId: string): Promise<PaymentRecordView[]>;
}

/** For a service run without card payments (tests of other modules, tools): nothing to check or record. */
export const noPaymentHooks: PolicyPaymentHooks = {
  verifyBinding: () => Promise.resolve(undefined),
  recordBinding: () => Promise.resolve(),
  settleChange: () => Promise.resolve(undefined),
  listForPolicy: () => Promise.resolve([]),
};
