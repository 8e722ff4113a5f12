import type { PolicySnapshot } from '../../policies/rules/index.ts';

/** Every kind of document a policy is issued. */
export const DOCUMENT_KINDS = [
  'certificate',
  'schedule',
  'ipid',
  'statement_of_fact',
  'renewal_notice',
  'statement',
  'credit_note',
  'cancellation_notice',
] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];

/** Event types that owe documents: the trigger of migration 0042 queues exactly these. */
export const DOCUMENT_EVENT_TYPES: ReadonlySet<string> = new Set([
  'policy.created',
  'policy.adjusted',
  'policy.renewal_scheduled',
  'policy.renewed',
  'policy.cancelled',
  'statement.created',
  'journey.voided',
  'payment.refunded',
]);

/** A queued event, as its change recorded it. */
export interface QueuedEvent {
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly createdAt: Date;
}

/** One document an event owes: its kind, what it belongs to, and when it falls due. */
export interface OwedDocument {
  readonly kind: DocumentKind;
  readonly policyVersionId: string | null;
  readonly statementId: string | null;
  readonly paymentId: string | null;
  readonly journeyId: string | null;
  readonly dueAt: Date;
}

/** What deciding needs beyond the event: whether an adjustment changed what the certificate shows. */
export interface OwedFacts {
  readonly certificateChanged: boolean;
}

const text = (data: Readonly<Record<string, unknown>>, key: string): string | null => {
  const value = data[key];
  return typeof value === 'string' && value !== '' ? value : null;
};

const owed = (
  kind: DocumentKind,
  dueAt: Date,
  about: Partial<Pick<OwedDocument, 'policyVersionId' | 'statementId' | 'paymentId' | 'journeyId'>> = {},
): OwedDocument => ({
  kind,
  policyVersionId: about.policyVersionId ?? null,
  statementId: about.statementId ?? null,
  paymentId: about.paymentId ?? null,
  journeyId: about.journeyId ?? null,
  dueAt,
});

/** The later of the event's time and an ISO instant in its data (a renewal written before its start). */
function dueAtStart(event: QueuedEvent, key: string): Date {
  const iso = text(event.data, key);
  const at = iso === null ? Number.NaN : Date.parse(iso);
  return Number.isNaN(at) || at <= event.createdAt.getTime() ? event.createdAt : new Date(at);
}

/**
 * The documents an event owes (issue 37): new business → certificate, schedule, IPID, statement of
 * fact; adjustment → schedule, and a certificate when car, drivers, use or term changed; renewal terms
 * stored → renewal notice; renewal written early → its notice now, certificate and schedule at the
 * term's start; automatic renewal (at the term's start) → certificate and schedule; cancellation →
 * notice; statement → statement; a void already billed (credited on the next statement) and a refund
 * → credit note. Empty for any other event, or one whose data names nothing to issue.
 */
export function documentsOwed(event: QueuedEvent, facts: OwedFacts): OwedDocument[] {
  const at = event.createdAt;
  const version = text(event.data, 'policy_version_reference');
  switch (event.type) {
    case 'policy.created':
      return version === null
        ? []
        : (['certificate', 'schedule', 'ipid', 'statement_of_fact'] as const).map((kind) =>
            owed(kind, at, { policyVersionId: version }),
          );
    case 'policy.adjusted':
      if (version === null) return [];
      return [
        ...(facts.certificateChanged ? [owed('certificate', at, { policyVersionId: version })] : []),
        owed('schedule', at, { policyVersionId: version }),
      ];
    case 'policy.renewal_scheduled':
      return [owed('renewal_notice', at)];
    case 'policy.renewed': {
      if (version === null) return [];
      if (event.data['automatic'] === true)
        return [
          owed('certificate', at, { policyVersionId: version }),
          owed('schedule', at, { policyVersionId: version }),
        ];
      const startAt = dueAtStart(event, 'start_date');
      return [
        owed('renewal_notice', at, { policyVersionId: version }),
        owed('certificate', startAt, { policyVersionId: version }),
        owed('schedule', startAt, { policyVersionId: version }),
      ];
    }
    case 'policy.cancelled':
      return version === null ? [] : [owed('cancellation_notice', at, { policyVersionId: version })];
    case 'statement.created':
      return version === null ? [] : [owed('statement', at, { statementId: version })];
    case 'journey.voided': {
      const journey = text(event.data, 'journey_reference');
      return event.data['billed'] === true && journey !== null
        ? [owed('credit_note', at, { journeyId: journey })]
        : [];
    }
    case 'payment.refunded': {
      const payment = text(event.data, 'payment_reference');
      return payment === null ? [] : [owed('credit_note', at, { paymentId: payment })];
    }
    default:
      return [];
  }
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * Whether an adjustment changed what a certificate of motor insurance states (Road Traffic Act 1988
 * s.147 and its regulations: the vehicle, who may drive, the limitations as to use, the period): the
 * vehicle's registration, make or model, the named drivers, the use, or the term's dates.
 */
export function certificateChanged(before: PolicySnapshot, after: PolicySnapshot): boolean {
  const drivers = (s: PolicySnapshot) =>
    (s.additional_drivers ?? []).map((d) => [d.first_names, d.last_names, d.dob]);
  return (
    before.vehicle.reg !== after.vehicle.reg ||
    before.vehicle.make !== after.vehicle.make ||
    before.vehicle.model !== after.vehicle.model ||
    before.policy.usage !== after.policy.usage ||
    before.policy.start_date !== after.policy.start_date ||
    before.policy.end_date !== after.policy.end_date ||
    !sameJson(
      [after.proposer.first_names, after.proposer.last_names],
      [before.proposer.first_names, before.proposer.last_names],
    ) ||
    !sameJson(drivers(before), drivers(after))
  );
}
