import { useEffect, useId, useLayoutEffect, useRef, useState, type SyntheticEvent } from 'react';
import type { AppConfig } from './config.ts';
import { humanError } from './errors.ts';
import type { MountedStripeCard } from './stripe-elements.ts';
import {
  CardProblem,
  createSandboxPaymentMethod,
  SANDBOX_TEST_CARDS,
  type CardField,
  type TypedCard,
} from './stripe-sandbox.ts';

export interface CardFormProps {
  readonly config: AppConfig;
  /** The button's words, e.g. "Save card" or "Save card and pay £12.34". */
  readonly submitLabel: string;
  /** What to do with the new payment method's id (give it to the service); a failure is shown in the form. */
  readonly onPaymentMethod: (paymentMethodId: string) => Promise<void>;
  readonly onCancel?: () => void;
}

/**
 * A new card: Stripe Elements in production (with the publishable key), and in the sandbox a test-card
 * form whose card is made in the built-in sandbox as Stripe.js would make it.
 */
export function CardForm(props: CardFormProps) {
  const { config } = props;
  const key = config.stripe_publishable_key;
  if (config.environment === 'production' && key !== null)
    return <ElementsCardForm {...props} publishableKey={key} />;
  return <SandboxCardForm {...props} />;
}

type Problems = Partial<Record<CardField, string>>;

/** The checksum in every card number's last digit: a mistyped number is caught before it is sent. */
function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

/** Reads the typed fields, or says what is wrong with each, before anything is sent. */
function readCard(
  number: string,
  expiry: string,
  cvc: string,
): { ok: true; card: TypedCard } | { ok: false; problems: Problems } {
  const problems: Problems = {};
  const digits = number.replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(digits)) problems.number = 'Enter the card number: 12 to 19 digits.';
  else if (!passesLuhn(digits)) problems.number = 'That card number is not right. Please check it.';
  const match = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(expiry);
  const month = Number(match?.[1]);
  const yearText = match?.[2] ?? '';
  if (match === null || month < 1 || month > 12)
    problems.expiry = 'Enter the expiry date as month and year, like 08/29.';
  if (!/^\d{3,4}$/.test(cvc.trim())) problems.cvc = 'Enter the security code: the 3 or 4 digits on the card.';
  if (Object.keys(problems).length > 0) return { ok: false, problems };
  return {
    ok: true,
    card: {
      number: digits,
      expMonth: month,
      // NOTE: cards print two-digit years, which are this century's.
      expYear: yearText.length === 2 ? 2000 + Number(yearText) : Number(yearText),
      cvc: cvc.trim(),
    },
  };
}

