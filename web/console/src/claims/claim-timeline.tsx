import { unwrap } from '../../../../sdk/src/client.ts';
import { formatDateTime, formatMoney } from '../../../shared/format.ts';
import type { Claim, ClaimState } from '../api-types.ts';
import { useConsole, useLoad, type Loaded } from '../console-context.tsx';
import { Panel } from '../policy/panel.tsx';
import { EXPOSURE_NAMES, STATE_NAMES } from './claim-words.tsx';

/** The staff actions on the claim, from the audit trail (every change by a staff session is there). */
export function useClaimAudit(claimReference: string, key: string) {
  const { api } = useConsole();
  return useLoad(
    () =>
      unwrap(
        api.client.GET('/admin/audit', {
          params: { query: { resource: `claim_reference:${claimReference}`, limit: 200 } },
        }),
      ),
    `${key}#audit`,
  );
}

type AuditPage = Awaited<ReturnType<typeof useClaimAudit>>['data'];

interface Entry {
  readonly at: string;
  readonly text: string;
  /** Orders entries of one instant: the row's change before what it caused. */
  readonly order: number;
}

const isState = (value: unknown): value is ClaimState => typeof value === 'string' && value in STATE_NAMES;

/** State changes made by staff, as the audit trail's rows of `claims` record them. */
function stateChanges(audit: AuditPage): Entry[] {
  return (audit?.data ?? []).flatMap((row) => {
    const after = row.after as { state?: unknown } | null;
    const before = row.before as { state?: unknown } | null;
    if (row.table !== 'claims' || row.operation !== 'update' || !isState(after?.state)) return [];
    const from = isState(before?.state) ? `${STATE_NAMES[before.state]} → ` : '';
    return [
      { at: row.occurred_at, order: 2, text: `State: ${from}${STATE_NAMES[after.state]} (by ${row.actor})` },
    ];
  });
}

/**
 * The claim's life in order: the incident, the first notice, referral, the policyholder's answer, each
 * state change, note, photo and payment. Built from the claim and, for staff's own changes, the audit trail.
 */
export function timelineOf(claim: Claim, audit: AuditPage): Entry[] {
  const staffChanges = stateChanges(audit);
  const changedBy = (state: ClaimState) =>
    staffChanges.some((e) => e.text.includes(`→ ${STATE_NAMES[state]} `));
  const entries: Entry[] = [
    {
      at: claim.occurred_at,
      order: 0,
      text:
        claim.source === 'crash'
          ? `Crash${claim.speed_kmh === null ? '' : ` at ${String(Math.round(claim.speed_kmh))} km/h`}${claim.place_name === null ? '' : ` near ${claim.place_name}`}`
          : 'The incident',
    },
    {
      at: claim.created_at,
      order: 1,
      text:
        claim.source === 'crash'
          ? 'First notice of loss: a draft claim was opened and the policyholder emailed'
          : 'Reported by the policyholder',
    },
    ...staffChanges,
    ...(claim.notes ?? []).map((note) => ({
      at: note.created_at,
      order: 3,
      text: `Note by ${note.author}: ${note.text}`,
    })),
    ...claim.photos.map((photo) => ({
      at: photo.uploaded_at,
      order: 3,
      text: `A photo was added (${photo.content_type})`,
    })),
    ...claim.payments.map((payment) => {
      const exposure = claim.exposures.find((e) => e.exposure_id === payment.exposure_id);
      const kind = exposure === undefined ? '' : ` on ${EXPOSURE_NAMES[exposure.kind].toLowerCase()}`;
      return {
        at: payment.paid_at,
        order: 3,
        text: `${payment.final ? 'Final payment' : 'Payment'} of ${formatMoney(payment.amount)} to ${payment.payee}${kind}`,
      };
    }),
  ];
  if (claim.referred_at !== null)
    entries.push({
      at: claim.referred_at,
      order: 2,
      text: 'Unanswered by the policyholder: referred to staff',
    });
  // The policyholder's confirmation (or a client's) opens the claim without a staff row in the audit trail.
  if (claim.opened_at !== null && claim.source === 'crash' && !changedBy('open'))
    entries.push({ at: claim.opened_at, order: 2, text: 'Opened: the policyholder confirmed the accident' });
  if (claim.closed_at !== null && !changedBy('closed'))
    entries.push({ at: claim.closed_at, order: 2, text: 'Closed' });
  // NOTE: the incident heads the timeline whatever its time: a device's clock may run ahead of the
  // server's by minutes, and nothing about a claim comes before what it claims for.
  return entries.sort((a, b) =>
    a.order === 0 ? -1 : b.order === 0 ? 1 : a.at.localeCompare(b.at) || a.order - b.order,
  );
}

export function TimelinePanel({
  claim,
  audit,
}: {
  readonly claim: Claim;
  readonly audit: Loaded<AuditPage>;
}) {
  const entries = timelineOf(claim, audit.data);
  return (
    <Panel title="Timeline">
      {audit.error === undefined ? null : (
        <p className="hint">Staff’s state changes could not be read from the audit trail: {audit.error}</p>
      )}
      <ol className="timeline" data-testid="claim-timeline">
        {entries.map((entry, index) => (
          <li key={`${entry.at}-${String(index)}`}>
            <span className="hint">{formatDateTime(entry.at)}</span> {entry.text}
          </li>
        ))}
      </ol>
    </Panel>
  );
}
