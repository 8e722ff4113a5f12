import { useId, useState } from 'react';
import { unwrap } from '../../../../sdk/src/client.ts';
import { formatMoney } from '../../../shared/format.ts';
import { newRequestReference } from '../../../shared/request-reference.ts';
import type { Answer, Claim, ClaimExposure, ClaimState, Tenant } from '../api-types.ts';
import { useConsole } from '../console-context.tsx';
import { ConfirmDialog, Field, textOf } from '../ui.tsx';
import { EXPOSURE_NAMES, STATE_NAMES, TRANSITION_LABELS } from './claim-words.tsx';

/** What staff may do to a claim, each confirmed in a dialog. */
export type ClaimAction =
  | { readonly kind: 'transition'; readonly state: ClaimState }
  | { readonly kind: 'exposure' }
  | { readonly kind: 'reserve'; readonly exposure: ClaimExposure }
  | { readonly kind: 'pay'; readonly exposure: ClaimExposure }
  | { readonly kind: 'note' }
  | { readonly kind: 'handler' };

export type ClaimHandler = Answer<'staff.claimHandlers'>['data'][number];

interface DialogProps {
  readonly tenant: Tenant;
  readonly claim: Claim;
  readonly onClose: () => void;
  /** Done: the notice to show (the claim loads again). */
  readonly onDone: (notice: string) => void;
}

/** The confirmation of a claim action, which carries it out; a refusal (409, 422) stays in the dialog. */
export function ClaimActionDialog({
  action,
  handlers,
  ...props
}: DialogProps & { readonly action: ClaimAction; readonly handlers: readonly ClaimHandler[] }) {
  switch (action.kind) {
    case 'transition':
      return <TransitionDialog {...props} state={action.state} />;
    case 'exposure':
      return <ExposureDialog {...props} />;
    case 'reserve':
      return <ReserveDialog {...props} exposure={action.exposure} />;
    case 'pay':
      return <PayDialog {...props} exposure={action.exposure} />;
    case 'note':
      return <NoteDialog {...props} />;
    case 'handler':
      return <HandlerDialog {...props} handlers={handlers} />;
  }
}

/** What each state means for the claim, said in its dialog. */
const TRANSITION_NOTES: Readonly<Record<ClaimState, string>> = {
  draft: 'The claim goes back to a first notice.',
  open: 'The claim is opened for handling: exposures can be reserved and paid.',
  reopened: 'The claim is handled again: exposures can be added, reserved and paid.',
  settled: 'Only once every exposure has had its final payment (and there is at least one).',
  closed: 'The file is closed; it can be reopened later.',
  rejected: 'The claim is refused. The policyholder’s data is kept as the retention rules say.',
  withdrawn: 'The claim is withdrawn (a false alarm, or the policyholder no longer claims).',
};

function TextArea(props: {
  readonly label: string;
  readonly name: string;
  readonly required?: boolean;
  readonly maxLength: number;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <textarea id={id} name={props.name} rows={3} required={props.required} maxLength={props.maxLength} />
    </div>
  );
}

/** Pounds as typed (a number with at most 2 decimals): the API checks the range and answers 422. */
const poundsOf = (fields: FormData, name: string): number => Number(textOf(fields, name));

function TransitionDialog({ tenant, claim, onClose, onDone, state }: DialogProps & { state: ClaimState }) {
  const { api } = useConsole();
  return (
    <ConfirmDialog
      title={`${TRANSITION_LABELS[state]}?`}
      confirmLabel={TRANSITION_LABELS[state]}
      onClose={onClose}
      onConfirm={async (fields) => {
        const reason = textOf(fields, 'reason');
        await unwrap(
          api.forTenant(tenant).POST('/claims/{claim_reference}/transitions', {
            params: { path: { claim_reference: claim.claim_reference } },
            body: reason === '' ? { state } : { state, reason },
          }),
        );
        onDone(`The claim is ${STATE_NAMES[state]}.`);
      }}
    >
      <p>{TRANSITION_NOTES[state]}</p>
      <TextArea label="Reason (kept as a note)" name="reason" maxLength={2000} />
    </ConfirmDialog>
  );
}

function ExposureDialog({ tenant, claim, onClose, onDone }: DialogProps) {
  const { api } = useConsole();
  const id = useId();
  return (
    <ConfirmDialog
      title="Add an exposure"
      confirmLabel="Add the exposure"
      onClose={onClose}
      onConfirm={async (fields) => {
        const kind = textOf(fields, 'kind') as ClaimExposure['kind'];
        const reserve = poundsOf(fields, 'reserve');
        await unwrap(
          api.forTenant(tenant).POST('/claims/{claim_reference}/exposures', {
            params: { path: { claim_reference: claim.claim_reference } },
            body: { kind, reserve },
          }),
        );
        onDone(
          `A ${EXPOSURE_NAMES[kind].toLowerCase()} exposure with a reserve of ${formatMoney(reserve)} was added.`,
        );
      }}
    >
      <div className="field">
        <label htmlFor={id}>What it covers</label>
        <select id={id} name="kind" required>
          {Object.entries(EXPOSURE_NAMES).map(([kind, name]) => (
            <option key={kind} value={kind}>
              {name}
            </option>
          ))}
        </select>
      </div>
      <Field
        label="Reserve in pounds"
        name="reserve"
        type="number"
        inputMode="decimal"
        min="0"
        step="0.01"
        required
      />
    </ConfirmDialog>
  );
}

