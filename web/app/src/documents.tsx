import { useEffect, useState } from 'react';
import { unwrap, type operations } from '../../../sdk/src/index.ts';
import { formatDateTime } from '../../shared/format.ts';
import { humanError } from './errors.ts';
import type { PageProps } from './page-props.ts';
import { usePolicy } from './policy-context.tsx';

type PolicyDocument =
  operations['documents.list']['responses'][200]['content']['application/json']['documents'][number];

/** What each kind of document is, in words. */
const KIND_NAMES: Readonly<Record<PolicyDocument['kind'], string>> = {
  certificate: 'Certificate of motor insurance',
  schedule: 'Policy schedule',
  ipid: 'Insurance product information document',
  statement_of_fact: 'Statement of fact',
  renewal_notice: 'Renewal notice',
  statement: 'Monthly statement',
  credit_note: 'Credit note',
  cancellation_notice: 'Cancellation notice',
};

const sizeOf = (bytes: number): string =>
  bytes < 1024 ? `${String(bytes)} bytes` : `${String(Math.ceil(bytes / 1024))} KB`;

/**
 * The policy's documents, the current certificate first, each opened as a PDF. NOTE: the PDF is
 * fetched with the policyholder's token (in a header) and opened from memory, so the token never
 * appears in an address, a history entry or a server log.
 */
export function DocumentsPage({ session }: PageProps) {
  const { policy, error: policyError } = usePolicy();
  const [documents, setDocuments] = useState<PolicyDocument[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [opening, setOpening] = useState<string | undefined>();
  const reference = policy?.policy_reference;

  useEffect(() => {
    if (reference === undefined) return;
    let live = true;
    unwrap(
      session.client.GET('/policys/{policy_reference}/documents', {
        params: { path: { policy_reference: reference } },
      }),
    ).then(
      (list) => {
        if (!live) return;
        setDocuments(list.documents);
        setError(undefined);
      },
      (caught: unknown) => {
        if (live) setError(humanError(caught));
      },
    );
    return () => {
      live = false;
    };
  }, [session, reference]);

  const open = async (document: PolicyDocument) => {
    // A window opened now, within the click, is not blocked; the PDF is put in it when it arrives.
    const target = window.open('', '_blank');
    setOpening(document.id);
    setError(undefined);
    try {
      const pdf = await unwrap(
        session.client.GET('/documents/{document_id}', {
          params: { path: { document_id: document.id } },
          parseAs: 'blob',
        }),
      );
      const url = URL.createObjectURL(new Blob([pdf], { type: 'application/pdf' }));
      if (target === null) window.location.assign(url);
      else target.location.href = url;
      // The window has loaded it by then; the memory is given back.
      setTimeout(() => {
        URL.revokeObjectURL(url);
      }, 60_000);
    } catch (caught) {
      target?.close();
      setError(humanError(caught));
    } finally {
      setOpening(undefined);
    }
  };

  return (
    <>
      <h1>Documents</h1>
      {(error ?? policyError) === undefined ? null : (
        <p className="message error" role="alert">
          {error ?? policyError}
        </p>
      )}
      {documents === undefined ? (
        error === undefined && policyError === undefined ? (
          <p className="loading" role="status">
            Loading your documents…
          </p>
        ) : null
      ) : documents.length === 0 ? (
        <p className="empty">
          Your documents are being prepared: they appear here a few moments after a change to your policy.
        </p>
      ) : (
        <ul className="plain documents" data-testid="documents">
          {documents.map((document) => (
            <li key={document.id} className="panel">
              <h2>
                {KIND_NAMES[document.kind]}
                {document.current ? <span className="status status-active"> current</span> : null}
              </h2>
              <p className="hint">
                Issued {formatDateTime(document.issued_at)} · PDF, {sizeOf(document.size_bytes)}
                {document.reissue_of === null ? '' : ' · reissued'}
              </p>
              <button
                type="button"
                className="secondary"
                disabled={opening === document.id}
                onClick={() => {
                  void open(document);
                }}
              >
                {opening === document.id ? 'Opening…' : 'Open'}
                <span className="visually-hidden">
                  {' '}
                  {KIND_NAMES[document.kind]} issued {formatDateTime(document.issued_at)} (PDF)
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
