import { useId, useState } from 'react';
import { unwrap, type MilepostClient } from '../../../sdk/src/client.ts';
import type { RateBookContent } from '../../../src/modules/rating/rules/rate-book.ts';
import { formatDateTime } from '../../shared/format.ts';
import { LoadFailed, PageMessages } from '../../shared/messages.tsx';
import type { RateBook, RateBookVersion, Tenant } from './api-types.ts';
import { consoleError as consoleErrorOf } from './api.ts';
import { useConsole, useIsAdmin, useLoad } from './console-context.tsx';
import { DataTable } from './data-table.tsx';
import { RateBookContentView } from './rate-book-content.tsx';
import { ImpactPanel } from './rate-book-impact.tsx';
import { ConfirmDialog, Field, ForTenant, Loading, textOf, useNotice } from './ui.tsx';

type Notice = ReturnType<typeof useNotice>;

const STATUS: Readonly<Record<string, string>> = {
  draft: 'draft',
  approved: 'approved (to come)',
  in_force: 'in force',
  superseded: 'superseded',
};

/** `staff:<email>` as the email; `integration` as it is. */
const who = (actor: string | null): string => (actor === null ? '—' : actor.replace(/^staff:/, ''));

/** The book and version the address names (`?book=car-rates&version=2`), if any. */
function linked(): { book: string | undefined; version: number | undefined } {
  const query = new URLSearchParams(window.location.search);
  const version = Number(query.get('version') ?? '');
  return {
    book: query.get('book') ?? undefined,
    version: Number.isInteger(version) && version > 0 ? version : undefined,
  };
}

/** The company's rate books: creating one, its versions, a version's tables, uploads and approval. */
export function RateBooksPage() {
  return (
    <>
      <h1>Rate books</h1>
      <ForTenant>
        {(tenant) => (
          <RateBooks key={`${tenant.company.company_reference}/${tenant.environment}`} tenant={tenant} />
        )}
      </ForTenant>
    </>
  );
}

function RateBooks({ tenant }: { tenant: Tenant }) {
  const { api } = useConsole();
  const admin = useIsAdmin();
  const books = useLoad(() => unwrap(api.forTenant(tenant).GET('/rate-books')), 'rate books');
  const messages = useNotice();
  const [creating, setCreating] = useState(false);
  // A link (a quote's page) may name the book to open: `?book=<reference>&version=<n>`.
  const [open, setOpen] = useState<string | undefined>(() => linked().book);
  const book = books.data?.rate_books.find((b) => b.rate_book_reference === open);
  return (
    <>
      <PageMessages error={messages.error} notice={messages.notice} noticeRef={messages.noticeRef} />
      {admin ? (
        <p>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              setCreating(true);
            }}
          >
            Create a rate book
          </button>
        </p>
      ) : null}
      {books.error !== undefined ? (
        <LoadFailed what="The rate books" error={books.error} onRetry={books.reload} />
      ) : books.data === undefined ? (
        <Loading what="rate books" />
      ) : books.data.rate_books.length === 0 ? (
        <p className="empty">
          {tenant.company.name} has no rate books in {tenant.environment}.
        </p>
      ) : (
        <DataTable
          label="Rate books"
          testId="rate-books"
          columns={[
            {
              header: 'Rate book',
              cell: (b: RateBook) => (
                <button
                  type="button"
                  className="link-button"
                  aria-pressed={b.rate_book_reference === open}
                  onClick={() => {
                    setOpen(b.rate_book_reference);
                  }}
                >
                  {b.name} ({b.rate_book_reference})
                </button>
              ),
            },
            { header: 'Product', cell: (b) => b.product_reference },
            { header: 'Versions', cell: (b) => b.versions.length, number: true },
            {
              header: 'In force',
              cell: (b) => (b.version_in_force === null ? '—' : `version ${String(b.version_in_force)}`),
            },
          ]}
          rows={books.data.rate_books}
          rowKey={(b) => b.rate_book_reference}
        />
      )}
      {book === undefined ? null : (
        <Versions tenant={tenant} book={book} messages={messages} onChanged={books.reload} />
      )}
      {creating ? (
        <ConfirmDialog
          title="Create a rate book"
          confirmLabel="Create the rate book"
          onClose={() => {
            setCreating(false);
          }}
          onConfirm={async (fields) => {
            const created = await unwrap(
              api.forTenant(tenant).POST('/rate-books', {
                body: {
                  rate_book_reference: textOf(fields, 'rate_book_reference'),
                  product_reference: textOf(fields, 'product_reference'),
                  name: textOf(fields, 'name'),
                },
              }),
            );
            messages.setNotice(`${created.name} was created.`);
            setOpen(created.rate_book_reference);
            books.reload();
          }}
        >
          <Field label="Reference" name="rate_book_reference" required maxLength={100} autoFocus />
          <Field label="Product reference" name="product_reference" required maxLength={100} />
          <Field label="Name" name="name" required maxLength={200} />
        </ConfirmDialog>
      ) : null}
    </>
  );
}

