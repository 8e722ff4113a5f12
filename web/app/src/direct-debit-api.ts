import { unwrap, type Session } from '../../../sdk/src/index.ts';

/*
 * The service's Direct Debit routes, read into this app's shapes: a SetupIntent for the policy, and the
 * policy's mandates and collections.
 */

/** A Direct Debit mandate as the payer sees it. */
export interface Mandate {
  readonly id: string;
  /** The mandate's reference at the bank (what the payer's statement and the confirmation email show); null until the processor gives it. */
  readonly reference: string | null;
  readonly status: string;
  /** The account number's last digits, when the processor gave them. */
  readonly accountLast4: string | null;
  readonly sortCode: string | null;
  readonly isDefault: boolean;
}

export interface DirectDebitState {
  readonly mandates: readonly Mandate[];
  /** The insurer's advance notice before each collection, in working days. */
  readonly noticeWorkingDays: number;
}

/** A SetupIntent for the policy's Direct Debit (`payment_method_types: ['bacs_debit']`), to confirm client-side. */
export async function createBacsSetupIntent(
  session: Session,
  policyReference: string,
): Promise<{ setupIntentId: string; clientSecret: string; publishableKey: string | null }> {
  const made = await unwrap(
    session.client.POST('/policys/{policy_reference}/direct-debit/setup-intents', {
      params: { path: { policy_reference: policyReference } },
    }),
  );
  return {
    setupIntentId: made.setup_intent_id,
    clientSecret: made.client_secret,
    publishableKey: made.publishable_key,
  };
}

/** The policy's Direct Debit mandates (newest first) and the notice period. */
export async function loadDirectDebit(session: Session, policyReference: string): Promise<DirectDebitState> {
  const read = await unwrap(
    session.client.GET('/policys/{policy_reference}/direct-debit', {
      params: { path: { policy_reference: policyReference } },
    }),
  );
  return {
    noticeWorkingDays: read.notice_working_days,
    mandates: read.mandates.map((mandate) => ({
      id: mandate.mandate_id,
      reference: mandate.mandate_reference,
      status: mandate.status,
      accountLast4: mandate.account_last4,
      sortCode: mandate.sort_code,
      isDefault: mandate.default,
    })),
  };
}
