import { useId, useState } from 'react';
import { formatDateTime } from '../../app/src/format.ts';
import { LoadFailed, PageMessages } from '../../app/src/messages.tsx';
import { consoleError } from './api.ts';
import { useConsole, useLoad } from './console-context.tsx';
import type { Role, StaffAccount } from './types.ts';
import { ConfirmDialog, Field, Loading, TableBox, textOf, useNotice } from './ui.tsx';

const ROLES: ReadonlyArray<{ value: Role; name: string }> = [
  { value: 'viewer', name: 'Viewer (reads)' },
  { value: 'operations', name: 'Operations (acts on policies)' },
  { value: 'admin', name: 'Admin (manages)' },
];

function changeTitle(change: { account: StaffAccount; role?: Role; active?: boolean; reset?: true }): string {
  const { email } = change.account;
  if (change.reset === true) return `Reset the sign-in of ${email}?`;
  if (change.role !== undefined) return `Make ${email} ${change.role}?`;
  return change.active === true ? `Reactivate ${email}?` : `Deactivate ${email}?`;
}

/** Staff accounts: adding one (its one-time password shown once), changing a role, deactivating. */
export function StaffPage() {
  const { api, session } = useConsole();
  const id = useId();
  const staff = useLoad(() => api.get<{ data: StaffAccount[] }>('/admin/staff'), 'staff');
  const messages = useNotice();
  const [created, setCreated] = useState<{ email: string; one_time_password: string } | undefined>();
  const [busy, setBusy] = useState(false);
  const [changing, setChanging] = useState<
    { account: StaffAccount; role?: Role; active?: boolean; reset?: true } | undefined
  >();

  return (
    <>
      <h1>Staff</h1>
      <PageMessages error={messages.error} notice={messages.notice} noticeRef={messages.noticeRef} />
      {created === undefined ? null : (
        <section className="panel secret-box" aria-labelledby={`${id}-otp`}>
          <h2 id={`${id}-otp`}>One-time password for {created.email}</h2>
          <p>
            Shown this once. Give it to them by a channel other than email; they choose their own password
            when they first sign in.
          </p>
          <p>
            <code className="secret" data-testid="one-time-password">
              {created.one_time_password}
            </code>
          </p>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              setCreated(undefined);
            }}
          >
            I have passed it on
          </button>
        </section>
      )}
      <section className="panel" aria-labelledby={`${id}-new`}>
        <h2 id={`${id}-new`}>Add a member of staff</h2>
        <form
          className="inline-form"
          onSubmit={(event) => {
            event.preventDefault();
            const form = event.currentTarget;
            const fields = new FormData(form);
            const email = textOf(fields, 'email');
            setBusy(true);
            api
              .post<{ email: string; one_time_password: string }>('/admin/staff', {
                body: { email, role: textOf(fields, 'role') },
              })
              .then(
                (account) => {
                  setBusy(false);
                  form.reset();
                  setCreated(account);
                  messages.setNotice(`${account.email} was added.`);
                  staff.reload();
                },
                (caught: unknown) => {
                  setBusy(false);
                  messages.setError(consoleError(caught));
                },
              );
          }}
        >
          <Field label="Email" name="email" type="email" required autoComplete="off" />
          <div className="field">
            <label htmlFor={`${id}-role`}>Role</label>
            <select id={`${id}-role`} name="role" defaultValue="viewer">
              {ROLES.map((role) => (
                <option key={role.value} value={role.value}>
                  {role.name}
                </option>
              ))}
            </select>
          </div>
          <button type="submit" className="primary" disabled={busy}>
            Add
          </button>
        </form>
      </section>
      {staff.error !== undefined ? (
        <LoadFailed what="The staff" error={staff.error} onRetry={staff.reload} />
      ) : staff.data === undefined ? (
        <Loading what="staff" />
      ) : (
        <TableBox label="Staff accounts">
          <table className="grid">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Two-step</th>
                <th scope="col">Last sign-in</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {staff.data.data.map((account) => {
                const self = account.staff_id === session.staff.staff_id;
                return (
                  <tr key={account.staff_id}>
                    <th scope="row">{account.email}</th>
                    <td>
                      <label className="visually-hidden" htmlFor={`${id}-${account.staff_id}-role`}>
                        Role of {account.email}
                      </label>
                      <select
                        id={`${id}-${account.staff_id}-role`}
                        value={account.role}
                        disabled={self}
                        onChange={(event) => {
                          setChanging({ account, role: event.target.value as Role });
                        }}
                      >
                        {ROLES.map((role) => (
                          <option key={role.value} value={role.value}>
                            {role.value}
                          </option>
                        ))}
                      </select>
                    </td>
                    <td>{account.totp_enabled ? 'On' : 'Off'}</td>
                    <td className="nowrap">
                      {account.last_sign_in_at === null ? 'Never' : formatDateTime(account.last_sign_in_at)}
                    </td>
                    <td>
                      {account.active ? 'Active' : 'Deactivated'}{' '}
                      {self ? null : (
                        <button
                          type="button"
                          className="secondary"
                          onClick={() => {
                            setChanging({ account, active: !account.active });
                          }}
                        >
                          {account.active ? 'Deactivate' : 'Reactivate'}
                          <span className="visually-hidden"> {account.email}</span>
                        </button>
                      )}{' '}
                      {self || !account.active ? null : (
                        <button
                          type="button"
                          className="secondary"
                          onClick={() => {
                            setChanging({ account, reset: true });
                          }}
                        >
                          Reset sign-in<span className="visually-hidden"> of {account.email}</span>
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableBox>
      )}
      {changing === undefined ? null : (
        <ConfirmDialog
          title={changeTitle(changing)}
          confirmLabel={
            changing.reset === true
              ? 'Reset their sign-in'
              : changing.role !== undefined
                ? 'Change the role'
                : changing.active === true
                  ? 'Reactivate'
                  : 'Deactivate'
          }
          onClose={() => {
            setChanging(undefined);
          }}
          onConfirm={async () => {
            const { account } = changing;
            const answer = await api.patch<{ one_time_password?: string }>(
              `/admin/staff/${encodeURIComponent(account.staff_id)}`,
              {
                body:
                  changing.reset === true
                    ? { reset_credentials: true }
                    : changing.role !== undefined
                      ? { role: changing.role }
                      : { active: changing.active },
              },
            );
            if (answer.one_time_password !== undefined)
              setCreated({ email: account.email, one_time_password: answer.one_time_password });
            messages.setNotice(
              changing.reset === true
                ? `${account.email} has a new one-time password and no authenticator.`
                : changing.role !== undefined
                  ? `${account.email} is now ${changing.role}.`
                  : `${account.email} is ${changing.active === true ? 'active again' : 'deactivated'}.`,
            );
            staff.reload();
          }}
        >
          <p>
            {changing.reset === true
              ? 'For a lost phone or a forgotten password: they are signed out, get a new one-time password (shown once) and enrol an authenticator again.'
              : changing.role !== undefined
                ? 'Their sessions end at once; they sign in again with the new role.'
                : changing.active === true
                  ? 'They can sign in again.'
                  : 'They are signed out everywhere and cannot sign in.'}
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
