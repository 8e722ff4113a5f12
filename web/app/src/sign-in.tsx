import { useState } from 'react';
import { MilepostError, type Session } from '../../../sdk/src/index.ts';
import { RetryCountdown, useRetryWait } from '../../shared/countdown.tsx';
import { humanError } from './errors.ts';
import { hrefOf } from './router.ts';
import { BackToSignIn, Field, Form, NewPasswordForm, Panel } from './sign-in-forms.tsx';

/** Where the policyholder is in the login flow. */
type Stage =
  | { readonly kind: 'sign-in' }
  | { readonly kind: 'choose-password'; readonly username: string; readonly session: string }
  | { readonly kind: 'expired'; readonly username: string }
  | { readonly kind: 'forgot' }
  | { readonly kind: 'reset'; readonly username: string };

const TITLES: Readonly<Record<Stage['kind'], string>> = {
  'sign-in': 'Sign in',
  'choose-password': 'Choose a password',
  expired: 'Your temporary password has expired',
  forgot: 'Reset your password',
  reset: 'Enter the code and a new password',
};

/** What each stage's form is given. */
interface StageProps {
  readonly session: Session;
  readonly disabled: boolean;
  /** Runs one step: busy while it runs; a failure becomes a sentence (and a wait, when throttled). */
  readonly step: (work: () => Promise<void>) => Promise<void>;
  /** Moves to another stage, with a notice for it. */
  readonly go: (next: Stage, message?: string) => void;
  readonly onError: (message: string) => void;
  readonly onSignedIn: () => void;
}

export function SignInPage(props: { session: Session; notice: string | undefined; onSignedIn: () => void }) {
  const [stage, setStage] = useState<Stage>({ kind: 'sign-in' });
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>(props.notice);
  const [busy, setBusy] = useState(false);
  const wait = useRetryWait();

  const go = (next: Stage, message?: string) => {
    setStage(next);
    setError(undefined);
    setNotice(message);
  };

  async function step(work: () => Promise<void>) {
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (caught) {
      if (caught instanceof MilepostError && caught.code === 'RATE_LIMITED')
        wait.start(caught.retryAfterSeconds ?? 30);
      setError(humanError(caught));
    } finally {
      setBusy(false);
    }
  }

  const status = (
    <>
      {error !== undefined ? (
        <p className="message error" role="alert">
          {error}
        </p>
      ) : null}
      <RetryCountdown wait={wait} />
      {notice !== undefined ? (
        <p className="message notice" role="status">
          {notice}
        </p>
      ) : null}
    </>
  );
  const stageProps: StageProps = {
    session: props.session,
    disabled: busy || wait.waiting,
    step,
    go,
    onError: setError,
    onSignedIn: props.onSignedIn,
  };
  return (
    <Panel title={TITLES[stage.kind]} status={status}>
      <StageForm stage={stage} {...stageProps} />
    </Panel>
  );
}

function StageForm({ stage, ...props }: StageProps & { stage: Stage }) {
  switch (stage.kind) {
    case 'sign-in':
      return <SignInForm {...props} />;
    case 'choose-password':
      return <ChoosePasswordForm {...props} challenge={stage} />;
    case 'expired':
      return <ExpiredForm {...props} username={stage.username} />;
    case 'forgot':
      return <ForgotForm {...props} />;
    case 'reset':
      return <ResetForm {...props} username={stage.username} />;
  }
}

function SignInForm({ session, disabled, step, go, onSignedIn }: StageProps) {
  return (
    <>
      <Form
        submit="Sign in"
        disabled={disabled}
        onSubmit={(data) =>
          step(async () => {
            const username = data.get('username');
            const result = await session.signIn(username, data.get('password')).catch((caught: unknown) => {
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
      <p>
        Not insured with us yet? <a href={hrefOf('quote')}>Get a quote</a>
      </p>
    </>
  );
}

function ChoosePasswordForm(
  props: StageProps & { challenge: { readonly username: string; readonly session: string } },
) {
  const { session, step, onSignedIn, challenge } = props;
  return (
    <>
      <p>You signed in with a temporary password. Choose your own to carry on.</p>
      <NewPasswordForm
        submit="Save password and sign in"
        disabled={props.disabled}
        onError={props.onError}
        onSubmit={(password) =>
          step(async () => {
            await session.choosePassword(challenge, password);
            onSignedIn();
          })
        }
      />
    </>
  );
}

function ExpiredForm({ session, disabled, step, go, username }: StageProps & { username: string }) {
  return (
    <>
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
        <Field name="username" label="Username or email" autoComplete="username" defaultValue={username} />
      </Form>
      <BackToSignIn
        onClick={() => {
          go({ kind: 'sign-in' });
        }}
      />
    </>
  );
}

function ForgotForm({ session, disabled, step, go }: StageProps) {
  return (
    <>
      <p>We will email you a 6-digit code to set a new password.</p>
      <Form
        submit="Email me a code"
        disabled={disabled}
        onSubmit={(data) =>
          step(async () => {
            const username = data.get('username');
            await session.forgotPassword(username);
            go({ kind: 'reset', username }, 'If the account exists, we have emailed a code to its address.');
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
    </>
  );
}

function ResetForm({
  session,
  disabled,
  step,
  go,
  onError,
  onSignedIn,
  username,
}: StageProps & { username: string }) {
  return (
    <>
      <NewPasswordForm
        submit="Set password and sign in"
        disabled={disabled}
        onError={onError}
        code
        onSubmit={(password, code) =>
          step(async () => {
            await session.resetPassword(username, code ?? '', password);
            onSignedIn();
          })
        }
      />
      <BackToSignIn
        onClick={() => {
          go({ kind: 'sign-in' });
        }}
      />
    </>
  );
}
