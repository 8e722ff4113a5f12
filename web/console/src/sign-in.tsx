import { useLayoutEffect, useRef, useState, type ReactNode, type SyntheticEvent } from 'react';
import { unwrap } from '../../../sdk/src/client.ts';
import { MilepostError } from '../../../sdk/src/errors.ts';
import { PASSWORD_MIN_LENGTH } from '../../../src/modules/auth/rules/password-policy.ts';
import { RetryCountdown, useRetryWait } from '../../shared/countdown.tsx';
import { consoleError, type ConsoleApi } from './api.ts';
import type { StaffSession, TotpEnrolment } from './api-types.ts';
import { Field } from './ui.tsx';

// The server's own rule, so the hint can never disagree with what the service accepts.
const MIN_PASSWORD = PASSWORD_MIN_LENGTH;

type Stage = StaffSession['stage'] | 'password';

const TITLES: Readonly<Record<Stage, string>> = {
  password: 'Sign in',
  new_password: 'Choose a new password',
  totp_enrol: 'Set up two-step verification',
  totp: 'Enter your verification code',
  active: 'Signed in',
};

/** What each stage's form is given. */
interface StageProps {
  readonly api: ConsoleApi;
  readonly session: StaffSession | null;
  readonly busy: boolean;
  readonly disabled: boolean;
  /** Sends the form's step: busy while it runs; a failure shown (and a wait, when throttled). */
  readonly step: (event: SyntheticEvent<HTMLFormElement>, work: (fields: FormData) => Promise<void>) => void;
  readonly onSession: (session: StaffSession) => void;
}

/** A form field's text as typed ('' when absent). */
const text = (fields: FormData, name: string): string => {
  const value = fields.get(name);
  return typeof value === 'string' ? value : '';
};

/**
 * Signing in, stage by stage as the service asks: email and password, then (for a one-time password)
 * a new password, then two-step verification (enrolment with a QR code, or a code).
 */
export function SignInPage(props: {
  api: ConsoleApi;
  /** The session so far; null when signed out. */
  session: StaffSession | null;
  notice: string | undefined;
  onSession: (session: StaffSession) => void;
}) {
  const { api, session, onSession } = props;
  const stage: Stage = session === null ? 'password' : session.stage;
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const wait = useRetryWait();
  const heading = useRef<HTMLHeadingElement>(null);

  // A new stage is a new form: focus goes to its heading so that a reader hears where they are.
  const first = useRef(true);
  useLayoutEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    setError(undefined);
    heading.current?.focus();
  }, [stage]);

  function step(event: SyntheticEvent<HTMLFormElement>, work: (fields: FormData) => Promise<void>) {
    event.preventDefault();
    const fields = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    work(fields).then(
      () => {
        setBusy(false);
      },
      (caught: unknown) => {
        setBusy(false);
        if (caught instanceof MilepostError && caught.status === 429)
          wait.start(caught.retryAfterSeconds ?? 30);
        setError(
          caught instanceof MilepostError && caught.code === 'INVALID_CREDENTIALS' && stage === 'password'
            ? 'The email or password is not right.'
            : consoleError(caught),
        );
      },
    );
  }

  const stageProps: StageProps = { api, session, busy, disabled: busy || wait.waiting, step, onSession };
  return (
    <>
      <h1 ref={heading} tabIndex={-1}>
        {TITLES[stage]}
      </h1>
      {stage === 'password' && props.notice !== undefined ? (
        <p className="message notice" role="status">
          {props.notice}
        </p>
      ) : null}
      {error === undefined ? null : (
        <p className="message error" role="alert">
          {error}
        </p>
      )}
      <RetryCountdown wait={wait} />
      <div className="panel narrow">
        <StageForm stage={stage} {...stageProps} />
      </div>
    </>
  );
}

function StageForm({ stage, ...props }: StageProps & { stage: Stage }): ReactNode {
  switch (stage) {
    case 'password':
      return <PasswordForm {...props} />;
    case 'new_password':
      return <NewPasswordForm {...props} />;
    case 'totp_enrol':
      return <TotpForm {...props} enrol />;
    case 'totp':
      return <TotpForm {...props} enrol={false} />;
    case 'active':
      return <p role="status">Opening the console…</p>;
  }
}

