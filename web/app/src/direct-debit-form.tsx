import { useId, useLayoutEffect, useRef, type SyntheticEvent } from 'react';
import type { PolicyDetails } from '../../../sdk/src/index.ts';
import { SANDBOX_TEST_BANK_ACCOUNTS, SANDBOX_TEST_SORT_CODE, type BankDetails } from './stripe-sandbox.ts';

/** What the Direct Debit form holds while it is typed into (kept when the payer goes back to change it). */
export interface BankDraft {
  readonly holderName: string;
  readonly email: string;
  readonly line1: string;
  readonly line2: string;
  readonly city: string;
  readonly postcode: string;
  readonly sortCode: string;
  readonly accountNumber: string;
  /** The payer confirmed being the account holder, able to authorise debits alone. */
  readonly soleAuthoriser: boolean;
}

export type DraftField = Exclude<keyof BankDraft, 'soleAuthoriser'> | 'soleAuthoriser';
export type DraftProblems = Partial<Record<DraftField, string>>;

/** The form filled in from the policy: the proposer's name and email and the policy's address. */
export function draftFrom(policy: PolicyDetails | undefined): BankDraft {
  const address = policy?.policy.address;
  return {
    holderName: policy === undefined ? '' : `${policy.proposer.first_names} ${policy.proposer.last_names}`,
    email: policy?.proposer.email ?? '',
    line1: address?.line_1 ?? '',
    line2: address?.line_2 ?? '',
    city: address?.city ?? '',
    postcode: address?.postcode ?? '',
    sortCode: '',
    accountNumber: '',
    soleAuthoriser: false,
  };
}

const POSTCODE = /^[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}$/i;

/** Checks and normalises the draft (digits only, postcode upper case), or says what is wrong with each field. */
export function readBankDraft(
  draft: BankDraft,
): { ok: true; details: BankDetails } | { ok: false; problems: DraftProblems } {
  const problems: DraftProblems = {};
  const sortCode = draft.sortCode.replace(/[\s-]/g, '');
  const accountNumber = draft.accountNumber.replace(/[\s-]/g, '');
  if (draft.holderName.trim() === '') problems.holderName = 'Enter the account holder’s name.';
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(draft.email.trim()))
    problems.email = 'Enter an email address, like name@example.com.';
  if (draft.line1.trim() === '') problems.line1 = 'Enter the first line of the account holder’s address.';
  if (draft.city.trim() === '') problems.city = 'Enter the town or city.';
  if (!POSTCODE.test(draft.postcode.trim())) problems.postcode = 'Enter a UK postcode, like SW1A 1AA.';
  if (!/^\d{6}$/.test(sortCode)) problems.sortCode = 'Enter the sort code: 6 digits, like 10-88-00.';
  if (!/^\d{8}$/.test(accountNumber)) problems.accountNumber = 'Enter the account number: 8 digits.';
  if (!draft.soleAuthoriser)
    problems.soleAuthoriser =
      'Confirm that you are the account holder and the only person needed to authorise debits.';
  if (Object.keys(problems).length > 0) return { ok: false, problems };
  return {
    ok: true,
    details: {
      sortCode,
      accountNumber,
      holderName: draft.holderName.trim(),
      email: draft.email.trim(),
      address: {
        line1: draft.line1.trim(),
        line2: draft.line2.trim(),
        city: draft.city.trim(),
        postcode: draft.postcode.trim().toUpperCase(),
      },
    },
  };
}

/** A sort code as banks print it: 10-88-00. */
export const formatSortCode = (digits: string): string =>
  digits.replace(/^(\d{2})(\d{2})(\d{2})$/, '$1-$2-$3');

interface FieldSpec {
  readonly name: Exclude<DraftField, 'soleAuthoriser'>;
  readonly label: string;
  readonly autoComplete: string;
  readonly inputMode?: 'numeric' | 'email' | 'text';
  readonly maxLength: number;
  readonly hint?: string;
  readonly optional?: boolean;
}

const HOLDER_FIELDS: readonly FieldSpec[] = [
  { name: 'holderName', label: 'Account holder’s name', autoComplete: 'name', maxLength: 100 },
  { name: 'email', label: 'Email', autoComplete: 'email', inputMode: 'email', maxLength: 200 },
  { name: 'line1', label: 'Address line 1', autoComplete: 'address-line1', maxLength: 100 },
  {
    name: 'line2',
    label: 'Address line 2 (optional)',
    autoComplete: 'address-line2',
    maxLength: 100,
    optional: true,
  },
  { name: 'city', label: 'Town or city', autoComplete: 'address-level2', maxLength: 60 },
  { name: 'postcode', label: 'Postcode', autoComplete: 'postal-code', maxLength: 8 },
];
const BANK_FIELDS: readonly FieldSpec[] = [
  {
    name: 'sortCode',
    label: 'Sort code',
    autoComplete: 'off',
    inputMode: 'numeric',
    maxLength: 8,
    hint: '6 digits',
  },
  {
    name: 'accountNumber',
    label: 'Account number',
    autoComplete: 'off',
    inputMode: 'numeric',
    maxLength: 10,
    hint: '8 digits',
  },
];

