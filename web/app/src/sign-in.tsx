import { useEffect, useId, useState, type SyntheticEvent, type ReactNode } from 'react';
import { MilepostError, type Session } from '../../../sdk/src/index.ts';
import { humanError } from './errors.ts';
import { formatWait } from './format.ts';

/** Where the policyholder is in the login flow. */
type Stage =
  | { readonly kind: 'sign-in' }
  | { readonly kind: 'choose-password'; readonly username: string; readonly session: string }
  | { readonly kind: 'expired'; readonly username: string }
  | { readonly kind: 'forgot' }
  | { readonly kind: 'reset'; readonly username: string };

const MIN_PASSWORD = 8;

export function SignInPage(props: { session: Session; notice: string | undefined; onSignedIn: () => void }) {
  const { session, onSignedIn } = props;
  const [stage, setStage] = useState<Stage>({ kind: 'sign-in' });
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>(props.notice);
  const [busy, setBusy] = useState(false);
  const [waitUntil, setWaitUntil] = useState<number | undefined>();
  const [clock, setClock] = useState(Date.now());
  const waiting = waitUntil !== undefined && waitUntil > clock;

  useEffect(() => {
    if (waitUntil === undefined) return;
    const timer = setInterval(() => {
      setClock(Date.now());
    }, 1000);
    return () => {
      clearInterval(timer);
    };
  }, [waitUntil]);

  const go = (next: Stage, message?: string) => {
    setStage(next);
    setError(undefined);
    setNotice(message);
  };

  /** Runs one step: busy while it runs; a failure becomes a sentence (and a wait, when throttled). */
  async function step(work: () => Promise<void>) {
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (caught) {
      if (caught instanceof MilepostError && caught.code === 'RATE_LIMITED') {
        setClock(Date.now());
        setWaitUntil(Date.now() + (caught.retryAfterSeconds ?? 30) * 1000);
      }
      setError(humanError(caught));
    } finally {
      setBusy(false);
    }
  }

  const disabled = busy || waiting;
  const status = (
    <>
      {error !== undefined ? (
        <p className="message error" role="alert">
          {error}
        </p>
      ) : null}
      {waitUntil !== undefined ? (
        // Not a live region: a countdown read out every second would drown everything else.
        <p className="hint" aria-live="off">
          {waiting
            ? `You can try again in ${formatWait((waitUntil - clock) / 1000)}.`
            : 'You can try again now.'}
        </p>
      ) : null}
      {notice !== undefined ? (
        <p className="message notice" role="status">
          {notice}
        </p>
      ) : null}
    </>
  );

  switch (stage.kind) {
    case 'sign-in':
      return (
        <Panel title="Sign in" status={status}>
          <Form
            submit="Sign in"
            disabled={disabled}
            onSubmit={(data) =>
              step(async () => {
                const username = data.get('username');
                const result = await session
                  .signIn(username, data.get('password'))
                  .catch((caught: unknown) => {
                    if (caught instanceof MilepostError && caught.code === 'TEMPORARY_PASSWORD_EXPIRED')
                      return undefined;
                    throw caught;
                  });
                if (result === undefined) {
                  go({ kind: 'expired', username });
                  return;
                }
                if (result.step === 'NEW_PASSWORD_REQUIRED')
                  go({ kind: 'choose-password', username: result.username, session: result.session });
                else onSignedIn();
              })
            }
          >
            <Field
              name="username"
              label="Username or email"
              autoComplete="username"
              hint="As in your welcome email."
            />
            <Field name="password" label="Password" type="password" autoComplete="current-password" />
          </Form>
          <p>
            <button
              type="button"
              className="link-button"
              onClick={() => {
                go({ kind: 'forgot' });
              }}
            >
              Forgot your password?
            </button>
          </p>
        </Panel>
      );
    case 'choose-password':
      return (
        <Panel title="Choose a password" status={status}>
          <p>You signed in with a temporary password. Choose your own to carry on.</p>
          <NewPasswordForm
            submit="Save password and sign in"
            disabled={disabled}
            onError={setError}
            onSubmit={(password) =>
              step(async () => {
                await session.choosePassword(stage, password);
                onSignedIn();
              })
            }
          />
        </Panel>
      );
    case 'expired':
      return (
        <Panel title="Your temporary password has expired" status={status}>
          <p>Temporary passwords last 30 days. We can email you a new one.</p>
          <Form
            submit="Email me a new temporary password"
            disabled={disabled}
            onSubmit={(data) =>
              step(async () => {
                await session.resendPassword(data.get('username'));
                go(
                  { kind: 'sign-in' },
                  'We have emailed you a new temporary password. Sign in with it to choose your own.',
                );
              })
            }
          >
            <Field
              name="username"
              label="Username or email"
              autoComplete="username"
              defaultValue={stage.username}
            />
          </Form>
          <BackToSignIn
            onClick={() => {
              go({ kind: 'sign-in' });
            }}
          />
        </Panel>
      );
    case 'forgot':
      return (
        <Panel title="Reset your password" status={status}>
          <p>We will email you a 6-digit code to set a new password.</p>
          <Form
            submit="Email me a code"
            disabled={disabled}
            onSubmit={(data) =>
              step(async () => {
                const username = data.get('username');
                await session.forgotPassword(username);
                go(
                  { kind: 'reset', username },
                  'If the account exists, we have emailed a code to its address.',
                );
              })
            }
          >
            <Field name="username" label="Username or email" autoComplete="username" />
          </Form>
          <BackToSignIn
            onClick={() => {
              go({ kind: 'sign-in' });
            }}
          />
        </Panel>
      );
    case 'reset':
      return (
        <Panel title="Enter the code and a new password" status={status}>
          <NewPasswordForm
            submit="Set password and sign in"
            disabled={disabled}
            onError={setError}
            code
            onSubmit={(password, code) =>
              step(async () => {
                await session.resetPassword(stage.username, code ?? '', password);
                onSignedIn();
              })
            }
          />
          <BackToSignIn
            onClick={() => {
              go({ kind: 'sign-in' });
            }}
          />
        </Panel>
      );
  }
}

function Panel(props: { title: string; status: ReactNode; children: ReactNode }) {
  return (
    <section className="panel" aria-labelledby="panel-title">
      <h1 id="panel-title">{props.title}</h1>
      {props.status}
      {props.children}
    </section>
  );
}

function BackToSignIn({ onClick }: { onClick: () => void }) {
  return (
    <p>
      <button type="button" className="link-button" onClick={onClick}>
        Back to sign in
      </button>
    </p>
  );
}

interface Values {
  get(name: string): string;
}

function Form(props: {
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

function Field(props: {
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
function NewPasswordForm(props: {
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
