import { useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import { MilepostError } from '../../../sdk/src/index.ts';
import type { AppConfig } from './config.ts';
import { humanError } from './errors.ts';
import { BuyApprovedQuote, QuoteOutcome } from './quote-outcome.tsx';
import { askForQuote, quoteRequest, type Answers, type Quote } from './quote-api.ts';
import { Field, Panel } from './sign-in-forms.tsx';

export interface QuotePageProps {
  readonly config: AppConfig;
}

/** A step of the questions: its title and its fields. */
interface Step {
  readonly title: string;
  readonly fields: () => ReactNode;
}

function Choice(props: {
  name: string;
  label: string;
  options: ReadonlyArray<readonly [string, string]>;
  value?: string;
}) {
  const id = `quote-${props.name}`;
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <select id={id} name={props.name} defaultValue={props.value ?? props.options[0]?.[0]}>
        {props.options.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** An optional field (the named driver's): the shared Field requires every input. */
function Optional(props: { name: string; label: string; type?: string; hint?: string }) {
  const id = `quote-${props.name}`;
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {props.hint === undefined ? null : (
        <span className="hint" id={`${id}-hint`}>
          {props.hint}
        </span>
      )}
      <input
        id={id}
        name={props.name}
        type={props.type ?? 'text'}
        aria-describedby={props.hint === undefined ? undefined : `${id}-hint`}
      />
    </div>
  );
}

/** A day as people in the UK write it; quote-api.ts turns it into the interface's YYYY-MM-DD. */
const DAY = '\\d{1,2}/\\d{1,2}/\\d{4}';

const tomorrow = (): string =>
  new Date(Date.now() + 86_400_000).toLocaleDateString('en-GB', { timeZone: 'Europe/London' });

const STEPS: readonly Step[] = [
  {
    title: 'Your car',
    fields: () => (
      <>
        <Field name="reg" label="Registration" hint="As on the number plate, e.g. AB12 CDE." />
        <Field name="make" label="Make" />
        <Field name="model" label="Model" />
        <Field name="current_value" label="Value (£)" inputMode="numeric" pattern="\d{1,7}" />
        <Field
          name="group_rating_50"
          label="Insurance group (1 to 50)"
          inputMode="numeric"
          pattern="([1-9]|[1-4]\d|50)"
        />
        <Field name="year" label="Year of manufacture" inputMode="numeric" pattern="(19|20)\d\d" />
        <Choice
          name="is_import"
          label="Is it an import?"
          options={[
            ['no', 'No'],
            ['yes', 'Yes'],
          ]}
        />
      </>
    ),
  },
  {
    title: 'The drivers',
    fields: () => (
      <>
        <Field name="first_names" label="Your first names" autoComplete="given-name" />
        <Field name="last_names" label="Your surname" autoComplete="family-name" />
        <Field
          name="email"
          label="Email"
          type="email"
          autoComplete="email"
          hint="Your policy documents and sign-in come here."
        />
        <Field
          name="dob"
          label="Date of birth"
          hint="As DD/MM/YYYY, e.g. 14/03/1988."
          pattern={DAY}
          autoComplete="bday"
        />
        <Field
          name="licence_issued_date"
          label="Date your full licence was issued"
          hint="As DD/MM/YYYY."
          pattern={DAY}
        />
        <Field name="ncd" label="Years of no-claims discount" inputMode="numeric" pattern="\d{1,2}" />
        <fieldset>
          <legend>Another driver (optional)</legend>
          <Optional name="driver_first_names" label="First names" />
          <Optional name="driver_last_names" label="Surname" />
          <Optional name="driver_dob" label="Date of birth" hint="As DD/MM/YYYY." />
          <Optional
            name="driver_licence_issued_date"
            label="Date their full licence was issued"
            type="date"
          />
          <Optional
            name="driver_relationship"
            label="Relationship to you"
            hint="e.g. spouse, son, partner."
          />
        </fieldset>
      </>
    ),
  },
  {
    title: 'Where the car is kept',
    fields: () => (
      <>
        <Field name="line_1" label="Address" autoComplete="address-line1" />
        <Field name="city" label="Town or city" autoComplete="address-level2" />
        <Field
          name="postcode"
          label="Postcode"
          autoComplete="postal-code"
          hint="Where the car is kept overnight."
        />
      </>
    ),
  },
  {
    title: 'Cover and excess',
    fields: () => (
      <>
        <Choice
          name="cover"
          label="Cover"
          options={[
            ['comprehensive', 'Comprehensive'],
            ['tpft', 'Third party, fire and theft'],
          ]}
        />
        <Choice
          name="usage"
          label="Use"
          options={[
            ['sdp_commuting', 'Social and commuting'],
            ['sdp', 'Social only'],
            ['business', 'Business'],
          ]}
        />
        <Choice
          name="voluntary_excess"
          label="Voluntary excess (on top of £250 compulsory)"
          options={[
            ['0', '£0'],
            ['100', '£100'],
            ['250', '£250'],
            ['500', '£500'],
          ]}
          value="100"
        />
        <Choice
          name="installment_plan"
          label="Pay the fixed part"
          options={[
            ['single', 'All today'],
            ['monthly', 'Monthly, the first month today'],
          ]}
        />
        <Field
          name="start_on"
          label="Cover starts on"
          hint="Today or a later day, as DD/MM/YYYY. Cover bought for today starts when it is paid."
          pattern={DAY}
          defaultValue={tomorrow()}
        />
      </>
    ),
  },
  {
    title: 'Your mileage',
    fields: () => (
      <Field
        name="estimated_yearly_mileage"
        label="Miles you expect to drive in a year"
        inputMode="numeric"
        pattern="\d{1,6}"
        hint="You pay for the miles you drive; this sets the estimate."
      />
    ),
  },
];

/**
 * The product a quote is for: the company's quote page product (its quote settings), unless the
 * insurer's link names another (`/app/quote?product=…`).
 */
const productOf = (): string | null => new URLSearchParams(window.location.search).get('product');

/** The public quote page: the questions a step at a time, then the quote and buying it. */
export function QuotePage({ config }: QuotePageProps) {
  const [index, setIndex] = useState(0);
  const [answers, setAnswers] = useState<Answers>({});
  const [quote, setQuote] = useState<Quote | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  // Each step opens on its first question, so the keyboard carries on where the last step ended.
  useLayoutEffect(() => {
    if (index > 0) form.current?.querySelector<HTMLElement>('input, select')?.focus();
  }, [index]);
  // Null: the company's quote page product (its quote settings) is quoted.
  const product = productOf();
  const approved = new URLSearchParams(window.location.search).get('quote');
  if (approved !== null && quote === undefined)
    return (
      <div className="quote">
        <BuyApprovedQuote config={config} quoteReference={approved} />
      </div>
    );
  if (quote !== undefined)
    return (
      <div className="quote">
        <QuoteOutcome
          config={config}
          quote={quote}
          onChange={() => {
            setQuote(undefined);
            setIndex(0);
          }}
        />
      </div>
    );
  const step = STEPS[index];
  if (step === undefined) return null;
  const last = index === STEPS.length - 1;
  const submit = async (form: HTMLFormElement) => {
    const typed: Record<string, string> = { ...answers };
    new FormData(form).forEach((value, key) => {
      if (typeof value === 'string') typed[key] = value;
    });
    setAnswers(typed);
    setError(undefined);
    if (!last) {
      setIndex(index + 1);
      return;
    }
    setBusy(true);
    try {
      setQuote(await askForQuote(config, quoteRequest(typed, product)));
    } catch (caught) {
      setError(
        caught instanceof MilepostError && caught.status === 422 ? problemsOf(caught) : humanError(caught),
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="quote">
      <Panel
        title={`Get a quote: ${step.title.toLowerCase()}`}
        status={
          error === undefined ? null : (
            <p className="message error" role="alert">
              {error}
            </p>
          )
        }
      >
        <p className="hint">
          Step {index + 1} of {STEPS.length}
        </p>
        <form
          key={index}
          ref={form}
          onSubmit={(event) => {
            event.preventDefault();
            void submit(event.currentTarget);
          }}
        >
          {step.fields()}
          <div className="card-form-actions">
            <button type="submit" className="primary" disabled={busy}>
              {last ? (busy ? 'Getting your quote…' : 'Get my quote') : 'Continue'}
            </button>
            {index === 0 ? null : (
              <button
                type="button"
                className="link-button"
                onClick={() => {
                  setIndex(index - 1);
                }}
              >
                Back
              </button>
            )}
          </div>
        </form>
      </Panel>
    </div>
  );
}

/** A 422's fields in words: which answers to check (the service names each). */
function problemsOf(error: MilepostError): string {
  const named = error.errors
    .map((e) => e.path.split('/').pop()?.replace(/_/g, ' '))
    .filter((f) => f !== undefined);
  return named.length === 0
    ? 'Some of the details are not valid. Please check them and try again.'
    : `Please check: ${[...new Set(named)].join(', ')}.`;
}
