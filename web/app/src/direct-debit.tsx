import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { PolicyDetails, Session } from '../../../sdk/src/index.ts';
import { formatDate } from '../../shared/format.ts';
import { PageMessages } from '../../shared/messages.tsx';
import { addPaymentMethod, productReferenceOf } from './cards.tsx';
import type { AppConfig } from './config.ts';
import {
  createBacsSetupIntent,
  loadDirectDebit,
  type DirectDebitState,
  type Mandate,
} from './direct-debit-api.ts';
import {
  BankDetailsForm,
  draftFrom,
  formatSortCode,
  readBankDraft,
  type BankDraft,
  type DraftProblems,
} from './direct-debit-form.tsx';
import { DirectDebitGuarantee } from './direct-debit-guarantee.tsx';
import { humanError } from './errors.ts';
import type { PageProps } from './page-props.ts';
import { usePolicy } from './policy-context.tsx';
import { hrefOf, navigate } from './router.ts';
import { BankProblem, confirmSandboxBacsSetup, type BankDetails } from './stripe-sandbox.ts';

/*
 * Setting up a Direct Debit, in the steps the Bacs scheme asks of an online Direct Debit Instruction:
 * the details (bank account, holder, the holder's confirmation of authorising alone) with the Guarantee
 * on the same page; then the details shown back for the payer to confirm or change; then, once the
 * mandate is made at the processor and given to the service, its reference.
 */

type Step =
  | { readonly kind: 'details' }
  | { readonly kind: 'confirm'; readonly details: BankDetails }
  | { readonly kind: 'done'; readonly mandate: Mandate | undefined };

/** Makes the mandate at the processor (Stripe.js in production, the built-in sandbox otherwise). */
async function confirmAtProcessor(
  config: AppConfig,
  setup: { setupIntentId: string; clientSecret: string; publishableKey: string | null },
  details: BankDetails,
): Promise<string> {
  const key = setup.publishableKey ?? config.stripe_publishable_key;
  if (config.environment === 'production' && key !== null) {
    const { confirmStripeBacsSetup } = await import('./stripe-elements.ts');
    return confirmStripeBacsSetup(key, setup.clientSecret, details);
  }
  return confirmSandboxBacsSetup(setup.setupIntentId, setup.clientSecret, details, key);
}

/** The whole setup: a SetupIntent for the policy, confirmed with the details, then ADD_NEW_PAYMENT_METHOD. */
async function setUpDirectDebit(
  session: Session,
  config: AppConfig,
  policy: PolicyDetails,
  details: BankDetails,
): Promise<Mandate | undefined> {
  const setup = await createBacsSetupIntent(session, policy.policy_reference);
  const paymentMethodId = await confirmAtProcessor(config, setup, details);
  await addPaymentMethod(session, policy, paymentMethodId);
  const state = await loadDirectDebit(session, policy.policy_reference);
  return state.mandates.find((mandate) => mandate.isDefault) ?? state.mandates[0];
}

/** The policy's Direct Debit as the service reads it (not in the demo), or why it could not be read. */
function useDirectDebit(session: Session, policy: PolicyDetails | undefined, demo: boolean) {
  const [state, setState] = useState<DirectDebitState | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  useEffect(() => {
    if (policy === undefined || demo) return;
    let live = true;
    loadDirectDebit(session, policy.policy_reference).then(
      (loaded) => {
        if (live) setState(loaded);
      },
      (caught: unknown) => {
        if (live) setLoadError(humanError(caught));
      },
    );
    return () => {
      live = false;
    };
  }, [session, policy, demo]);
  return { state, loadError };
}

