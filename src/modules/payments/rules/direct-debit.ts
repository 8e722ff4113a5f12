/*
 * Bacs Direct Debit rules: when a collection may be taken, and what a returned collection leads to.
 * Dates are London calendar days (`YYYY-MM-DD`); working days are England and Wales working days
 * (platform/working-days.ts: no weekends, no bank holidays).
 */
import { addWorkingDays } from '../../../platform/working-days.ts';

/** The Bacs scheme's default advance notice (the Direct Debit Guarantee's), in working days. */
export const DEFAULT_NOTICE_WORKING_DAYS = 10;
/** The shortest advance notice an originator may agree with its payers, in working days. */
export const MINIMUM_NOTICE_WORKING_DAYS = 3;
/** The longest notice a company may set (a month and a half): beyond it a statement would wait too long. */
export const MAXIMUM_NOTICE_WORKING_DAYS = 30;
/** Collections of one amount a Direct Debit makes at most: the first, and one retry after insufficient funds. */
export const MAXIMUM_COLLECTION_ATTEMPTS = 2;

/**
 * The day a collection announced on `noticeOn` is taken: `noticeWorkingDays` working days later (so the
 * advance notice is at least that many working days before it, as the Guarantee promises), never fewer
 * than the scheme's minimum of 3.
 */
export function collectionDay(noticeOn: string, noticeWorkingDays: number): string {
  return addWorkingDays(noticeOn, Math.max(MINIMUM_NOTICE_WORKING_DAYS, noticeWorkingDays));
}

/**
 * The first collection a new mandate allows, from the day it was set up: Bacs lodges a new instruction
 * in about three working days, and the advance notice runs from the mandate's confirmation.
 */
export function firstCollectionDay(setupOn: string, noticeWorkingDays: number): string {
  return collectionDay(setupOn, noticeWorkingDays);
}

/**
 * The day a collection announced for `collectOn` under one mandate is taken under a new one the payer
 * set up on `setupOn`: the day announced, unless that comes before the new mandate's first possible
 * collection (a new advance notice, naming the new mandate, goes out the day it is set up, and Bacs
 * lodges a new instruction before it can be collected on), then that first day. Never earlier than
 * announced.
 */
export function movedCollectionDay(collectOn: string, setupOn: string, noticeWorkingDays: number): string {
  const first = firstCollectionDay(setupOn, noticeWorkingDays);
  return collectOn >= first ? collectOn : first;
}

/** What a returned (failed) collection leads to. */
export type ReturnedCollection =
  { readonly action: 'retry' } | { readonly action: 'update_method'; readonly mandateEnded: boolean };

/**
 * Returns the payer's bank may still pay on another day: Bacs ARUDD reason 0 ("refer to payer"),
 * which Stripe reports as `insufficient_funds`.
 */
const RETRYABLE = new Set(['insufficient_funds']);
/**
 * Stripe's codes for a return or refusal that ends the instruction itself (the mandate is inactive
 * after them): it cannot be collected on again.
 */
const MANDATE_ENDED = new Set([
  'debit_not_authorized',
  'account_closed',
  'bank_account_restricted',
  'bank_ownership_changed',
  'no_account',
  'payment_method_unexpected_state',
  'mandate_inactive',
]);

/**
 * After collection attempt number `attempt` (1-based) came back unpaid with `code`: insufficient funds
 * is presented once more (with a new advance notice); anything else, or a second return, asks the
 * payer to update their payment method, and a code that says the instruction is gone ends the mandate.
 */
export function returnedCollection(code: string | null, attempt: number): ReturnedCollection {
  const known = code ?? '';
  if (RETRYABLE.has(known) && attempt < MAXIMUM_COLLECTION_ATTEMPTS) return { action: 'retry' };
  return { action: 'update_method', mandateEnded: MANDATE_ENDED.has(known) };
}