/**
 * The bank account and its holder, and the payer's confirmation of being the account holder able to
 * authorise debits alone (the page shows the Guarantee beside it).
 */
export function BankDetailsForm(props: {
  readonly organisation: string;
  readonly draft: BankDraft;
  readonly problems: DraftProblems;
  readonly error: string | undefined;
  readonly sandbox: boolean;
  readonly onChange: (draft: BankDraft) => void;
  readonly onSubmit: () => void;
  readonly onCancel: () => void;
}) {
  const id = useId();
  const form = useRef<HTMLFormElement>(null);
  const { draft, problems } = props;
  // Opened on the payer's request (or back to change a detail): the keyboard goes to the first field to fix.
  useLayoutEffect(() => {
    const target =
      form.current?.querySelector<HTMLInputElement>('[aria-invalid="true"]') ??
      form.current?.querySelector<HTMLInputElement>('input');
    target?.focus();
  }, [problems]);
  const field = (spec: FieldSpec) => {
    const problem = problems[spec.name];
    const described = [
      spec.hint === undefined ? '' : `${id}-${spec.name}-hint`,
      problem === undefined ? '' : `${id}-${spec.name}-problem`,
    ]
      .filter(Boolean)
      .join(' ');
    return (
      <div className={`field dd-field-${spec.name}`} key={spec.name}>
        <label htmlFor={`${id}-${spec.name}`}>{spec.label}</label>
        {spec.hint === undefined ? null : (
          <span className="hint" id={`${id}-${spec.name}-hint`}>
            {spec.hint}
          </span>
        )}
        <input
          id={`${id}-${spec.name}`}
          name={spec.name}
          value={draft[spec.name]}
          autoComplete={spec.autoComplete}
          inputMode={spec.inputMode}
          maxLength={spec.maxLength}
          required={spec.optional !== true}
          onChange={(event) => {
            props.onChange({ ...draft, [spec.name]: event.target.value });
          }}
          aria-invalid={problem === undefined ? undefined : true}
          aria-describedby={described === '' ? undefined : described}
        />
        {problem === undefined ? null : (
          <span className="field-problem" id={`${id}-${spec.name}-problem`}>
            {problem}
          </span>
        )}
      </div>
    );
  };
  const submit = (event: SyntheticEvent<HTMLFormElement>) => {
    event.preventDefault();
    props.onSubmit();
  };
  const soleProblem = problems.soleAuthoriser;
  return (
    <form className="card-form dd-form" ref={form} onSubmit={submit} noValidate>
      <fieldset>
        <legend>Bank or building society account</legend>
        {props.sandbox ? <TestAccounts /> : null}
        <div className="card-form-row">{BANK_FIELDS.map(field)}</div>
      </fieldset>
      <fieldset>
        <legend>Account holder</legend>
        {HOLDER_FIELDS.map(field)}
      </fieldset>
      <div className={`dd-confirm${soleProblem === undefined ? '' : ' dd-confirm-problem'}`}>
        <input
          type="checkbox"
          id={`${id}-sole`}
          name="soleAuthoriser"
          checked={draft.soleAuthoriser}
          onChange={(event) => {
            props.onChange({ ...draft, soleAuthoriser: event.target.checked });
          }}
          aria-invalid={soleProblem === undefined ? undefined : true}
          aria-describedby={
            soleProblem === undefined ? `${id}-sole-note` : `${id}-sole-problem ${id}-sole-note`
          }
        />
        <label htmlFor={`${id}-sole`}>
          I understand that {props.organisation} has partnered with Stripe, who collects Direct Debits on
          behalf of {props.organisation}, and confirm that I am the account holder and the only person
          required to authorise debits from this account.
        </label>
      </div>
      {soleProblem === undefined ? null : (
        <p className="field-problem" id={`${id}-sole-problem`}>
          {soleProblem}
        </p>
      )}
      <p className="hint" id={`${id}-sole-note`}>
        If the account needs more than one person to authorise debits, or it is not yours, a Direct Debit
        cannot be set up online: please pay by card, or ask {props.organisation} for a paper Direct Debit
        Instruction.
      </p>
      {props.error === undefined ? null : (
        <p className="message error" role="alert">
          {props.error}
        </p>
      )}
      <div className="card-form-actions">
        <button type="submit" className="primary">
          Continue
        </button>
        <button type="button" className="link-button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The sandbox's test accounts, as the hint above the bank fields. */
function TestAccounts() {
  return (
    <p className="hint">
      This is the test environment: no money is taken. Use the sort code{' '}
      <span className="card-number">{SANDBOX_TEST_SORT_CODE}</span> with a test account number:{' '}
      {SANDBOX_TEST_BANK_ACCOUNTS.map((account, i) => (
        <span key={account.accountNumber}>
          <span className="card-number">{account.accountNumber}</span> {account.outcome}
          {i < SANDBOX_TEST_BANK_ACCOUNTS.length - 1 ? '; ' : '.'}
        </span>
      ))}
    </p>
  );
}
