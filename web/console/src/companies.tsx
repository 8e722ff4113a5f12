import { useId, useState } from 'react';
import { unwrap } from '../../../sdk/src/client.ts';
import { formatDateTime } from '../../shared/format.ts';
import { PageMessages } from '../../shared/messages.tsx';
import { consoleError } from './api.ts';
import type { Company, CompanyCredentials } from './api-types.ts';
import { useConsole } from './console-context.tsx';
import { ConfirmDialog, Field, TableBox, textOf, useNotice } from './ui.tsx';

type Notice = ReturnType<typeof useNotice>;

/** The insurers on this service: adding one, and rotating a company's client secrets. */
export function CompaniesPage() {
  const { api, companies, reloadCompanies } = useConsole();
  const messages = useNotice();
  const [shown, setShown] = useState<CompanyCredentials | undefined>();
  const [rotating, setRotating] = useState<Company | undefined>();

  return (
    <>
      <h1>Companies</h1>
      <PageMessages error={messages.error} notice={messages.notice} noticeRef={messages.noticeRef} />
      {shown === undefined ? null : (
        <CredentialsBox
          credentials={shown}
          onPassedOn={() => {
            setShown(undefined);
          }}
        />
      )}
      <CompaniesTable companies={companies} onRotate={setRotating} />
      <AddCompany messages={messages} onCreated={setShown} />
      {rotating === undefined ? null : (
        <ConfirmDialog
          title={`Rotate the secrets of ${rotating.name}?`}
          confirmLabel="Rotate both secrets"
          onClose={() => {
            setRotating(undefined);
          }}
          onConfirm={async () => {
            const rotated = await unwrap(
              api.client.POST('/admin/companies/{company_reference}/secrets/rotate', {
                params: { path: { company_reference: rotating.company_reference } },
                body: {},
              }),
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

/** A company's client id and new secrets, shown once. */
function CredentialsBox({
  credentials,
  onPassedOn,
}: {
  credentials: CompanyCredentials;
  onPassedOn: () => void;
}) {
  const id = useId();
  return (
    <section className="panel secret-box" aria-labelledby={`${id}-secrets`}>
      <h2 id={`${id}-secrets`}>Credentials of {credentials.name}</h2>
      <p>Shown this once: pass them to the company now. Only their hashes are kept.</p>
      <dl className="facts">
        <dt>Client id</dt>
        <dd>
          <code>{credentials.client_id}</code>
        </dd>
        {credentials.client_secret === '' ? null : (
          <>
            <dt>Production secret</dt>
            <dd>
              <code>{credentials.client_secret}</code>
            </dd>
          </>
        )}
        {credentials.client_secret_sandbox === '' ? null : (
          <>
            <dt>Sandbox secret</dt>
            <dd>
              <code>{credentials.client_secret_sandbox}</code>
            </dd>
          </>
        )}
      </dl>
      <button type="button" className="secondary" onClick={onPassedOn}>
        I have passed them on
      </button>
    </section>
  );
}

function CompaniesTable(props: { companies: readonly Company[]; onRotate: (company: Company) => void }) {
  return (
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
          {props.companies.map((company) => (
            <tr key={company.company_reference}>
              <th scope="row">{company.name}</th>
              <td>{company.company_reference}</td>
              <td>
                <code>{company.client_id}</code>
              </td>
              <td>{company.contact_email ?? '—'}</td>
              <td>
                {company.secrets_rotated_at === null ? 'Never' : formatDateTime(company.secrets_rotated_at)}
              </td>
              <td>
                <button
                  type="button"
                  className="secondary"
                  onClick={() => {
                    props.onRotate(company);
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
  );
}

function AddCompany(props: { messages: Notice; onCreated: (credentials: CompanyCredentials) => void }) {
  const { api, reloadCompanies } = useConsole();
  const { messages } = props;
  const id = useId();
  const [busy, setBusy] = useState(false);
  return (
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
          unwrap(
            api.client.POST('/admin/companies', {
              body: { name, ...(contact === '' ? {} : { contact_email: contact }) },
            }),
          ).then(
            (created) => {
              setBusy(false);
              form.reset();
              props.onCreated(created);
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
  );
}
