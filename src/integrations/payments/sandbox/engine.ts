import type { Clock } from '../../../platform/clock.ts';
import { createCustomer, updateCustomer } from './customers.ts';
import { createEngineContext, type Caller, type Emit, type RequestInfo } from './engine-context.ts';
import type { FormObject } from './form.ts';
import { searchPaymentIntents } from './payment-intent-search.ts';
import {
  cancelPaymentIntent,
  confirmPaymentIntent,
  createPaymentIntent,
  retrievePaymentIntent,
} from './payment-intents.ts';
import { attachPaymentMethod, createPaymentMethod, retrievePaymentMethod } from './payment-methods.ts';
import { createRefund } from './refunds.ts';
import { confirmSetupIntent, createSetupIntent, retrieveSetupIntent } from './setup-intents.ts';
import {
  advanceTestClock,
  createTestClock,
  loadTestClock,
  retrieveMandate,
  revokeMandate,
  settleDuePayments,
  settleDueRefunds,
} from './test-helpers.ts';
import type { SandboxStore } from './store.ts';

export type { Caller, Emit, RequestInfo } from './engine-context.ts';

/**
 * The Stripe behaviour of the sandbox, over its store; HTTP concerns live in the plugin. One use case
 * family a file (customers, payment methods, payment intents and their attempts, search, refunds,
 * SetupIntents and Bacs mandates, Bacs payments and their settlement, refunds settling later, test clocks), all
 * sharing one context, so that the per-object locks are the same for every endpoint.
 */
export function createSandboxEngine(deps: { store: SandboxStore; clock: Clock; emit: Emit }) {
  const ctx = createEngineContext(deps);
  return {
    createCustomer: (params: FormObject) => createCustomer(ctx, params),
    retrieveCustomer: (id: string) => ctx.loadCustomer(id),
    updateCustomer: (id: string, params: FormObject) => updateCustomer(ctx, id, params),
    createPaymentMethod: (params: FormObject) => createPaymentMethod(ctx, params),
    retrievePaymentMethod: (id: string) => retrievePaymentMethod(ctx, id),
    attachPaymentMethod: (id: string, params: FormObject) => attachPaymentMethod(ctx, id, params),
    createPaymentIntent: (params: FormObject, request: RequestInfo) =>
      createPaymentIntent(ctx, params, request),
    retrievePaymentIntent: (id: string, params: FormObject, caller: Caller) =>
      retrievePaymentIntent(ctx, id, params, caller),
    confirmPaymentIntent: (id: string, params: FormObject, caller: Caller, request: RequestInfo) =>
      confirmPaymentIntent(ctx, id, params, caller, request),
    cancelPaymentIntent: (id: string, params: FormObject, request: RequestInfo) =>
      cancelPaymentIntent(ctx, id, params, request),
    searchPaymentIntents: (params: FormObject) => searchPaymentIntents(ctx, params),
    createRefund: (params: FormObject, request: RequestInfo) => createRefund(ctx, params, request),
    createSetupIntent: (params: FormObject) => createSetupIntent(ctx, params),
    retrieveSetupIntent: (id: string, params: FormObject, caller: Caller) =>
      retrieveSetupIntent(ctx, id, params, caller),
    confirmSetupIntent: (id: string, params: FormObject, caller: Caller, request: RequestInfo) =>
      confirmSetupIntent(ctx, id, params, caller, request),
    retrieveMandate: (id: string) => retrieveMandate(ctx, id),
    revokeMandate: (id: string, params: FormObject, request: RequestInfo) =>
      revokeMandate(ctx, id, params, request),
    createTestClock: (params: FormObject) => createTestClock(ctx, params),
    retrieveTestClock: (id: string) => loadTestClock(ctx, id),
    advanceTestClock: (id: string, params: FormObject, request: RequestInfo) =>
      advanceTestClock(ctx, id, params, request),
    settleDuePayments: (params: FormObject) => settleDuePayments(ctx, params),
    settleDueRefunds: (params: FormObject) => settleDueRefunds(ctx, params),
  };
}

export type SandboxEngine = ReturnType<typeof createSandboxEngine>;