function PasswordForm({ api, busy, disabled, step, onSession }: StageProps) {
  return (
    <form
      onSubmit={(event) => {
        step(event, async (fields) => {
          onSession(
            await unwrap(
              api.client.POST('/staff/session', {
                body: { email: text(fields, 'email').trim(), password: text(fields, 'password') },
              }),
            ),
          );
        });
      }}
    >
      <Field label="Email" name="email" type="email" autoComplete="username" required />
      <Field label="Password" name="password" type="password" autoComplete="current-password" required />
      <button type="submit" className="primary" disabled={disabled}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}

function NewPasswordForm({ api, busy, disabled, step, onSession }: StageProps) {
  return (
    <form
      onSubmit={(event) => {
        step(event, async (fields) => {
          const password = text(fields, 'new_password');
          if (password.length < MIN_PASSWORD)
            throw new MilepostError(`Use at least ${MIN_PASSWORD} characters.`, {
              status: 422,
              code: 'CLIENT',
            });
          if (password !== text(fields, 'new_password_again'))
            throw new MilepostError('The two passwords do not match.', { status: 422, code: 'CLIENT' });
          onSession(
            await unwrap(api.client.POST('/staff/session/password', { body: { new_password: password } })),
          );
        });
      }}
    >
      <p>Your one-time password has done its job. Choose a password of your own.</p>
      <Field
        label="New password"
        name="new_password"
        type="password"
        autoComplete="new-password"
        hint={`At least ${MIN_PASSWORD} characters, not a common password.`}
        required
      />
      <Field
        label="New password again"
        name="new_password_again"
        type="password"
        autoComplete="new-password"
        required
      />
      <button type="submit" className="primary" disabled={disabled}>
        {busy ? 'Saving…' : 'Save password'}
      </button>
    </form>
  );
}

/** A code from the authenticator: the enrolment's confirmation (with its QR code), or a sign-in's second step. */
function TotpForm({ api, session, busy, disabled, step, onSession, enrol }: StageProps & { enrol: boolean }) {
  return (
    <form
      onSubmit={(event) => {
        step(event, async (fields) => {
          onSession(
            await unwrap(
              api.client.POST('/staff/session/totp', {
                body: { code: text(fields, 'code').replace(/\s+/g, '') },
              }),
            ),
          );
        });
      }}
    >
      {enrol ? (
        <>
          <p>Your role needs a code from an authenticator app each time you sign in.</p>
          {session?.totp_enrolment === undefined ? null : <Enrolment enrolment={session.totp_enrolment} />}
        </>
      ) : null}
      <CodeField />
      <button type="submit" className="primary" disabled={disabled}>
        {busy ? 'Checking…' : enrol ? 'Turn on and continue' : 'Continue'}
      </button>
    </form>
  );
}

export function CodeField() {
  return (
    <Field
      label="Six-digit code"
      name="code"
      inputMode="numeric"
      autoComplete="one-time-code"
      pattern="[0-9 ]{6,7}"
      maxLength={7}
      hint="From your authenticator app."
      required
    />
  );
}

/** The QR code to scan, and the secret for typing in by hand. */
export function Enrolment({ enrolment }: { enrolment: TotpEnrolment }) {
  return (
    <div className="enrolment">
      <ol>
        <li>Open an authenticator app and add an account.</li>
        <li>Scan the QR code, or type in the key below.</li>
        <li>Enter the six-digit code the app shows.</li>
      </ol>
      <img
        className="qr"
        src={`data:image/svg+xml;utf8,${encodeURIComponent(enrolment.qr_svg)}`}
        alt="QR code for your authenticator app"
        width={200}
        height={200}
      />
      <p>
        Key for typing in:{' '}
        <code className="secret" data-testid="totp-secret">
          {enrolment.secret}
        </code>
      </p>
    </div>
  );
}
