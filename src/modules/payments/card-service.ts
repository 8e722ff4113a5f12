import type { PaymentIntent } from '../../integrations/payments/index.ts';
import { AppError, isUniqueViolation, notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { fromPence, requireWholePence, toPence } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import { getPolicyholderName } from '../accounts/index.ts';
import type { Tenant } from '../companies/index.ts';
import type { BindingPayment, PolicyPaymentHooks, PolicyRecord } from '../policies/index.ts';
import { addMandateMethod, mandateMethodView } from './direct-debit-service.ts';
import { clearDefaultMandate, findDefaultMandate } from './mandate-repository.ts';
import { findCustomer, linkCustomer } from './payment-customer-repository.ts';
import {
  COLLECT_DUE_QUEUE,
  CURRENCY,
  policyOf,
  policyReferenceOf,
  PROVIDER,
  type PaymentContext,
} from './payment-context.ts';
import { bringForwardFailed } from './attempt-repository.ts';
import {
  bindIntentPayment,
  findPaymentByProviderId,
  insertPayment,
  listFailedChargesOfPolicy,
  listPaymentsOfPolicy,
  updatePayment,
} from './payment-repository.ts';

interface Binding extends BindingPayment {
  readonly intent: PaymentIntent;
  readonly amountPence: number;
  readonly customerId: string;
  readonly paymentMethodId: string | null;
}

const mismatch = (path: string, message: string): AppError =>
  new AppError('PAYMENT_MISMATCH', `The payment does not match: ${message}`, {
    errors: [{ path: `/body/payment/${path}`, message }],
  });

/** The policyholder's cards: intents for new business, a new card, the card on file, and its details. */
export function createCardService(ctx: PaymentContext) {
  const { db, clock, jobs } = ctx;
  return {
    /** CREATE_PAYMENT_INTENT: a customer and an on-session intent whose card is saved for later charges. */
    createIntent: (
      tenant: Tenant,
      input: {
        amountPence: number;
        productReference: string;
        email?: string | undefined;
        name?: string | undefined;
      },
    ) => createIntent(ctx, tenant, input),

    /** ADD_NEW_PAYMENT_METHOD: attaches the card, makes it the default, and retries what waited for a new card. */
    async addPaymentMethod(
      tenant: Tenant,
      policyReference: string,
      paymentMethodId: string,
    ): Promise<{ payment_method_id: string }> {
      const policy = await policyOf(ctx, tenant, policyReference);
      const customerId = await ensureCustomer(ctx, tenant, policy);
      // A Bacs method from one of the policy's confirmed SetupIntents records its mandate instead.
      const mandate = await addMandateMethod(ctx, tenant, policy, paymentMethodId);
      if (mandate !== undefined) return mandate;
      const method = await (
        await ctx.gateway(tenant)
      ).attachPaymentMethod({
        paymentMethodId,
        customerId,
        idempotencyKey: `attach:${customerId}:${paymentMethodId}`,
      });
      await (await ctx.gateway(tenant)).setDefaultPaymentMethod(customerId, method.id);
      const now = clock.now();
      // The card is the policy's method now: its Direct Debit, if any, stops being the default.
      await clearDefaultMandate(db, policy.id, now);
      // One being tried with the old card right now is left to its attempt, whose decline then sees
      // the new default and brings itself forward (charge-service's retryIfCardChanged).
      for (const waiting of await listFailedChargesOfPolicy(db, tenant, policy.id)) {
        if (waiting.purpose === 'statement' || waiting.purpose === 'adjustment') {
          await bringForwardFailed(db, waiting.id, now);
        }
      }
      await jobs.send(COLLECT_DUE_QUEUE, {});
      return { payment_method_id: method.id };
    },

    /** A saved card as the processor describes it (no number: brand, last 4, expiry), for subject access. */
    async cardDetails(tenant: Tenant, paymentMethodId: string) {
      const method = await (await ctx.gateway(tenant)).retrievePaymentMethod(paymentMethodId);
      return {
        brand: method.brand,
        last4: method.last4,
        exp_month: method.expMonth,
        exp_year: method.expYear,
      };
    },

    /** GET_PAYMENT_METHOD: the default card, or with `refund` the card that paid first (where refunds go). */
    async getPaymentMethod(tenant: Tenant, policyReference: string, refund: boolean) {
      const policy = await policyOf(ctx, tenant, policyReference);
      let methodId: string | null;
      const mandate = refund ? undefined : await findDefaultMandate(db, policy.id);
      if (mandate !== undefined) return mandateMethodView(mandate);
      if (refund) {
        const first = (await listPaymentsOfPolicy(db, tenant, policy.id)).find(
          (p) => p.kind === 'charge' && (p.status === 'succeeded' || p.status === 'refunded'),
        );
        methodId = first?.paymentMethodId ?? null;
      } else {
        methodId = (await (await ctx.gateway(tenant)).retrieveCustomer(await customerOf(ctx, tenant, policy)))
          .defaultPaymentMethodId;
      }
      if (methodId === null) throw notFound('payment method');
      const method = await (await ctx.gateway(tenant)).retrievePaymentMethod(methodId);
      return {
        type: 'GET_PAYMENT_METHOD' as const,
        payment_method_id: method.id,
        method_type: method.type === 'bacs_debit' ? ('bacs_debit' as const) : ('card' as const),
        brand: method.brand,
        last4: method.last4,
        exp_month: method.expMonth,
        exp_year: method.expYear,
        refund,
      };
    },
  };
}

async function createIntent(
  ctx: PaymentContext,
  tenant: Tenant,
  input: {
    amountPence: number;
    productReference: string;
    email?: string | undefined;
    name?: string | undefined;
  },
) {
  const { db } = ctx;
  const now = ctx.clock.now();
  const row = await insertPayment(db, tenant, {
    policyId: null,
    policyVersionId: null,
    kind: 'charge',
    purpose: 'intent',
    status: 'pending',
    amountPence: input.amountPence,
    currency: CURRENCY,
    provider: PROVIDER,
    at: now,
  });
  try {
    const customer = await (
      await ctx.gateway(tenant)
    ).createCustomer({
      email: input.email ?? '',
      name: input.name ?? '',
      metadata: { milepost_payment: row.id },
      idempotencyKey: `payment:${row.id}:customer`,
    });
    const intent = await (
      await ctx.gateway(tenant)
    ).createPaymentIntent({
      amountPence: input.amountPence,
      currency: CURRENCY,
      customerId: customer.id,
      metadata: {
        milepost_payment: row.id,
        product_reference: input.productReference,
        company: tenant.companyId,
        environment: tenant.environment,
      },
      idempotencyKey: `payment:${row.id}:intent`,
    });
    await updatePayment(db, row.id, { providerPaymentId: intent.id, providerCustomerId: customer.id }, now);
    return {
      type: 'CREATE_PAYMENT_INTENT' as const,
      payment_provider_customer_ref: customer.id,
      payment_provider_transaction_ref: intent.id,
      payment_temporary_token: intent.clientSecret,
    };
  } catch (error) {
    await updatePayment(
      db,
      row.id,
      { status: 'canceled', errorMessage: error instanceof Error ? error.message : String(error) },
      now,
    );
    throw error;
  }
}

async function customerOf(ctx: PaymentContext, tenant: Tenant, policy: PolicyRecord): Promise<string> {
  const customerId = await findCustomer(ctx.db, tenant, policy.userId, PROVIDER);
  if (customerId === undefined) {
    throw new AppError('CONFLICT', 'The policy has no card on file: it was created without a payment block');
  }
  return customerId;
}

/**
 * The policyholder's customer at the processor, made now for a policy bound without a card payment
 * (ADD_NEW_PAYMENT_METHOD is how such a policy gets a card). Concurrent calls make one: the
 * processor's create is idempotent per policyholder, and the first link wins.
 */
export async function ensureCustomer(
  ctx: PaymentContext,
  tenant: Tenant,
  policy: PolicyRecord,
): Promise<string> {
  const { db } = ctx;
  const existing = await findCustomer(db, tenant, policy.userId, PROVIDER);
  if (existing !== undefined) return existing;
  const person = await getPolicyholderName(db, policy.userId);
  const customer = await (
    await ctx.gateway(tenant)
  ).createCustomer({
    email: person.email,
    name: `${person.firstNames} ${person.lastNames}`,
    metadata: { milepost_user: policy.userId },
    idempotencyKey: `user:${policy.userId}:customer`,
  });
  await linkCustomer(db, tenant, policy.userId, PROVIDER, customer.id, ctx.clock.now());
  return (await findCustomer(db, tenant, policy.userId, PROVIDER)) ?? customer.id;
}

/**
 * Before the policy's transaction: checks a new policy's or renewal's payment block with the processor
 * against the term's upfront premium (pounds); 422 on a mismatch, 409 when the payment bound another.
 */
export async function verifyBinding(
  ctx: PaymentContext,
  ...[tenant, block, upfrontPremium]: Parameters<PolicyPaymentHooks['verifyBinding']>
): Promise<Binding | undefined> {
  if (block === undefined) return undefined;
  if (block.provider_payment_reference === undefined) {
    // NOTE: a new policy or renewal is paid by a payment the client has already confirmed at the
    // processor (CREATE_PAYMENT_INTENT, then its SDK). Without that payment's id the block's other
    // fields have nothing to check or record, and `payment_amount` alone charges nothing here (only an
    // adjustment's charges the card on file): a block that would be ignored is refused instead.
    const sent = Object.keys(block);
    if (sent.length === 0) return undefined;
    const message = `is required with ${sent.join(', ')}: the block binds a payment confirmed at the processor`;
    throw new AppError(
      'VALIDATION_FAILED',
      `The payment block names no payment: provider_payment_reference ${message}`,
      {
        errors: [{ path: '/body/payment/provider_payment_reference', message }],
      },
    );
  }
  if (block.payment_provider !== undefined && block.payment_provider !== PROVIDER) {
    throw mismatch('payment_provider', `must be "${PROVIDER}"`);
  }
  // A renewal's block reaches here before its policy is validated: an amount finer than a penny is
  // the client's mistake (422), not one to compare in pence.
  if (block.payment_amount !== undefined)
    requireWholePence(block.payment_amount, '/body/payment/payment_amount');
  let intent: PaymentIntent;
  try {
    intent = await (await ctx.gateway(tenant)).retrievePaymentIntent(block.provider_payment_reference);
  } catch (error) {
    if (error instanceof AppError && error.code === 'NOT_FOUND')
      throw mismatch('provider_payment_reference', 'no such payment at the processor');
    throw error;
  }
  const expectedPence = toPence(block.payment_amount ?? upfrontPremium);
  if (intent.status !== 'succeeded')
    throw mismatch('provider_payment_reference', `the payment has not succeeded (status ${intent.status})`);
  if (intent.amountReceivedPence !== expectedPence) {
    throw mismatch(
      'payment_amount',
      `the processor collected ${String(intent.amountReceivedPence)} pence, the policy expects ${String(expectedPence)}`,
    );
  }
  if (
    intent.customerId === null ||
    (block.provider_customer_reference !== undefined &&
      intent.customerId !== block.provider_customer_reference)
  ) {
    throw mismatch('provider_customer_reference', 'the payment belongs to another customer');
  }
  if (
    block.payment_method_id !== undefined &&
    intent.paymentMethodId !== null &&
    intent.paymentMethodId !== block.payment_method_id
  ) {
    throw mismatch('payment_method_id', 'the payment was made with another card');
  }
  const existing = await findPaymentByProviderId(ctx.db, tenant, PROVIDER, intent.id);
  if (existing?.policyId != null)
    throw new AppError('CONFLICT', 'This payment has already been used for a policy');
  if (intent.paymentMethodId !== null)
    await (await ctx.gateway(tenant)).setDefaultPaymentMethod(intent.customerId, intent.paymentMethodId);
  return {
    __binding: true,
    intent,
    amountPence: expectedPence,
    customerId: intent.customerId,
    paymentMethodId: intent.paymentMethodId,
  };
}

/** In the policy's transaction: records the verified payment against the new policy or renewal. */
export async function recordBinding(
  ctx: PaymentContext,
  ...[trx, tenant, bindingPayment, ids, purpose]: Parameters<PolicyPaymentHooks['recordBinding']>
): Promise<void> {
  const binding = bindingPayment as Binding;
  const now = ctx.clock.now();
  const existing = await findPaymentByProviderId(trx, tenant, PROVIDER, binding.intent.id);
  let paymentId: string;
  if (existing !== undefined) {
    paymentId = existing.id;
    // Bind the intent row created by CREATE_PAYMENT_INTENT; a concurrent bind of the same intent finds policy_id set.
    const bound = await bindIntentPayment(
      trx,
      existing.id,
      {
        policyId: ids.policyId,
        policyVersionId: ids.policyVersionId,
        purpose,
        paymentMethodId: binding.paymentMethodId,
      },
      now,
    );
    if (!bound) throw new AppError('CONFLICT', 'This payment has already been used for a policy');
  } else {
    paymentId = await insertBoundPayment(
      trx,
      tenant,
      binding,
      { policyId: ids.policyId, policyVersionId: ids.policyVersionId, purpose },
      now,
    );
  }
  await linkCustomer(trx, tenant, ids.userId, PROVIDER, binding.customerId, now);
  await recordEvent(
    trx,
    tenant,
    'payment.succeeded',
    {
      payment_reference: paymentId,
      policy_reference: await policyReferenceOf(trx, ids.policyId),
      policy_version_reference: ids.policyVersionId,
      amount: fromPence(binding.amountPence),
      currency: CURRENCY,
      provider_payment_reference: binding.intent.id,
    },
    now,
  );
}

/** A payment made outside CREATE_PAYMENT_INTENT, recorded as its policy binds it; 409 when it bound another. */
async function insertBoundPayment(
  trx: Executor,
  tenant: Tenant,
  binding: Binding,
  ids: { policyId: string; policyVersionId: string; purpose: 'new_business' | 'renewal' },
  now: Date,
): Promise<string> {
  try {
    const payment = await insertPayment(trx, tenant, {
      policyId: ids.policyId,
      policyVersionId: ids.policyVersionId,
      kind: 'charge',
      purpose: ids.purpose,
      status: 'succeeded',
      amountPence: binding.amountPence,
      currency: CURRENCY,
      provider: PROVIDER,
      providerPaymentId: binding.intent.id,
      providerCustomerId: binding.customerId,
      paymentMethodId: binding.paymentMethodId,
      at: now,
    });
    return payment.id;
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError('CONFLICT', 'This payment has already been used for a policy', { cause: error });
    throw error;
  }
}
