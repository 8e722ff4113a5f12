import { useId, useState } from 'react';
import { formatDateTime } from '../../shared/format.ts';
import { LoadFailed, PageMessages } from '../../shared/messages.tsx';
import {
  DETAILS_MAX_CHARS,
  KIND_NAMES,
  REASON_NAMES,
  scoreDisputes,
  type Dispute,
  type DisputeState,
} from '../../shared/score-disputes.ts';
import { useCanAct, useConsole, useLoad } from './console-context.tsx';
import { ConfirmDialog, Loading, textOf, useNotice } from './ui.tsx';

const STATES: ReadonlyArray<{ readonly state: DisputeState; readonly name: string }> = [
  { state: 'pending', name: 'Waiting for a decision' },
  { state: 'accepted', name: 'Accepted' },
  { state: 'rejected', name: 'Rejected' },
];

type Decision = { readonly dispute: Dispute; readonly decision: 'accept' | 'reject' };

/**
 * Policyholders' disputes of driving-score events (GET /admin/score-disputes), oldest first: operations
 * and admins accept one (the event stops counting and the scores are recomputed) or reject it, with a
 * reason the policyholder is emailed; other roles read them.
 */
export function ScoreDisputesPage() {
  const { api } = useConsole();
  const canAct = useCanAct();
  const [state, setState] = useState<DisputeState>('pending');
  const [generation, setGeneration] = useState(0);
  const [deciding, setDeciding] = useState<Decision>();
  const messages = useNotice();
  const hintId = useId();
  const disputes = useLoad(() => scoreDisputes(api.client).queue(state), `${state}#${generation}`);
  return (
    <>
      <h1>Score disputes</h1>
      <PageMessages error={messages.error} notice={messages.notice} noticeRef={messages.noticeRef} />
      <div className="field">
        <label htmlFor={`${hintId}-state`}>Show</label>
        <select
          id={`${hintId}-state`}
          value={state}
          onChange={(event) => {
            setState(event.target.value as DisputeState);
          }}
        >
          {STATES.map((option) => (
            <option key={option.state} value={option.state}>
              {option.name}
            </option>
          ))}
        </select>
      </div>
      {canAct ? null : (
        <p className="hint" id={hintId}>
          Your role can read disputes; operations staff and admins decide them.
        </p>
      )}
      {disputes.error !== undefined ? (
        <LoadFailed what="The score disputes" error={disputes.error} onRetry={disputes.reload} />
      ) : disputes.data === undefined ? (
        <Loading what="score disputes" />
      ) : disputes.data.disputes.length === 0 ? (
        <p className="empty" role="status">
          No disputes {state === 'pending' ? 'are waiting for a decision' : `have been ${state}`}.
        </p>
      ) : (
        <ul className="plain disputes">
          {disputes.data.disputes.map((dispute) => (
            <DisputeRow
              key={dispute.dispute_reference}
              dispute={dispute}
              canAct={canAct}
              hintId={hintId}
              onDecide={setDeciding}
            />
          ))}
        </ul>
      )}
      {deciding === undefined ? null : (
        <ConfirmDialog
          title={`${deciding.decision === 'accept' ? 'Accept' : 'Reject'} the dispute of ${KIND_NAMES[deciding.dispute.kind].toLowerCase()} on ${deciding.dispute.policy_reference}`}
          confirmLabel={deciding.decision === 'accept' ? 'Accept the dispute' : 'Reject the dispute'}
          onConfirm={async (fields) => {
            const decided = await scoreDisputes(api.client).decide(
              deciding.dispute.dispute_reference,
              deciding.decision,
              textOf(fields, 'reason'),
            );
            messages.setNotice(
              `The dispute on ${decided.policy_reference} is ${decided.state}; the policyholder is emailed.`,
            );
            setGeneration((n) => n + 1);
          }}
          onClose={() => {
            setDeciding(undefined);
          }}
        >
          <p>
            {deciding.decision === 'accept'
              ? 'The event will no longer count: the trip’s and the month’s scores are recomputed.'
              : 'The event keeps counting.'}{' '}
            The policyholder is emailed the decision and the reason.
          </p>
          <div className="field">
            <label htmlFor={`${hintId}-reason`}>Reason</label>
            <textarea id={`${hintId}-reason`} name="reason" required maxLength={DETAILS_MAX_CHARS} rows={3} />
          </div>
        </ConfirmDialog>
      )}
    </>
  );
}

function DisputeRow(props: {
  readonly dispute: Dispute;
  readonly canAct: boolean;
  readonly hintId: string;
  readonly onDecide: (decision: Decision) => void;
}) {
  const { dispute, canAct, hintId, onDecide } = props;
  const button = (decision: 'accept' | 'reject', label: string) => (
    <button
      type="button"
      className={decision === 'accept' ? 'primary' : 'secondary'}
      disabled={!canAct}
      aria-describedby={canAct ? undefined : hintId}
      onClick={() => {
        onDecide({ dispute, decision });
      }}
    >
      {label}
      <span className="visually-hidden"> the dispute on {dispute.policy_reference}</span>
    </button>
  );
  return (
    <li className="dispute-row" data-testid="score-dispute">
      <p>
        <strong>{KIND_NAMES[dispute.kind]}</strong> at {formatDateTime(dispute.occurred_at)} · policy{' '}
        {dispute.policy_reference}
        {dispute.company_reference === undefined ? '' : ` (${dispute.company_reference})`}
      </p>
      <p>
        {REASON_NAMES[dispute.reason]}
        {dispute.details === null ? '' : `: “${dispute.details}”`}
      </p>
      <p className="hint">
        Raised {formatDateTime(dispute.created_at)} · journey {dispute.journey_reference}
        {dispute.decided_at === null
          ? ''
          : ` · ${dispute.state} ${formatDateTime(dispute.decided_at)}: ${dispute.decision_reason ?? ''}`}
      </p>
      {dispute.state === 'pending' ? (
        <div className="actions">
          {button('accept', 'Accept')}
          {button('reject', 'Reject')}
        </div>
      ) : null}
    </li>
  );
}
