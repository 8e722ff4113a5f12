import { formatDateTime, formatMoney } from '../../../shared/format.ts';
import type { Claim, ClaimExposure, ClaimPayment } from '../api-types.ts';
import { DataTable } from '../data-table.tsx';
import { Panel } from '../policy/panel.tsx';
import { ClaimActionButton } from './claim-actions.tsx';
import { EXPOSURE_NAMES, formatSince, yesNo } from './claim-words.tsx';

/** What happened, where, the policyholder's answers and who handles it. */
export function SummaryPanel({
  claim,
  handlerEmail,
}: {
  readonly claim: Claim;
  readonly handlerEmail: string | null;
}) {
  const place = [claim.place_name, claim.postcode].filter((part) => part !== null).join(', ');
  return (
    <Panel title="The incident">
      <dl className="facts" data-testid="claim-summary">
        <dt>When</dt>
        <dd>
          {formatDateTime(claim.occurred_at)} ({formatSince(claim.occurred_at, Date.now())} ago)
        </dd>
        <dt>How</dt>
        <dd>
          {claim.source === 'crash'
            ? 'A crash reported by the car (first notice of loss)'
            : 'Reported by the policyholder'}
        </dd>
        <dt>Where</dt>
        <dd>
          {place === '' ? '—' : place}
          {claim.lat === null || claim.lon === null ? null : (
            <span className="hint">
              {' '}
              ({claim.lat.toFixed(5)}, {claim.lon.toFixed(5)})
            </span>
          )}
        </dd>
        <dt>Speed</dt>
        <dd>{claim.speed_kmh === null ? '—' : `${String(Math.round(claim.speed_kmh))} km/h`}</dd>
        {claim.state === 'draft' && claim.respond_by !== null ? (
          <>
            <dt>Answer due</dt>
            <dd>{formatDateTime(claim.respond_by)}</dd>
          </>
        ) : null}
        <dt>Injuries</dt>
        <dd>{yesNo(claim.injuries)}</dd>
        <dt>Other vehicles</dt>
        <dd>{yesNo(claim.other_vehicles)}</dd>
        <dt>Police attended</dt>
        <dd>{yesNo(claim.police_attended)}</dd>
        <dt>What happened</dt>
        <dd>{claim.description ?? '—'}</dd>
        <dt>Other parties</dt>
        <dd>{claim.other_parties ?? '—'}</dd>
        <dt>Handler</dt>
        <dd data-testid="claim-handler">{handlerEmail ?? 'Not assigned'}</dd>
        {claim.legal_hold === null ? null : (
          <>
            <dt>Legal hold</dt>
            <dd>
              {claim.legal_hold.reason} (since {formatDateTime(claim.legal_hold.since)})
            </dd>
          </>
        )}
      </dl>
    </Panel>
  );
}

/** The policy version in force at the incident: the cover, drivers and vehicle then. */
export function CoverPanel({ claim }: { readonly claim: Claim }) {
  const cover = claim.cover;
  return (
    <Panel title="Cover at the time">
      {cover === null ? (
        <p className="empty">No policy version was found for the time of the incident.</p>
      ) : (
        <dl className="facts" data-testid="claim-cover">
          <dt>In force</dt>
          <dd>
            {cover.in_force ? (
              'Yes'
            ) : (
              <strong className="status status-cancelled">No: the policy did not cover this time</strong>
            )}
          </dd>
          <dt>Cover</dt>
          <dd>{cover.cover ?? '—'}</dd>
          <dt>Drivers</dt>
          <dd>{cover.drivers.length === 0 ? '—' : cover.drivers.join(', ')}</dd>
          <dt>Vehicle</dt>
          <dd>
            {[cover.vehicle.reg, cover.vehicle.make, cover.vehicle.model]
              .filter((v) => v !== null)
              .join(' · ') || '—'}
          </dd>
          <dt>Version</dt>
          <dd>
            {cover.version_type} <span className="hint">{cover.policy_version_reference}</span>
          </dd>
        </dl>
      )}
    </Panel>
  );
}

