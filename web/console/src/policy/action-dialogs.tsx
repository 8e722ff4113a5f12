import { unwrap } from '../../../../sdk/src/client.ts';
import { formatMoney } from '../../../shared/format.ts';
import type { Journey, Payment, Policy, Tenant } from '../api-types.ts';
import { useConsole } from '../console-context.tsx';
import { ConfirmDialog, Field, textOf } from '../ui.tsx';
import { journeyStart } from './journeys.tsx';
import type { Action } from './policy-actions.tsx';

/** What every action's dialog is given. */
interface DialogProps {
  readonly tenant: Tenant;
  readonly policy: Policy;
  readonly onClose: () => void;
  /** Done: the notice to show, and which action it was (the parts it changed load again). */
  readonly onDone: (notice: string, what: Action['kind']) => void;
}

/** The confirmation of an action, which carries it out. */
export function ActionDialog({
  action,
  onBalance,
  ...props
}: DialogProps & { readonly action: Action; readonly onBalance: (pounds: number) => void }) {
  switch (action.kind) {
    case 'void':
      return <VoidDialog {...props} journey={action.journey} />;
    case 'credit':
      return <CreditDialog {...props} onBalance={onBalance} />;
    case 'retry':
      return <RetryDialog {...props} payment={action.payment} versionReference={action.versionReference} />;
    case 'cancel':
      return <CancelDialog {...props} />;
    case 'welcome':
      return <WelcomeDialog {...props} />;
  }
}

function VoidDialog({ tenant, onClose, onDone, journey }: DialogProps & { journey: Journey }) {
  const { api } = useConsole();
  return (
    <ConfirmDialog
      title="Void this journey?"
      confirmLabel="Void the journey"
      onClose={onClose}
      onConfirm={async (fields) => {
        await unwrap(
          api.forTenant(tenant).POST('/journeys/{journey_reference}/void', {
            params: { path: { journey_reference: journey.journey_reference } },
            body: { reason: textOf(fields, 'reason') },
          }),
        );
        onDone(`The journey of ${journeyStart(journey)} is void.`, 'void');
      }}
    >
      <p>
        {journeyStart(journey)}: {journey.start_name ?? 'unknown'} → {journey.end_name ?? 'unknown'},{' '}
        {formatMoney(journey.usage_premium)}. A void journey is not charged; a billed one is credited on the
        next statement.
      </p>
      <Field label="Reason" name="reason" required maxLength={500} autoFocus />
    </ConfirmDialog>
  );
}

function CreditDialog({
  tenant,
  policy,
  onClose,
  onDone,
  onBalance,
}: DialogProps & { onBalance: (pounds: number) => void }) {
  const { api } = useConsole();
  return (
    <ConfirmDialog
      title="Grant a credit"
      confirmLabel="Grant the credit"
      onClose={onClose}
      onConfirm={async (fields) => {
        const amount = Number(textOf(fields, 'amount'));
        const granted = await unwrap(
          api.client.POST('/admin/credits', {
            body: {
              company_reference: tenant.company.company_reference,
              environment: tenant.environment,
              policy_reference: policy.policy_reference,
              amount,
              reason: textOf(fields, 'reason'),
            },
          }),
        );
        onBalance(granted.balance);
        onDone(
          `A credit of ${formatMoney(amount)} was granted; the balance is ${formatMoney(granted.balance)}.`,
          'credit',
        );
      }}
    >
      <p>The credit is taken off the policy’s next statements.</p>
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
      <Field label="Reason" name="reason" required maxLength={500} />
    </ConfirmDialog>
  );
}

function RetryDialog(props: DialogProps & { payment: Payment; versionReference: string }) {
  const { api } = useConsole();
  const { tenant, policy, payment, onDone } = props;
  return (
    <ConfirmDialog
      title="Retry this payment now?"
      confirmLabel="Retry the payment"
      onClose={props.onClose}
      onConfirm={async () => {
        const outcome = await unwrap(
          api.forTenant(tenant).POST('/payments', {
            body: {
              type: 'RETRY_PAYMENT',
              // The interface asks every payment request for a product; a retry does not use it.
              product_reference: policy.policy.product_reference ?? 'unspecified',
              policy_reference: policy.policy_reference,
              policy_version_reference: props.versionReference,
            },
          }),
        );
        onDone(
          outcome.payment_amount === null || outcome.payment_amount === undefined
            ? `The retry failed: ${outcome.error_message ?? 'the card was declined'}.`
            : `The retry collected ${formatMoney(outcome.payment_amount)}.`,
          'retry',
        );
      }}
    >
      <p>
        Charges the card on file {formatMoney(payment.amount)} for the {payment.purpose.replace(/_/g, ' ')}{' '}
        now, instead of waiting for the next scheduled attempt.
      </p>
    </ConfirmDialog>
  );
}

function CancelDialog({ tenant, policy, onClose, onDone }: DialogProps) {
  const { api } = useConsole();
  return (
    <ConfirmDialog
      title="Cancel this policy?"
      confirmLabel="Cancel the policy"
      onClose={onClose}
      onConfirm={async (fields) => {
        const reason = textOf(fields, 'reason');
        await unwrap(
          api.forTenant(tenant).DELETE('/policys/{policy_reference}', {
            params: { path: { policy_reference: policy.policy_reference } },
            body: reason === '' ? {} : { reason },
          }),
        );
        onDone(`Policy ${policy.policy_reference} is cancelled.`, 'cancel');
      }}
    >
      <p>
        Cover ends now. Any refund or charge is worked out from the remaining term. This cannot be undone.
      </p>
      <Field label="Reason" name="reason" maxLength={500} autoFocus />
    </ConfirmDialog>
  );
}

function WelcomeDialog({ tenant, policy, onClose, onDone }: DialogProps) {
  const { api } = useConsole();
  return (
    <ConfirmDialog
      title="Resend the welcome email?"
      confirmLabel="Send it"
      onClose={onClose}
      onConfirm={async () => {
        const sent = await unwrap(
          api.forTenant(tenant).POST('/policys/{policy_reference}/welcome-email', {
            params: { path: { policy_reference: policy.policy_reference } },
          }),
        );
        onDone(`The welcome email was sent to ${sent.sent_to}.`, 'welcome');
      }}
    >
      <p>Sends the welcome email, with the sign-in details, to {policy.proposer.email} again.</p>
    </ConfirmDialog>
  );
}
