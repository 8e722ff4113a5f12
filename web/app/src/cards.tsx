import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { MilepostError, unwrap, type PolicyDetails, type Session } from '../../../sdk/src/index.ts';
import { CardForm } from './card-form.tsx';
import { loadDirectDebit, type DirectDebitState, type Mandate } from './direct-debit-api.ts';
import { formatSortCode } from './direct-debit-form.tsx';
import { hrefOf, navigate } from './router.ts';
import { PageMessages } from '../../shared/messages.tsx';
import { humanError } from './errors.ts';
import { cardBrandLabel } from './labels.ts';
import type { PageProps } from './page-props.ts';
import { usePolicy } from './policy-context.tsx';

/** The default card as GET_PAYMENT_METHOD answers it. */
export interface SavedCard {
  readonly brand: string | null;
  readonly last4: string | null;
  readonly expMonth: number | null;
  readonly expYear: number | null;
}

/** "Visa •••• 4242". */
export function describeCard(card: SavedCard): string {
  const brand = cardBrandLabel(card.brand);
  return card.last4 === null ? brand : `${brand} •••• ${card.last4}`;
}

/** "Expires 08/2029", or nothing when the processor gave no expiry. */
export function describeExpiry(card: SavedCard): string | undefined {
  if (card.expMonth === null || card.expYear === null) return undefined;
  return `Expires ${String(card.expMonth).padStart(2, '0')}/${card.expYear}`;
}

/**
 * The `product_reference` POST /payments asks for: the policy's product. The service acts on the
 * policy for the card types; a policy naming no product has none to send.
 */
export const productReferenceOf = (policy: PolicyDetails): string | undefined =>
  policy.policy.product_reference ?? policy.product?.product_reference ?? undefined;

/**
 * ADD_NEW_PAYMENT_METHOD: the card, or the Direct Debit whose SetupIntent was just confirmed, becomes the
 * policy's default (payments waiting for a card are retried).
 */
export async function addPaymentMethod(
  session: Session,
  policy: PolicyDetails,
  paymentMethodId: string,
): Promise<void> {
  await unwrap(
    session.client.POST('/payments', {
      body: {
        type: 'ADD_NEW_PAYMENT_METHOD',
        policy_reference: policy.policy_reference,
        product_reference: productReferenceOf(policy) ?? '',
        payment_method_id: paymentMethodId,
      },
    }),
  );
}

/**
 * The policy's default payment method as a card (when the default is a Direct Debit, GET_PAYMENT_METHOD
 * answers the mandate, which the page shows from the Direct Debit read instead); null when none is on file.
 */
async function loadCard(session: Session, policy: PolicyDetails): Promise<SavedCard | null> {
  try {
    const card = await unwrap(
      session.client.POST('/payments', {
        body: {
          type: 'GET_PAYMENT_METHOD',
          policy_reference: policy.policy_reference,
          product_reference: productReferenceOf(policy) ?? '',
        },
      }),
    );
    return {
      brand: card.brand ?? null,
      last4: card.last4 ?? null,
      expMonth: card.exp_month ?? null,
      expYear: card.exp_year ?? null,
    };
  } catch (caught) {
    // No default card (404), or no customer at the processor at all (409): nothing on file.
    if (caught instanceof MilepostError && (caught.status === 404 || caught.status === 409)) return null;
    throw caught;
  }
}