function SandboxCardForm({ config, submitLabel, onPaymentMethod, onCancel }: CardFormProps) {
  const id = useId();
  const [number, setNumber] = useState('');
  const [expiry, setExpiry] = useState('');
  const [cvc, setCvc] = useState('');
  const [problems, setProblems] = useState<Problems>({});
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  // The form opens on a person's request: their keyboard goes straight to the card number.
  useLayoutEffect(() => {
    form.current?.querySelector('input')?.focus();
  }, []);

  const submit = async (event: SyntheticEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (busy) return;
    const read = readCard(number, expiry, cvc);
    if (!read.ok) {
      setProblems(read.problems);
      setError('Please check the card details.');
      return;
    }
    setProblems({});
    setError(undefined);
    setBusy(true);
    try {
      // The demo (mock environment) stores nothing, not even a test card in the sandbox.
      const paymentMethodId =
        config.environment === 'mock'
          ? 'pm_card_visa'
          : await createSandboxPaymentMethod(read.card, config.stripe_publishable_key);
      await onPaymentMethod(paymentMethodId);
    } catch (caught) {
      if (caught instanceof CardProblem) {
        setError(caught.message);
        if (caught.field !== undefined) setProblems({ [caught.field]: caught.message });
      } else setError(humanError(caught));
    } finally {
      setBusy(false);
    }
  };

  const field = (
    name: CardField,
    label: string,
    value: string,
    set: (value: string) => void,
    attributes: { autoComplete: string; placeholder?: string; maxLength: number },
  ) => {
    const problem = problems[name];
    return (
      <div className={`field card-field-${name}`}>
        <label htmlFor={`${id}-${name}`}>{label}</label>
        <input
          id={`${id}-${name}`}
          name={name}
          inputMode="numeric"
          value={value}
          onChange={(event) => {
            set(event.target.value);
          }}
          aria-invalid={problem === undefined ? undefined : true}
          aria-describedby={problem === undefined ? undefined : `${id}-${name}-problem`}
          {...attributes}
        />
        {problem === undefined ? null : (
          <span className="field-problem" id={`${id}-${name}-problem`}>
            {problem}
          </span>
        )}
      </div>
    );
  };

  return (
    <form className="card-form" ref={form} onSubmit={(event) => void submit(event)} noValidate>
      <fieldset>
        <legend>Card details</legend>
        <p className="hint" id={`${id}-hint`}>
          This is the test environment: no money is taken. Use a test card with any future expiry date and any
          3 digits:{' '}
          {SANDBOX_TEST_CARDS.map((card, i) => (
            <span key={card.number}>
              <span className="card-number">{card.number}</span> {card.outcome}
              {i < SANDBOX_TEST_CARDS.length - 1 ? '; ' : '.'}
            </span>
          ))}
        </p>
        {field('number', 'Card number', number, setNumber, {
          autoComplete: 'cc-number',
          maxLength: 23,
        })}
        <div className="card-form-row">
          {field('expiry', 'Expiry date (MM/YY)', expiry, setExpiry, {
            autoComplete: 'cc-exp',
            placeholder: 'MM/YY',
            maxLength: 7,
          })}
          {field('cvc', 'Security code', cvc, setCvc, { autoComplete: 'cc-csc', maxLength: 4 })}
        </div>
      </fieldset>
      {error === undefined ? null : (
        <p className="message error" role="alert">
          {error}
        </p>
      )}
      <div className="card-form-actions">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : submitLabel}
        </button>
        {onCancel === undefined ? null : (
          <button type="button" className="link-button" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

function ElementsCardForm({
  publishableKey,
  submitLabel,
  onPaymentMethod,
  onCancel,
}: CardFormProps & { readonly publishableKey: string }) {
  const id = useId();
  const host = useRef<HTMLDivElement>(null);
  const [mounted, setMounted] = useState<MountedStripeCard | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const into = host.current;
    if (into === null) return;
    let card: MountedStripeCard | undefined;
    let live = true;
    import('./stripe-elements.ts')
      .then(({ mountStripeCard }) => mountStripeCard(publishableKey, into, setError))
      .then(
        (made) => {
          card = made;
          if (live) setMounted(made);
          else made.destroy();
        },
        (caught: unknown) => {
          if (live)
            setError(
              caught instanceof CardProblem
                ? caught.message
                : 'The card form could not be loaded. Please reload the page.',
            );
        },
      );
    return () => {
      live = false;
      card?.destroy();
    };
  }, [publishableKey]);

  const submit = async (event: SyntheticEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (mounted === undefined || busy) return;
    setError(undefined);
    setBusy(true);
    try {
      await onPaymentMethod(await mounted.create());
    } catch (caught) {
      setError(caught instanceof CardProblem ? caught.message : humanError(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card-form" onSubmit={(event) => void submit(event)}>
      <div className="field">
        <span className="label" id={`${id}-label`}>
          Card details
        </span>
        <div className="stripe-card" ref={host} role="group" aria-labelledby={`${id}-label`} />
        {mounted === undefined && error === undefined ? (
          <p className="hint" role="status">
            Loading the card form…
          </p>
        ) : null}
      </div>
      {error === undefined ? null : (
        <p className="message error" role="alert">
          {error}
        </p>
      )}
      <div className="card-form-actions">
        <button type="submit" className="primary" disabled={busy || mounted === undefined}>
          {busy ? 'Saving…' : submitLabel}
        </button>
        {onCancel === undefined ? null : (
          <button type="button" className="link-button" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
