import { unwrap, type MilepostClient } from '../../../sdk/src/client.ts';
import type { Answer, Tenant } from './api-types.ts';

/*
 * The service's Direct Debit reads, in the console's shapes: a policy's mandates and collections, and a
 * company's collections by day (the calendar).
 */

type ApiPolicyDirectDebit = Answer<'payments.directDebit'>;
type ApiCollection = ApiPolicyDirectDebit['collections'][number];
type ApiCalendar = Answer<'payments.collections'>;

export interface Mandate {
  readonly id: string;
  readonly reference: string | null;
  readonly status: string;
  readonly sortCode: string | null;
  readonly accountLast4: string | null;
  readonly holderName: string | null;
  readonly isDefault: boolean;
  readonly createdAt: string;
  readonly cancelledAt: string | null;
  readonly cancelReason: string | null;
}

export interface Collection {
  readonly reference: string;
  /** Pounds, as the API gives money. */
  readonly amount: number;
  /** The London day it is (or was) collected on, YYYY-MM-DD; null for one taken by card instead. */
  readonly collectOn: string | null;
  /** `scheduled`, `processing`, `succeeded`, `failed` (or a card payment's status). */
  readonly status: string;
  readonly failureCode: string | null;
  readonly failureMessage: string | null;
  readonly noticeSentAt: string | null;
  readonly settledAt: string | null;
}

export interface CalendarCollection extends Collection {
  readonly policyReference: string;
  readonly mandateReference: string | null;
}

/** How many collections of a day (or month) are in a state, and how much they come to in pounds. */
export interface StateTotal {
  readonly count: number;
  readonly amount: number;
}

export interface CalendarDay {
  readonly day: string;
  readonly scheduled: StateTotal;
  readonly processing: StateTotal;
  readonly paid: StateTotal;
  readonly failed: StateTotal;
  readonly collections: readonly CalendarCollection[];
}

function collectionOf(collection: ApiCollection): Collection {
  return {
    reference: collection.payment_reference,
    amount: collection.amount,
    collectOn: collection.collect_on,
    status: collection.status,
    failureCode: collection.failure_code,
    failureMessage: collection.failure_message,
    noticeSentAt: collection.notice_sent_at,
    settledAt: collection.settled_at,
  };
}

/** A policy's Direct Debit: its mandates (newest first) and collections. */
export async function loadPolicyDirectDebit(
  client: MilepostClient,
  policyReference: string,
): Promise<{ mandates: Mandate[]; collections: Collection[] }> {
  const read = await unwrap(
    client.GET('/policys/{policy_reference}/direct-debit', {
      params: { path: { policy_reference: policyReference } },
    }),
  );
  return {
    mandates: read.mandates.map((mandate) => ({
      id: mandate.mandate_id,
      reference: mandate.mandate_reference,
      status: mandate.status,
      sortCode: mandate.sort_code,
      accountLast4: mandate.account_last4,
      holderName: mandate.account_holder_name,
      isDefault: mandate.default,
      createdAt: mandate.created_at,
      cancelledAt: mandate.cancelled_at,
      cancelReason: mandate.cancel_reason,
    })),
    collections: read.collections.map(collectionOf),
  };
}

/** The company's collections day by day, `from` to `to` (inclusive London dates), with each day's totals. */
export async function loadCollections(
  client: MilepostClient,
  tenant: Tenant,
  from: string,
  to: string,
): Promise<CalendarDay[]> {
  const read: ApiCalendar = await unwrap(
    client.GET('/admin/collections', {
      params: {
        query: {
          company_reference: tenant.company.company_reference,
          environment: tenant.environment,
          from,
          to,
        },
      },
    }),
  );
  return read.days.map((day) => ({
    day: day.day,
    scheduled: day.scheduled,
    processing: day.processing,
    paid: day.paid,
    failed: day.failed,
    collections: day.collections.map((collection) => ({
      ...collectionOf(collection),
      policyReference: collection.policy_reference,
      mandateReference: collection.mandate_reference,
    })),
  }));
}
