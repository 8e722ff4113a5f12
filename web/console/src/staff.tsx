import { useId, useState } from 'react';
import { unwrap } from '../../../sdk/src/client.ts';
import { formatDateTime } from '../../shared/format.ts';
import { LoadFailed, PageMessages } from '../../shared/messages.tsx';
import { consoleError } from './api.ts';
import type { Role, StaffAccount } from './api-types.ts';
import { useConsole, useLoad } from './console-context.tsx';
import { ConfirmDialog, Field, Loading, TableBox, textOf, useNotice } from './ui.tsx';

const ROLES: ReadonlyArray<{ value: Role; name: string }> = [
  { value: 'viewer', name: 'Viewer (reads)' },
  { value: 'operations', name: 'Operations (acts on policies)' },
  { value: 'claims', name: 'Claims (handles claims)' },
  { value: 'admin', name: 'Admin (manages)' },
];

/** A role picked in a list (every option is one of ROLES). */
const roleOf = (value: string): Role => ROLES.find((role) => role.value === value)?.value ?? 'viewer';

/** A change to a member of staff, waiting to be confirmed. */
interface Change {
  readonly account: StaffAccount;
  readonly role?: Role;
  readonly active?: boolean;
  readonly reset?: true;
}

/** A one-time password to pass on, shown once. */
interface OneTimePassword {
  readonly email: string;
  readonly one_time_password: string;
}

type Notice = ReturnType<typeof useNotice>;

function changeTitle(change: Change): string {
  const { email } = change.account;
  if (change.reset === true) return `Reset the sign-in of ${email}?`;
  if (change.role !== undefined) return `Make ${email} ${change.role}?`;
  return change.active === true ? `Reactivate ${email}?` : `Deactivate ${email}?`;
}

/** Staff accounts: adding one (its one-time password shown once), changing a role, deactivating. */
export function StaffPage() {
  const { api } = useConsole();
  const staff = useLoad(() => unwrap(api.client.GET('/admin/staff')), 'staff');
  const messages = useNotice();
  const [created, setCreated] = useState<OneTimePassword | undefined>();
  const [changing, setChanging] = useState<Change | undefined>();

  return (
    <>
      <h1>Staff</h1>
      <PageMessages error={messages.error} notice={messages.notice} noticeRef={messages.noticeRef} />
      {created === undefined ? null : (
        <OneTimePasswordBox
          created={created}
          onPassedOn={() => {
            setCreated(undefined);
          }}
        />
      )}
      <AddStaff
        messages={messages}
        onCreated={(account) => {
          setCreated(account);
          staff.reload();
        }}
      />
      {staff.error !== undefined ? (
        <LoadFailed what="The staff" error={staff.error} onRetry={staff.reload} />
      ) : staff.data === undefined ? (
        <Loading what="staff" />
      ) : (
        <StaffTable accounts={staff.data.data} onChange={setChanging} />
      )}
      {changing === undefined ? null : (
        <ChangeDialog
          change={changing}
          messages={messages}
          onClose={() => {
            setChanging(undefined);
          }}
          onDone={(otp) => {
            if (otp !== undefined) setCreated(otp);
            staff.reload();
          }}
        />
      )}
    </>
  );
}

function OneTimePasswordBox({ created, onPassedOn }: { created: OneTimePassword; onPassedOn: () => void }) {
  const id = useId();
  return (
    <section className="panel secret-box" aria-labelledby={`${id}-otp`}>
      <h2 id={`${id}-otp`}>One-time password for {created.email}</h2>
      <p>
        Shown this once. Give it to them by a channel other than email; they choose their own password when
        they first sign in.
      </p>
      <p>
        <code className="secret" data-testid="one-time-password">
          {created.one_time_password}
        </code>
      </p>
      <button type="button" className="secondary" onClick={onPassedOn}>
        I have passed it on
      </button>
    </section>
  );
}

function AddStaff(props: { messages: Notice; onCreated: (account: OneTimePassword) => void }) {
  const { api } = useConsole();
  const { messages } = props;
  const id = useId();
  const [busy, setBusy] = useState(false);
  return (
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
          unwrap(
            api.client.POST('/admin/staff', { body: { email, role: roleOf(textOf(fields, 'role')) } }),
          ).then(
            (account) => {
              setBusy(false);
              form.reset();
              props.onCreated(account);
              messages.setNotice(`${account.email} was added.`);
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
  );
}

function StaffTable(props: { accounts: readonly StaffAccount[]; onChange: (change: Change) => void }) {
  return (
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
          {props.accounts.map((account) => (
            <StaffRow key={account.staff_id} account={account} onChange={props.onChange} />
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

function StaffRow({ account, onChange }: { account: StaffAccount; onChange: (change: Change) => void }) {
  const { session } = useConsole();
  const id = useId();
  const self = account.staff_id === session.staff.staff_id;
  return (
    <tr>
      <th scope="row">{account.email}</th>
      <td>
        <label className="visually-hidden" htmlFor={`${id}-role`}>
          Role of {account.email}
        </label>
        <select
          id={`${id}-role`}
          value={account.role}
          disabled={self}
          onChange={(event) => {
            onChange({ account, role: roleOf(event.target.value) });
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
              onChange({ account, active: !account.active });
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
              onChange({ account, reset: true });
            }}
          >
            Reset sign-in<span className="visually-hidden"> of {account.email}</span>
          </button>
        )}
      </td>
    </tr>
  );
}

function ChangeDialog(props: {
  change: Change;
  messages: Notice;
  onClose: () => void;
  /** After the change, with the new one-time password of a reset. */
  onDone: (otp: OneTimePassword | undefined) => void;
}) {
  const { api } = useConsole();
  const { change, messages } = props;
  const { account } = change;
  return (
    <ConfirmDialog
      title={changeTitle(change)}
      confirmLabel={
        change.reset === true
          ? 'Reset their sign-in'
          : change.role !== undefined
            ? 'Change the role'
            : change.active === true
              ? 'Reactivate'
              : 'Deactivate'
      }
      onClose={props.onClose}
      onConfirm={async () => {
        const answer = await unwrap(
          api.client.PATCH('/admin/staff/{staff_id}', {
            params: { path: { staff_id: account.staff_id } },
            body:
              change.reset === true
                ? { reset_credentials: true }
                : change.role !== undefined
                  ? { role: change.role }
                  : { active: change.active === true },
          }),
        );
        messages.setNotice(
          change.reset === true
            ? `${account.email} has a new one-time password and no authenticator.`
            : change.role !== undefined
              ? `${account.email} is now ${change.role}.`
              : `${account.email} is ${change.active === true ? 'active again' : 'deactivated'}.`,
        );
        props.onDone(
          answer.one_time_password === undefined
            ? undefined
            : { email: account.email, one_time_password: answer.one_time_password },
        );
      }}
    >
      <p>
        {change.reset === true
          ? 'For a lost phone or a forgotten password: they are signed out, get a new one-time password (shown once) and enrol an authenticator again.'
          : change.role !== undefined
            ? 'Their sessions end at once; they sign in again with the new role.'
            : change.active === true
              ? 'They can sign in again.'
              : 'They are signed out everywhere and cannot sign in.'}
      </p>
    </ConfirmDialog>
  );
}