export function DirectDebitPage({ session, config }: PageProps) {
  const { policy, error: policyError, reload } = usePolicy();
  const [step, setStep] = useState<Step>({ kind: 'details' });
  const [draft, setDraft] = useState<BankDraft | undefined>();
  const [problems, setProblems] = useState<DraftProblems>({});
  const [error, setError] = useState<string | undefined>();
  const demo = config.environment === 'mock';
  const { state, loadError } = useDirectDebit(session, policy, demo);

  const organisation = config.brand_name;
  const failure = policyError ?? loadError;
  const heading = <h1>Set up a Direct Debit</h1>;
  if (demo)
    return (
      <>
        {heading}
        <p className="message notice">Direct Debit is not part of the demo: nothing can be set up here.</p>
      </>
    );
  if (policy !== undefined && productReferenceOf(policy) === undefined)
    return (
      <>
        {heading}
        <p className="message error">
          Direct Debit cannot be set up here for this policy. Please contact your insurer.
        </p>
      </>
    );
  if (failure !== undefined || policy === undefined || state === undefined)
    return (
      <>
        {heading}
        <PageMessages error={failure} notice={undefined} noticeRef={null} />
        {failure === undefined ? <p role="status">Loading…</p> : null}
      </>
    );

  const guarantee = (
    <DirectDebitGuarantee organisation={organisation} noticeWorkingDays={state.noticeWorkingDays} />
  );
  if (step.kind === 'done') return <SetUp mandate={step.mandate} />;
  if (step.kind === 'confirm')
    return (
      <>
        {heading}
        <ConfirmDetails
          organisation={organisation}
          details={step.details}
          error={error}
          onChange={() => {
            setError(undefined);
            setStep({ kind: 'details' });
          }}
          onConfirm={async () => {
            setError(undefined);
            try {
              const mandate = await setUpDirectDebit(session, config, policy, step.details);
              setStep({ kind: 'done', mandate });
              reload();
            } catch (caught) {
              if (caught instanceof BankProblem && caught.field !== undefined) {
                // The bank refused a detail: back to the form, with the problem at its field.
                setProblems({ [caught.field]: caught.message });
                setError(caught.message);
                setStep({ kind: 'details' });
              } else setError(caught instanceof BankProblem ? caught.message : humanError(caught));
            }
          }}
        />
        {guarantee}
      </>
    );
  const current = draft ?? draftFrom(policy);
  return (
    <>
      {heading}
      <p>
        Your statements will be collected from your bank account by Direct Debit. You will be told the amount
        and the date {state.noticeWorkingDays} working days before each collection.
      </p>
      <div className="card">
        <BankDetailsForm
          organisation={organisation}
          draft={current}
          problems={problems}
          error={error}
          sandbox={config.environment === 'sandbox'}
          onChange={setDraft}
          onCancel={() => {
            navigate('cards');
          }}
          onSubmit={() => {
            const read = readBankDraft(current);
            if (!read.ok) {
              setProblems(read.problems);
              setError('Please check the details below.');
              return;
            }
            setProblems({});
            setError(undefined);
            setStep({ kind: 'confirm', details: read.details });
          }}
        />
      </div>
      {guarantee}
    </>
  );
}

/** The details shown back before anything is sent (Bacs: the payer confirms them, or goes back to change them). */
function ConfirmDetails(props: {
  readonly organisation: string;
  readonly details: BankDetails;
  readonly error: string | undefined;
  readonly onChange: () => void;
  readonly onConfirm: () => Promise<void>;
}) {
  const { details } = props;
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => {
    heading.current?.focus();
  }, []);
  const address = [
    details.address.line1,
    details.address.line2,
    details.address.city,
    details.address.postcode,
  ]
    .filter((line) => line !== '')
    .join(', ');
  return (
    <section className="card" aria-labelledby="dd-check-title">
      <h2 id="dd-check-title" ref={heading} tabIndex={-1}>
        Check your Direct Debit details
      </h2>
      <dl className="facts" data-testid="dd-check">
        <dt>Account holder</dt>
        <dd>{details.holderName}</dd>
        <dt>Sort code</dt>
        <dd>{formatSortCode(details.sortCode)}</dd>
        <dt>Account number</dt>
        <dd>{details.accountNumber}</dd>
        <dt>Address</dt>
        <dd>{address}</dd>
        <dt>Email</dt>
        <dd>{details.email}</dd>
        <dt>Collected by</dt>
        <dd>Stripe, on behalf of {props.organisation}</dd>
        <dt>Date</dt>
        <dd>{formatDate(new Date())}</dd>
      </dl>
      <p>
        You confirmed that you are the account holder and the only person required to authorise debits from
        this account. Within 3 working days we will email you confirmation of this Direct Debit Instruction,
        with its reference.
      </p>
      {props.error === undefined ? null : (
        <p className="message error" role="alert">
          {props.error}
        </p>
      )}
      <div className="card-form-actions">
        <button
          type="button"
          className="primary"
          disabled={busy}
          onClick={() => {
            setBusy(true);
            void props.onConfirm().finally(() => {
              setBusy(false);
            });
          }}
        >
          {busy ? 'Setting up…' : 'Confirm and set up Direct Debit'}
        </button>
        <button type="button" className="link-button" onClick={props.onChange} disabled={busy}>
          Change details
        </button>
      </div>
    </section>
  );
}

/** The Direct Debit made: its reference, and the way back to the payment methods. */
function SetUp({ mandate }: { readonly mandate: Mandate | undefined }) {
  const notice = useRef<HTMLParagraphElement>(null);
  useLayoutEffect(() => {
    notice.current?.focus();
  }, []);
  return (
    <>
      <h1>Direct Debit set up</h1>
      <p className="message notice" role="status" ref={notice} tabIndex={-1}>
        Your Direct Debit is set up
        {mandate === undefined || mandate.reference === null ? (
          ''
        ) : (
          <>
            {' '}
            with the reference <strong>{mandate.reference}</strong>
          </>
        )}
        . We will collect your next payments from this account.
      </p>
      <p>
        <a
          href={hrefOf('cards')}
          onClick={(event) => {
            event.preventDefault();
            navigate('cards');
          }}
        >
          See your payment methods
        </a>
      </p>
    </>
  );
}
