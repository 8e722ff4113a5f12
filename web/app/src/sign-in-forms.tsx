import { useId, type ReactNode, type SyntheticEvent } from 'react';

const MIN_PASSWORD = 8;

/** A login stage's panel: its title, what the last step said, and its form. */
export function Panel(props: { title: string; status: ReactNode; children: ReactNode }) {
  return (
    <section className="panel" aria-labelledby="panel-title">
      <h1 id="panel-title">{props.title}</h1>
      {props.status}
      {props.children}
    </section>
  );
}

export function BackToSignIn({ onClick }: { onClick: () => void }) {
  return (
    <p>
      <button type="button" className="link-button" onClick={onClick}>
        Back to sign in
      </button>
    </p>
  );
}

/** A submitted form's fields, trimmed ('' when absent). */
export interface Values {
  get(name: string): string;
}

export function Form(props: {
  submit: string;
  disabled: boolean;
  onSubmit: (data: Values) => Promise<void>;
  children: ReactNode;
}) {
  const submit = (event: SyntheticEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void props.onSubmit({
      get: (name) => {
        const value = form.get(name);
        return typeof value === 'string' ? value.trim() : '';
      },
    });
  };
  return (
    <form onSubmit={submit}>
      {props.children}
      <button type="submit" className="primary" disabled={props.disabled} aria-disabled={props.disabled}>
        {props.submit}
      </button>
    </form>
  );
}

export function Field(props: {
  name: string;
  label: string;
  type?: string;
  autoComplete?: string;
  hint?: string;
  defaultValue?: string;
  inputMode?: 'numeric';
  pattern?: string;
  minLength?: number;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {props.hint !== undefined ? (
        <span className="hint" id={hintId}>
          {props.hint}
        </span>
      ) : null}
      <input
        id={id}
        name={props.name}
        type={props.type ?? 'text'}
        required
        autoComplete={props.autoComplete}
        defaultValue={props.defaultValue}
        inputMode={props.inputMode}
        pattern={props.pattern}
        minLength={props.minLength}
        aria-describedby={props.hint !== undefined ? hintId : undefined}
        autoCapitalize="none"
        spellCheck={false}
      />
    </div>
  );
}

/** A new password twice (and the emailed code for a reset), checked here before it is sent. */
export function NewPasswordForm(props: {
  submit: string;
  disabled: boolean;
  code?: boolean;
  onError: (message: string) => void;
  onSubmit: (password: string, code?: string) => Promise<void>;
}) {
  return (
    <Form
      submit={props.submit}
      disabled={props.disabled}
      onSubmit={async (data) => {
        const password = data.get('new_password');
        if (password.length < MIN_PASSWORD) {
          props.onError(`Your new password must be at least ${MIN_PASSWORD} characters.`);
          return;
        }
        if (password !== data.get('confirm_password')) {
          props.onError('The two passwords do not match.');
          return;
        }
        const code = data.get('code');
        if (props.code === true && !/^\d{6}$/.test(code)) {
          props.onError('The code is the 6 digits from the email.');
          return;
        }
        await props.onSubmit(password, props.code === true ? code : undefined);
      }}
    >
      {props.code === true ? (
        <Field
          name="code"
          label="Code from the email"
          autoComplete="one-time-code"
          inputMode="numeric"
          pattern="[0-9]{6}"
          hint="6 digits."
        />
      ) : null}
      <Field
        name="new_password"
        label="New password"
        type="password"
        autoComplete="new-password"
        minLength={MIN_PASSWORD}
        hint="At least 8 characters. Avoid common words and your username."
      />
      <Field name="confirm_password" label="New password again" type="password" autoComplete="new-password" />
    </Form>
  );
}