/** Reserves and payments may move only while the claim is handled. */
const LIVE: ReadonlySet<Claim['state']> = new Set(['draft', 'open', 'reopened']);
const PAYABLE: ReadonlySet<Claim['state']> = new Set(['open', 'reopened']);

/** Each exposure's reserve, paid and outstanding, in pounds, with its actions. */
export function ExposuresPanel({ claim }: { readonly claim: Claim }) {
  const total = (pick: (e: ClaimExposure) => number) =>
    // Pence, so that the sum is exact; shown in pounds.
    claim.exposures.reduce((sum, e) => sum + Math.round(pick(e) * 100), 0) / 100;
  return (
    <Panel title="Exposures">
      {claim.exposures.length === 0 ? (
        <p className="empty">No exposures yet.</p>
      ) : (
        <>
          <DataTable
            label="Exposures"
            testId="claim-exposures"
            rows={claim.exposures}
            rowKey={(e) => e.exposure_id}
            columns={[
              { header: 'Exposure', cell: (e) => EXPOSURE_NAMES[e.kind] },
              { header: 'Reserve', number: true, cell: (e) => formatMoney(e.reserve) },
              { header: 'Paid', number: true, cell: (e) => formatMoney(e.paid) },
              { header: 'Outstanding', number: true, cell: (e) => formatMoney(e.outstanding) },
              {
                header: 'Settled',
                nowrap: true,
                cell: (e) => (e.settled_at === null ? 'No' : formatDateTime(e.settled_at)),
              },
              {
                header: 'Actions',
                cell: (e) =>
                  e.settled_at !== null || !LIVE.has(claim.state) ? null : (
                    <span className="actions">
                      <ClaimActionButton
                        label="Set reserve"
                        about={EXPOSURE_NAMES[e.kind]}
                        action={{ kind: 'reserve', exposure: e }}
                      />
                      {PAYABLE.has(claim.state) ? (
                        <ClaimActionButton
                          label="Pay"
                          about={EXPOSURE_NAMES[e.kind]}
                          action={{ kind: 'pay', exposure: e }}
                        />
                      ) : null}
                    </span>
                  ),
              },
            ]}
          />
          <p data-testid="claim-totals">
            Reserved {formatMoney(total((e) => e.reserve))} · paid {formatMoney(total((e) => e.paid))} ·
            outstanding {formatMoney(total((e) => e.outstanding))}
          </p>
        </>
      )}
    </Panel>
  );
}

/** The payments, oldest first, each with its exposure. */
export function PaymentsPanel({ claim }: { readonly claim: Claim }) {
  const kindOf = (payment: ClaimPayment) => {
    const exposure = claim.exposures.find((e) => e.exposure_id === payment.exposure_id);
    return exposure === undefined ? '—' : EXPOSURE_NAMES[exposure.kind];
  };
  return (
    <Panel title="Payments">
      {claim.payments.length === 0 ? (
        <p className="empty">No payments yet.</p>
      ) : (
        <DataTable
          label="Claim payments"
          testId="claim-payments"
          rows={claim.payments}
          rowKey={(p) => p.payment_id}
          columns={[
            { header: 'Paid', nowrap: true, cell: (p) => formatDateTime(p.paid_at) },
            { header: 'Exposure', cell: kindOf },
            { header: 'Payee', cell: (p) => p.payee },
            { header: 'Amount', number: true, cell: (p) => formatMoney(p.amount) },
            { header: 'Kind', cell: (p) => (p.final ? 'Final' : 'Partial') },
          ]}
        />
      )}
    </Panel>
  );
}

/** Staff's notes, newest first. */
export function NotesPanel({ claim }: { readonly claim: Claim }) {
  const notes = [...(claim.notes ?? [])].reverse();
  return (
    <Panel title="Notes">
      {notes.length === 0 ? (
        <p className="empty">No notes yet.</p>
      ) : (
        <ul className="plain notes" data-testid="claim-notes">
          {notes.map((note) => (
            <li key={note.note_id}>
              <p className="hint">
                {formatDateTime(note.created_at)} · {note.author}
              </p>
              <p>{note.text}</p>
            </li>
          ))}
        </ul>
      )}
    </Panel>
  );
}
