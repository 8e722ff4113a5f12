import { useId, useState } from 'react';
import { formatDateTime } from '../../app/src/format.ts';
import { PageMessages } from '../../app/src/messages.tsx';
import { consoleError } from './api.ts';
import { useConsole } from './console-context.tsx';
import type { Company } from './types.ts';
import { ConfirmDialog, Field, TableBox, textOf, useNotice } from './ui.tsx';

interface Credentials {
  readonly company_reference: string;
  readonly name: string;
  readonly client_id: string;
  readonly client_secret: string;
  readonly client_secret_sandbox: string;
}

/** The insurers on this service: adding one, and rotating a company's client secrets. */
export function CompaniesPage() {
  const { api, companies, reloadCompanies } = useConsole();
  const id = useId();
  const messages = useNotice();
  const [shown, setShown] = useState<Credentials | undefined>();
  const [rotating, setRotating] = useState<Company | undefined>();
  const [busy, setBusy] = useState(false);

  return (
    <>
      <h1>Companies</h1>
      <PageMessages error={messages.error} notice={messages.notice} noticeRef={messages.noticeRef} />
      {shown === undefined ? null : (
        <section className="panel secret-box" aria-labelledby={`${id}-secrets`}>
          <h2 id={`${id}-secrets`}>Credentials of {shown.name}</h2>
          <p>Shown this once: pass them to the company now. Only their hashes are kept.</p>
          <dl className="facts">
            <dt>Client id</dt>
            <dd>
              <code>{shown.client_id}</code>
            </dd>
            {shown.client_secret === '' ? null : (
              <>
                <dt>Production secret</dt>
                <dd>
                  <code>{shown.client_secret}</code>
                </dd>
              </>
            )}
            {shown.client_secret_sandbox === '' ? null : (
              <>
                <dt>Sandbox secret</dt>
                <dd>
                  <code>{shown.client_secret_sandbox}</code>
                </dd>
              </>
            )}
          </dl>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              setShown(undefined);
            }}
          >
            I have passed them on
          </button>
        </section>
      )}
      <TableBox label="Companies">
        <table className="grid">
          <thead>
            <tr>
              <th scope="col">Company</th>
              <th scope="col">Reference</th>
              <th scope="col">Client id</th>
              <th scope="col">Contact</th>
              <th scope="col">Secrets rotated</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {companies.map((company) => (
              <tr key={company.company_reference}>
                <th scope="row">{company.name}</th>
                <td>{company.company_reference}</td>
                <td>
                  <code>{company.client_id}</code>
                </td>
                <td>{company.contact_email ?? '—'}</td>
                <td>
                  {company.secrets_rotated_at === null || company.secrets_rotated_at === undefined
                    ? 'Never'
                    : formatDateTime(company.secrets_rotated_at)}
                </td>
                <td>
                  <button
                    type="button"
                    className="secondary"
                    onClick={() => {
                      setRotating(company);
                    }}
                  >
                    Rotate secrets<span className="visually-hidden"> of {company.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
      <section className="panel" aria-labelledby={`${id}-new`}>
        <h2 id={`${id}-new`}>Add a company</h2>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            const form = event.currentTarget;
            const fields = new FormData(form);
            const name = textOf(fields, 'name');
            const contact = textOf(fields, 'contact_email');
            setBusy(true);
            api
              .post<Credentials>('/admin/companies', {
                body: { name, ...(contact === '' ? {} : { contact_email: contact }) },
              })
              .then(
                (created) => {
                  setBusy(false);
                  form.reset();
                  setShown(created);
                  messages.setNotice(`${created.name} was added as ${created.company_reference}.`);
                  reloadCompanies();
                },
                (caught: unknown) => {
                  setBusy(false);
                  messages.setError(consoleError(caught));
                },
              );
          }}
        >
          <Field label="Name" name="name" required maxLength={200} />
          <Field label="Contact email (optional)" name="contact_email" type="email" />
          <button type="submit" className="primary" disabled={busy}>
            Add the company
          </button>
        </form>
      </section>
      {rotating === undefined ? null : (
        <ConfirmDialog
          title={`Rotate the secrets of ${rotating.name}?`}
          confirmLabel="Rotate both secrets"
          onClose={() => {
            setRotating(undefined);
          }}
          onConfirm={async () => {
            const rotated = await api.post<Credentials>(
              `/admin/companies/${encodeURIComponent(rotating.company_reference)}/secrets/rotate`,
              { body: {} },
            );
            setShown(rotated);
            messages.setNotice(`New secrets for ${rotating.name}; the old ones stop working.`);
            reloadCompanies();
          }}
        >
          <p>The company’s current secrets stop working at once, in both environments.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