/** The payment methods: the Direct Debit and the card, which is the default, and a way to add either. */
export function CardsPage({ session, config }: PageProps) {
  const { policy, error: policyError, reload } = usePolicy();
  const [card, setCard] = useState<SavedCard | null | undefined>();
  const [directDebit, setDirectDebit] = useState<DirectDebitState | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [adding, setAdding] = useState(false);
  const [notice, setNotice] = useState<string | undefined>();
  const noticeRef = useRef<HTMLParagraphElement>(null);
  const demo = config.environment === 'mock';
  // After a save the form is gone: focus goes to the confirmation, not lost to the page.
  useLayoutEffect(() => {
    if (notice !== undefined) noticeRef.current?.focus();
  }, [notice]);

  const refresh = useCallback(
    async (live: () => boolean = () => true) => {
      if (policy === undefined) return;
      try {
        // The demo has no Direct Debit: nothing of it is asked for there.
        const [found, mandates] = await Promise.all([
          loadCard(session, policy),
          demo ? undefined : loadDirectDebit(session, policy.policy_reference),
        ]);
        if (!live()) return;
        setCard(found);
        setDirectDebit(mandates);
        setError(undefined);
      } catch (caught) {
        if (live()) setError(humanError(caught));
      }
    },
    [session, policy, demo],
  );
  useEffect(() => {
    let live = true;
    void refresh(() => live);
    return () => {
      live = false;
    };
  }, [refresh]);

  const saved = async (paymentMethodId: string) => {
    if (policy === undefined) return;
    await addPaymentMethod(session, policy, paymentMethodId);
    setAdding(false);
    setNotice('Your new card is saved. We will use it for your next payments.');
    await refresh();
    reload();
  };

  const failure = policyError ?? error;
  const directDebitIsDefault = directDebit?.mandates.some((mandate) => mandate.isDefault) === true;
  const cannotChange = policy !== undefined && productReferenceOf(policy) === undefined;
  return (
    <>
      <h1>Payment methods</h1>
      <PageMessages error={failure} notice={notice} noticeRef={noticeRef} />
      <p className="hint">Your statements are paid with your default payment method.</p>
      {demo ? null : (
        <DirectDebitCard state={directDebit} loading={failure === undefined} canSetUp={!cannotChange} />
      )}
      <section aria-labelledby="default-card-title" className="card">
        <h2 id="default-card-title">Your card</h2>
        {card === undefined ? (
          failure === undefined ? (
            <p role="status">Loading your card…</p>
          ) : null
        ) : directDebitIsDefault ? (
          <p>Your statements are paid by Direct Debit. A card you add becomes your default instead.</p>
        ) : card === null ? (
          <p>No card on file. Add a card to pay your statements.</p>
        ) : (
          <p className="saved-card" data-testid="default-card">
            <strong>{describeCard(card)}</strong>
            {describeExpiry(card) === undefined ? null : (
              <span className="when"> · {describeExpiry(card)}</span>
            )}
            <DefaultTag />
          </p>
        )}
      </section>
      {cannotChange ? (
        <p className="message error">
          Payment methods cannot be changed here for this policy. Please contact your insurer.
        </p>
      ) : policy === undefined ? null : adding ? (
        <section aria-labelledby="add-card-title" className="card">
          <h2 id="add-card-title">Add a card</h2>
          <CardForm
            config={config}
            submitLabel="Save card"
            onPaymentMethod={saved}
            onCancel={() => {
              setAdding(false);
            }}
          />
        </section>
      ) : (
        <button
          type="button"
          className="primary"
          onClick={() => {
            setNotice(undefined);
            setAdding(true);
          }}
        >
          Add a card
        </button>
      )}
    </>
  );
}

/** Marks the method statements are paid with. */
function DefaultTag() {
  return <span className="default-tag"> Default</span>;
}

/** The policy's Direct Debits (reference, account, status, which is the default) and the way to set one up. */
function DirectDebitCard(props: {
  readonly state: DirectDebitState | undefined;
  readonly loading: boolean;
  readonly canSetUp: boolean;
}) {
  const { state } = props;
  return (
    <section aria-labelledby="direct-debit-title" className="card">
      <h2 id="direct-debit-title">Direct Debit</h2>
      {state === undefined ? (
        props.loading ? (
          <p role="status">Loading your Direct Debit…</p>
        ) : null
      ) : state.mandates.length === 0 ? (
        <p>No Direct Debit set up.</p>
      ) : (
        <ul className="mandates">
          {state.mandates.map((mandate) => (
            <li key={mandate.id} className="saved-card" data-testid="mandate">
              <strong>{describeMandate(mandate)}</strong>
              <span className="when">
                {' '}
                {mandate.reference === null ? '' : `· Reference ${mandate.reference} `}·{' '}
                {mandateStatusLabel(mandate.status)}
              </span>
              {mandate.isDefault ? <DefaultTag /> : null}
            </li>
          ))}
        </ul>
      )}
      {props.canSetUp && state !== undefined ? (
        <p>
          <a
            href={hrefOf('direct-debit')}
            onClick={(event) => {
              if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
              event.preventDefault();
              navigate('direct-debit');
            }}
          >
            {state.mandates.length === 0
              ? 'Set up a Direct Debit'
              : 'Set up a Direct Debit from another account'}
          </a>
        </p>
      ) : null}
    </section>
  );
}

/** "Account ending 2345, sort code 10-88-00". */
export function describeMandate(mandate: Mandate): string {
  const account = mandate.accountLast4 === null ? 'Bank account' : `Account ending ${mandate.accountLast4}`;
  return mandate.sortCode === null ? account : `${account}, sort code ${formatSortCode(mandate.sortCode)}`;
}

const MANDATE_STATUS: Readonly<Record<string, string>> = {
  pending: 'Waiting for your bank to confirm',
  active: 'Active',
  inactive: 'Cancelled',
};

/** A mandate's status in words. */
export const mandateStatusLabel = (status: string): string =>
  MANDATE_STATUS[status] ?? status.replace(/_/g, ' ');