/** A file's text, read in the browser. */
const fileText = (fields: FormData, name: string): Promise<string> => {
  const file = fields.get(name);
  if (!(file instanceof File) || file.size === 0) throw new SyntaxError('Choose a file to upload.');
  return file.text();
};

/** A download of `text` named `name`, made in the page (the export is an authenticated request). */
function download(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  URL.revokeObjectURL(url);
}

function Versions(props: { tenant: Tenant; book: RateBook; messages: Notice; onChanged: () => void }) {
  const { tenant, book, messages } = props;
  const { api } = useConsole();
  const admin = useIsAdmin();
  const id = useId();
  const [uploading, setUploading] = useState(false);
  const [shown, setShown] = useState<number | undefined>(() => {
    const link = linked();
    return link.book === book.rate_book_reference ? link.version : undefined;
  });
  const ref = book.rate_book_reference;
  const client = api.forTenant(tenant);

  /** A JSON file: an exported version (imported), `{content, effective_from?}`, or the content alone. */
  const upload = async (fields: FormData) => {
    const parsed = JSON.parse(await fileText(fields, 'file')) as Record<string, unknown>;
    const path = { rate_book_reference: ref };
    const made =
      parsed['format'] !== undefined
        ? await unwrap(
            client.POST('/rate-books/{rate_book_reference}/versions/import', {
              params: { path },
              body: parsed as never,
            }),
          )
        : await unwrap(
            client.POST('/rate-books/{rate_book_reference}/versions', {
              params: { path },
              body: 'content' in parsed ? (parsed as never) : { content: parsed },
            }),
          );
    messages.setNotice(`Version ${String(made.version_number)} of ${book.name} was uploaded as a draft.`);
    setShown(made.version_number);
    props.onChanged();
  };

  return (
    <section className="panel" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>
        Versions of {book.name} <span className="hint">({ref})</span>
      </h2>
      {admin ? (
        <p>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              setUploading(true);
            }}
          >
            Upload a version (JSON)
          </button>
        </p>
      ) : null}
      {book.versions.length === 0 ? (
        <p className="empty">No versions yet.</p>
      ) : (
        <DataTable
          label={`Versions of ${book.name}`}
          testId="rate-book-versions"
          columns={[
            {
              header: 'Version',
              cell: (v) => (
                <button
                  type="button"
                  className="link-button"
                  aria-pressed={v.version_number === shown}
                  onClick={() => {
                    setShown(v.version_number);
                  }}
                >
                  Version {v.version_number}
                </button>
              ),
            },
            {
              header: 'Status',
              cell: (v) => <span className={`status rate-${v.status}`}>{STATUS[v.status] ?? v.status}</span>,
            },
            {
              header: 'Effective from',
              cell: (v) => (v.effective_from === null ? 'on approval' : formatDateTime(v.effective_from)),
              nowrap: true,
            },
            { header: 'Author', cell: (v) => who(v.author) },
            { header: 'Approver', cell: (v) => who(v.approver) },
          ]}
          rows={book.versions}
          rowKey={(v) => String(v.version_number)}
        />
      )}
      {shown === undefined ? null : (
        <VersionDetail
          key={`${ref}/${String(shown)}/${String(book.versions.find((v) => v.version_number === shown)?.updated_at)}`}
          tenant={tenant}
          book={book}
          number={shown}
          messages={messages}
          onChanged={props.onChanged}
        />
      )}
      {uploading ? (
        <ConfirmDialog
          title={`Upload a version of ${book.name}`}
          confirmLabel="Upload as a draft"
          onClose={() => {
            setUploading(false);
          }}
          onConfirm={upload}
        >
          <p>An exported version, or a version’s content as JSON: it becomes a new draft.</p>
          <div className="field">
            <label htmlFor={`${id}-file`}>Version file (JSON)</label>
            <input id={`${id}-file`} name="file" type="file" accept="application/json,.json" required />
          </div>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

/** Downloads a version as the service exports it: the file an import takes back. */
async function exportVersion(
  client: MilepostClient,
  path: { rate_book_reference: string; version_number: string },
): Promise<void> {
  const file = await unwrap(
    client.GET('/rate-books/{rate_book_reference}/versions/{version_number}/export', { params: { path } }),
  );
  download(
    `${path.rate_book_reference}-v${path.version_number}.json`,
    'application/json',
    JSON.stringify(file, null, 2),
  );
}

function VersionDetail(props: {
  tenant: Tenant;
  book: RateBook;
  number: number;
  messages: Notice;
  onChanged: () => void;
}) {
  const { tenant, book, number, messages } = props;
  const { api, session } = useConsole();
  const admin = useIsAdmin();
  const id = useId();
  const client = api.forTenant(tenant);
  const path = { rate_book_reference: book.rate_book_reference, version_number: String(number) };
  const version = useLoad(
    () =>
      unwrap(client.GET('/rate-books/{rate_book_reference}/versions/{version_number}', { params: { path } })),
    `version ${String(number)}`,
  );
  const [csvFor, setCsvFor] = useState<string | undefined>();
  const [approving, setApproving] = useState(false);
  if (version.error !== undefined)
    return <LoadFailed what={`Version ${String(number)}`} error={version.error} onRetry={version.reload} />;
  if (version.data === undefined) return <Loading what={`version ${String(number)}`} />;
  const v: RateBookVersion = version.data;
  // The content was checked by the service when written (see RateBookContentView).
  const content = v.content as unknown as RateBookContent;
  const draft = v.status === 'draft';
  const mine = v.contributors.includes(`staff:${session.staff.email}`);
  return (
    <section aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>
        Version {number}: {STATUS[v.status] ?? v.status}
      </h3>
      <p>
        Written by {v.contributors.map(who).join(', ') || who(v.author)}
        {v.approver === null
          ? ''
          : `; approved by ${who(v.approver)} on ${formatDateTime(v.approved_at ?? '')}`}
        .
      </p>
      <div className="actions">
        <button
          type="button"
          className="secondary"
          onClick={() => {
            exportVersion(client, path).catch((caught: unknown) => {
              messages.setError(consoleErrorOf(caught));
            });
          }}
        >
          Export as JSON
        </button>
        {admin && draft ? (
          <>
            <button
              type="button"
              className="primary"
              onClick={() => {
                setApproving(true);
              }}
            >
              Approve version {number}
            </button>
            {content.factors.length === 0 ? null : (
              <button
                type="button"
                className="secondary"
                onClick={() => {
                  setCsvFor(content.factors[0]?.name);
                }}
              >
                Upload a factor table (CSV)
              </button>
            )}
          </>
        ) : null}
      </div>
      {mine && draft ? (
        <p className="hint">You wrote this draft, so another admin must approve it (four eyes).</p>
      ) : null}
      {admin && draft ? <ImpactPanel tenant={tenant} book={book} number={number} /> : null}
      <RateBookContentView content={content} />
      {approving ? (
        <ConfirmDialog
          title={`Approve version ${String(number)}?`}
          confirmLabel="Approve"
          onClose={() => {
            setApproving(false);
          }}
          onConfirm={async () => {
            await unwrap(
              client.POST('/rate-books/{rate_book_reference}/versions/{version_number}/approve', {
                params: { path },
              }),
            );
            messages.setNotice(`Version ${String(number)} of ${book.name} is approved.`);
            props.onChanged();
          }}
        >
          <p>Once approved it never changes, and it comes into force from its effective date.</p>
        </ConfirmDialog>
      ) : null}
      {csvFor === undefined ? null : (
        <FactorCsvDialog
          client={client}
          path={path}
          factors={content.factors.map((f) => f.name)}
          chosen={csvFor}
          onClose={() => {
            setCsvFor(undefined);
          }}
          onDone={(name) => {
            messages.setNotice(`The table of ${name} in version ${String(number)} was replaced.`);
            props.onChanged();
          }}
        />
      )}
    </section>
  );
}

/** Replaces one factor's rows in a draft from a CSV file (the service names each bad cell). */
function FactorCsvDialog(props: {
  client: MilepostClient;
  path: { rate_book_reference: string; version_number: string };
  factors: readonly string[];
  chosen: string;
  onClose: () => void;
  onDone: (name: string) => void;
}) {
  const id = useId();
  return (
    <ConfirmDialog
      title="Upload a factor table"
      confirmLabel="Replace the table"
      onClose={props.onClose}
      onConfirm={async (fields) => {
        const name = textOf(fields, 'factor');
        const csv = await fileText(fields, 'csv');
        await unwrap(
          props.client.PUT(
            '/rate-books/{rate_book_reference}/versions/{version_number}/factors/{factor_name}',
            {
              params: { path: { ...props.path, factor_name: name } },
              body: csv,
              bodySerializer: (body: string) => body,
              headers: { 'content-type': 'text/csv' },
            },
          ),
        );
        props.onDone(name);
      }}
    >
      <div className="field">
        <label htmlFor={`${id}-factor`}>Factor</label>
        <select id={`${id}-factor`} name="factor" defaultValue={props.chosen}>
          {props.factors.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-csv`}>Table (CSV: from,to,factor or key,factor)</label>
        <input id={`${id}-csv`} name="csv" type="file" accept="text/csv,.csv" required />
      </div>
    </ConfirmDialog>
  );
}
