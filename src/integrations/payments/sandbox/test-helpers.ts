import type { MandateObject, TestClockObject } from './bacs-objects.ts';
import { revoke, settleDue } from './bacs-payments.ts';
import { settleDueRefunds as settleRefundsDue } from './refunds.ts';
import type { EngineContext, RequestInfo } from './engine-context.ts';
import { invalidRequest } from './errors.ts';
import { readParams, type FormObject } from './form.ts';
import { newId, type PaymentIntentObject, type RefundObject } from './objects.ts';

const DAY_SECONDS = 86_400;
/** Stripe deletes a test clock 30 days after it was made. */
const CLOCK_LIFETIME_SECONDS = 30 * DAY_SECONDS;
const REVOCATION_REASONS = [
  'account_closed',
  'bank_account_restricted',
  'bank_ownership_changed',
  'could_not_process',
  'debit_not_authorized',
];

export const loadTestClock = (ctx: EngineContext, id: string, param?: string): Promise<TestClockObject> =>
  ctx.load<TestClockObject>(id, 'test_helpers.test_clock', 'test_clock', param);

/** `POST /v1/test_helpers/test_clocks`: a clock frozen at `frozen_time`, for customers made with `test_clock`. */
export async function createTestClock(ctx: EngineContext, params: FormObject): Promise<TestClockObject> {
  const p = readParams(params, ['frozen_time', 'name']);
  const frozenTime = p.integer('frozen_time');
  if (frozenTime === undefined)
    throw invalidRequest('Missing required param: frozen_time.', {
      param: 'frozen_time',
      code: 'parameter_missing',
    });
  const clock: TestClockObject = {
    id: newId('clock'),
    object: 'test_helpers.test_clock',
    created: ctx.now(),
    deletes_after: ctx.now() + CLOCK_LIFETIME_SECONDS,
    frozen_time: frozenTime,
    livemode: false,
    name: p.string('name') ?? null,
    status: 'ready',
    status_details: {},
  };
  await ctx.store.put(clock);
  return clock;
}

/**
 * `POST /v1/test_helpers/test_clocks/:id/advance`: moves the clock forward to `frozen_time` and settles
 * the Bacs payments of its customers that fall due by then (their events are sent as the clock passes).
 * Stripe answers `advancing` and finishes in the background; the sandbox finishes first and answers `ready`.
 */
export async function advanceTestClock(
  ctx: EngineContext,
  id: string,
  params: FormObject,
  request: RequestInfo,
): Promise<TestClockObject> {
  const p = readParams(params, ['frozen_time']);
  const frozenTime = p.integer('frozen_time');
  if (frozenTime === undefined)
    throw invalidRequest('Missing required param: frozen_time.', {
      param: 'frozen_time',
      code: 'parameter_missing',
    });
  return ctx.withLock(id, async () => {
    const clock = await loadTestClock(ctx, id);
    if (frozenTime <= clock.frozen_time)
      throw invalidRequest('The test clock can only be advanced to a time after its current frozen_time.', {
        param: 'frozen_time',
      });
    const advanced: TestClockObject = { ...clock, frozen_time: frozenTime };
    await ctx.store.put(advanced);
    await settleDue(ctx, id, frozenTime);
    await ctx.emit('test_helpers.test_clock.ready', advanced, request);
    return advanced;
  });
}

/**
 * `POST /v1/test_helpers/sandbox/settle_due_payments` (the sandbox's own, not Stripe's): settles now
 * the account's Bacs payments whose settlement time the sandbox's clock has passed, of customers on no
 * test clock. The sandbox also does this by itself every minute; tests call it to not wait.
 */
export async function settleDuePayments(
  ctx: EngineContext,
  params: FormObject,
): Promise<{ object: 'list'; data: PaymentIntentObject[]; has_more: false; url: string }> {
  readParams(params, []);
  const data = await settleDue(ctx, null, ctx.now());
  return { object: 'list', data, has_more: false, url: '/v1/test_helpers/sandbox/settle_due_payments' };
}

/**
 * `POST /v1/test_helpers/sandbox/settle_due_refunds` (the sandbox's own, not Stripe's): settles now the
 * account's refunds to Stripe's refund test cards whose outcome is due (see `settleDueRefunds`). The
 * sandbox also does this by itself every minute; tests call it to not wait.
 */
export async function settleDueRefunds(
  ctx: EngineContext,
  params: FormObject,
): Promise<{ object: 'list'; data: RefundObject[]; has_more: false; url: string }> {
  readParams(params, []);
  const data = await settleRefundsDue(ctx, ctx.now());
  return { object: 'list', data, has_more: false, url: '/v1/test_helpers/sandbox/settle_due_refunds' };
}

export const retrieveMandate = (ctx: EngineContext, id: string): Promise<MandateObject> =>
  ctx.load<MandateObject>(id, 'mandate', 'mandate');

/**
 * `POST /v1/test_helpers/sandbox/mandates/:id/revoke` (the sandbox's own): the payer's bank cancels
 * the mandate (`revocation_reason`, default `debit_not_authorized`), as a Bacs ADDACS report would.
 */
export async function revokeMandate(
  ctx: EngineContext,
  id: string,
  params: FormObject,
  request: RequestInfo,
): Promise<MandateObject> {
  const p = readParams(params, ['revocation_reason']);
  const reason = p.string('revocation_reason') ?? 'debit_not_authorized';
  if (!REVOCATION_REASONS.includes(reason))
    throw invalidRequest(`Invalid revocation_reason: must be one of ${REVOCATION_REASONS.join(', ')}`, {
      param: 'revocation_reason',
    });
  return ctx.withLock(id, async () => {
    const mandate = await retrieveMandate(ctx, id);
    if (mandate.status === 'inactive')
      throw invalidRequest(`The mandate ${id} is already inactive.`, { code: 'resource_already_exists' });
    return revoke(ctx, mandate, reason, request);
  });
}
