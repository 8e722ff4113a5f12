import { useCallback, useEffect, useRef, useState } from 'react';
import { MilepostError, unwrap, type PolicyDetails, type Session } from '../../../sdk/src/index.ts';
import { CardForm } from './card-form.tsx';
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

/** ADD_NEW_PAYMENT_METHOD: the card becomes the policy's default (payments waiting for a card are retried). */
export async function addCard(
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

/** The policy's default card, or null when there is none on file. */
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

export function CardsPage({ session, config }: PageProps) {
  const { policy, error: policyError, reload } = usePolicy();
  const [card, setCard] = useState<SavedCard | null | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [adding, setAdding] = useState(false);
  const [notice, setNotice] = useState<string | undefined>();
  const noticeRef = useRef<HTMLParagraphElement>(null);
  // After a save the form is gone: focus goes to the confirmation, not lost to the page.
  useEffect(() => {
    if (notice !== undefined) noticeRef.current?.focus();
  }, [notice]);

  const refresh = useCallback(
    async (live: () => boolean = () => true) => {
      if (policy === undefined) return;
      try {
        const found = await loadCard(session, policy);
        if (!live()) return;
        setCard(found);
        setError(undefined);
      } catch (caught) {
        if (live()) setError(humanError(caught));
      }
    },
    [session, policy],
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
    await addCard(session, policy, paymentMethodId);
    setAdding(false);
    setNotice('Your new card is saved. We will use it for your next payments.');
    await refresh();
    reload();
  };

  const failure = policyError ?? error;
  return (
    <>
      <h1>Cards</h1>
      <PageMessages error={failure} notice={notice} noticeRef={noticeRef} />
      <section aria-labelledby="default-card-title" className="card">
        <h2 id="default-card-title">Your card</h2>
        {card === undefined ? (
          failure === undefined ? (
            <p role="status">Loading your card…</p>
          ) : null
        ) : card === null ? (
          <p>No card on file. Add a card to pay your statements.</p>
        ) : (
          <p className="saved-card" data-testid="default-card">
            <strong>{describeCard(card)}</strong>
            {describeExpiry(card) === undefined ? null : (
              <span className="when"> · {describeExpiry(card)}</span>
            )}
          </p>
        )}
        <p className="hint">Your statements are paid with this card.</p>
      </section>
      {policy !== undefined && productReferenceOf(policy) === undefined ? (
        <p className="message error">
          Cards cannot be changed here for this policy. Please contact your insurer.
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