function ReserveDialog({
  tenant,
  claim,
  onClose,
  onDone,
  exposure,
}: DialogProps & { exposure: ClaimExposure }) {
  const { api } = useConsole();
  return (
    <ConfirmDialog
      title={`Set the ${EXPOSURE_NAMES[exposure.kind].toLowerCase()} reserve`}
      confirmLabel="Set the reserve"
      onClose={onClose}
      onConfirm={async (fields) => {
        const reserve = poundsOf(fields, 'reserve');
        await unwrap(
          api.forTenant(tenant).PUT('/claims/{claim_reference}/exposures/{exposure_id}/reserve', {
            params: { path: { claim_reference: claim.claim_reference, exposure_id: exposure.exposure_id } },
            body: { reserve },
          }),
        );
        onDone(`The ${EXPOSURE_NAMES[exposure.kind].toLowerCase()} reserve is ${formatMoney(reserve)}.`);
      }}
    >
      <p>
        The reserve is {formatMoney(exposure.reserve)}, of which {formatMoney(exposure.paid)} is paid. It
        cannot go below what is paid.
      </p>
      <Field
        label="New reserve in pounds"
        name="reserve"
        type="number"
        inputMode="decimal"
        min="0"
        step="0.01"
        defaultValue={exposure.reserve.toFixed(2)}
        required
        autoFocus
      />
    </ConfirmDialog>
  );
}

function PayDialog({ tenant, claim, onClose, onDone, exposure }: DialogProps & { exposure: ClaimExposure }) {
  const { api } = useConsole();
  const id = useId();
  // One payment per dialog: pressed again after an answer was lost, it is sent again, not paid twice.
  const [paymentReference] = useState(() => newRequestReference('console'));
  const name = EXPOSURE_NAMES[exposure.kind].toLowerCase();
  return (
    <ConfirmDialog
      title={`Pay on the ${name} exposure`}
      confirmLabel="Make the payment"
      onClose={onClose}
      onConfirm={async (fields) => {
        const amount = poundsOf(fields, 'amount');
        const final = textOf(fields, 'final') === 'final';
        await unwrap(
          api.forTenant(tenant).POST('/claims/{claim_reference}/exposures/{exposure_id}/payments', {
            params: { path: { claim_reference: claim.claim_reference, exposure_id: exposure.exposure_id } },
            body: { amount, final, payee: textOf(fields, 'payee'), payment_reference: paymentReference },
          }),
        );
        onDone(
          final
            ? `A final payment of ${formatMoney(amount)} was made: the ${name} exposure is settled.`
            : `A payment of ${formatMoney(amount)} was made on the ${name} exposure.`,
        );
      }}
    >
      <p>
        {formatMoney(exposure.outstanding)} of the {formatMoney(exposure.reserve)} reserve is outstanding. A
        payment above it is refused: raise the reserve first.
      </p>
      <Field
        label="Amount in pounds"
        name="amount"
        type="number"
        inputMode="decimal"
        min="0.01"
        step="0.01"
        required
        autoFocus
      />
      <Field
        label="Payee"
        name="payee"
        required
        maxLength={200}
        hint="The policyholder, a repairer or a third party."
      />
      <fieldset className="field">
        <legend>Kind of payment</legend>
        <label htmlFor={`${id}-partial`}>
          <input id={`${id}-partial`} type="radio" name="final" value="partial" defaultChecked /> Partial:
          more may follow
        </label>
        <label htmlFor={`${id}-final`}>
          <input id={`${id}-final`} type="radio" name="final" value="final" /> Final: settles the exposure
        </label>
      </fieldset>
    </ConfirmDialog>
  );
}

function NoteDialog({ tenant, claim, onClose, onDone }: DialogProps) {
  const { api } = useConsole();
  return (
    <ConfirmDialog
      title="Add a note"
      confirmLabel="Add the note"
      onClose={onClose}
      onConfirm={async (fields) => {
        await unwrap(
          api.forTenant(tenant).POST('/claims/{claim_reference}/notes', {
            params: { path: { claim_reference: claim.claim_reference } },
            body: { text: textOf(fields, 'text') },
          }),
        );
        onDone('The note was added.');
      }}
    >
      <p>Notes are for staff: the policyholder never sees them.</p>
      <TextArea label="Note" name="text" required maxLength={10_000} />
    </ConfirmDialog>
  );
}

function HandlerDialog({
  tenant,
  claim,
  onClose,
  onDone,
  handlers,
}: DialogProps & { handlers: readonly ClaimHandler[] }) {
  const { api } = useConsole();
  const id = useId();
  return (
    <ConfirmDialog
      title="Assign a handler"
      confirmLabel="Assign"
      onClose={onClose}
      onConfirm={async (fields) => {
        const staffId = textOf(fields, 'staff_id');
        await unwrap(
          api.forTenant(tenant).PUT('/claims/{claim_reference}/handler', {
            params: { path: { claim_reference: claim.claim_reference } },
            body: { staff_id: staffId },
          }),
        );
        const email = handlers.find((h) => h.staff_id === staffId)?.email ?? 'the handler';
        onDone(`The claim is assigned to ${email}.`);
      }}
    >
      {handlers.length === 0 ? (
        <p className="message error" role="alert">
          No active staff member has the claims or admin role.
        </p>
      ) : (
        <div className="field">
          <label htmlFor={id}>Handler</label>
          <select id={id} name="staff_id" required defaultValue={claim.handler_staff_id ?? undefined}>
            {handlers.map((h) => (
              <option key={h.staff_id} value={h.staff_id}>
                {h.email} ({h.role})
              </option>
            ))}
          </select>
        </div>
      )}
    </ConfirmDialog>
  );
}
