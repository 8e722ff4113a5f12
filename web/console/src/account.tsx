import { useId, useState } from 'react';
import { unwrap } from '../../../sdk/src/client.ts';
import { formatDateTime } from '../../shared/format.ts';
import { PageMessages } from '../../shared/messages.tsx';
import { consoleError } from './api.ts';
import { useConsole } from './console-context.tsx';
import { CodeField, Enrolment } from './sign-in.tsx';
import type { TotpEnrolment } from './api-types.ts';
import { textOf, useNotice } from './ui.tsx';

/** The signed-in member of staff: two-step verification, and signing out here or everywhere. */
export function AccountPage({ onSignedOut }: { onSignedOut: (message: string) => void }) {
  const { api, session } = useConsole();
  const id = useId();
  const messages = useNotice();
  const [enrolment, setEnrolment] = useState<TotpEnrolment | undefined>();
  const [enabled, setEnabled] = useState(session.staff.totp_enabled);
  const [busy, setBusy] = useState(false);

  const run = (work: () => Promise<void>) => {
    setBusy(true);
    work().then(
      () => {
        setBusy(false);
      },
      (caught: unknown) => {
        setBusy(false);
        messages.setError(consoleError(caught));
      },
    );
  };

  return (
    <>
      <h1>My account</h1>
      <PageMessages error={messages.error} notice={messages.notice} noticeRef={messages.noticeRef} />
      <section className="panel" aria-labelledby={`${id}-me`}>
        <h2 id={`${id}-me`}>Signed in</h2>
        <dl className="facts">
          <dt>Email</dt>
          <dd>{session.staff.email}</dd>
          <dt>Role</dt>
          <dd>{session.staff.role}</dd>
          <dt>Session ends</dt>
          <dd>{formatDateTime(session.expires_at)}</dd>
        </dl>
      </section>
      <section className="panel" aria-labelledby={`${id}-totp`}>
        <h2 id={`${id}-totp`}>Two-step verification</h2>
        {enabled ? (
          <p>On: you enter a code from your authenticator app each time you sign in.</p>
        ) : enrolment === undefined ? (
          <>
            <p>Off. Turn it on to need a code from an authenticator app as well as your password.</p>
            <button
              type="button"
              className="secondary"
              disabled={busy}
              onClick={() => {
                run(async () => {
                  setEnrolment(await unwrap(api.client.POST('/staff/me/totp')));
                });
              }}
            >
              Set up two-step verification
            </button>
          </>
        ) : (
          <form
            onSubmit={(event) => {
              event.preventDefault();
              const code = textOf(new FormData(event.currentTarget), 'code').replace(/\s+/g, '');
              run(async () => {
                await unwrap(api.client.POST('/staff/me/totp/confirm', { body: { code } }));
                setEnrolment(undefined);
                setEnabled(true);
                messages.setNotice('Two-step verification is on.');
              });
            }}
          >
            <Enrolment enrolment={enrolment} />
            <CodeField />
            <button type="submit" className="primary" disabled={busy}>
              Turn it on
            </button>
          </form>
        )}
      </section>
      <section className="panel" aria-labelledby={`${id}-out`}>
        <h2 id={`${id}-out`}>Sign out</h2>
        <div className="actions">
          <button
            type="button"
            className="secondary"
            disabled={busy}
            onClick={() => {
              run(async () => {
                await unwrap(api.client.DELETE('/staff/session'));
                onSignedOut('You have signed out.');
              });
            }}
          >
            Sign out
          </button>
          <button
            type="button"
            className="secondary"
            disabled={busy}
            onClick={() => {
              run(async () => {
                await unwrap(api.client.DELETE('/staff/sessions'));
                onSignedOut('You have signed out on every device.');
              });
            }}
          >
            Sign out everywhere
          </button>
        </div>
      </section>
    </>
  );
}
