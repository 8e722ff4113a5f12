import { useId, useState } from 'react';
import { unwrap, type operations } from '../../../../sdk/src/client.ts';
import { formatDateTime } from '../../../shared/format.ts';
import { useCanAct, useConsole, useLoad } from '../console-context.tsx';
import { DataTable } from '../data-table.tsx';
import { ConfirmDialog, textOf, useNotice } from '../ui.tsx';
import { Panel, WhenLoaded, type PolicyScope } from './panel.tsx';

type PolicyDocument =
  operations['documents.list']['responses'][200]['content']['application/json']['documents'][number];

const KIND_NAMES: Readonly<Record<PolicyDocument['kind'], string>> = {
  certificate: 'Certificate of motor insurance',
  schedule: 'Policy schedule',
  ipid: 'Product information (IPID)',
  statement_of_fact: 'Statement of fact',
  renewal_notice: 'Renewal notice',
  statement: 'Statement',
  credit_note: 'Credit note',
  cancellation_notice: 'Cancellation notice',
};

/**
 * The policy's documents, the current certificate first, with a Reissue action for operations and
 * admins (a new document rendered with today's template; the original stays as issued).
 */
export function DocumentsPanel({ scope }: { readonly scope: PolicyScope }) {
  const { api } = useConsole();
  const canAct = useCanAct();
  const hintId = useId();
  const [generation, setGeneration] = useState(0);
  const [reissuing, setReissuing] = useState<PolicyDocument | undefined>();
  const messages = useNotice();
  const documents = useLoad(
    () =>
      unwrap(
        api.forTenant(scope.tenant).GET('/policys/{policy_reference}/documents', {
          params: { path: { policy_reference: scope.policyReference } },
        }),
      ),
    `${scope.key}#documents#${String(generation)}`,
  );
  return (
    <Panel title="Documents">
      {messages.notice === undefined ? null : (
        <p className="message notice" role="status" tabIndex={-1} ref={messages.noticeRef}>
          {messages.notice}
        </p>
      )}
      {canAct ? null : (
        <p className="hint" id={hintId}>
          Reissuing a document needs the operations or admin role.
        </p>
      )}
      <WhenLoaded load={documents} what="documents">
        {(list) =>
          list.documents.length === 0 ? (
            <p className="empty">No documents yet.</p>
          ) : (
            <DataTable
              label="Documents"
              testId="documents"
              rows={list.documents}
              rowKey={(document) => document.id}
              columns={[
                {
                  header: 'Document',
                  cell: (document) => (
                    <>
                      {KIND_NAMES[document.kind]}
                      {document.current ? <span className="status status-active"> current</span> : null}
                    </>
                  ),
                },
                { header: 'Issued', nowrap: true, cell: (document) => formatDateTime(document.issued_at) },
                {
                  header: 'File',
                  cell: (document) => (
                    <>
                      {document.file_name}
                      <br />
                      <span className="hint">
                        template {document.template_version}
                        {document.reissue_of === null ? '' : ' · a reissue'}
                      </span>
                    </>
                  ),
                },
                {
                  header: 'Action',
                  cell: (document) => (
                    <button
                      type="button"
                      className="secondary"
                      disabled={!canAct}
                      aria-describedby={canAct ? undefined : hintId}
                      onClick={() => {
                        setReissuing(document);
                      }}
                    >
                      Reissue<span className="visually-hidden"> {document.file_name}</span>
                    </button>
                  ),
                },
              ]}
            />
          )
        }
      </WhenLoaded>
      {reissuing === undefined ? null : (
        <ConfirmDialog
          title={`Reissue the ${KIND_NAMES[reissuing.kind].toLowerCase()}?`}
          confirmLabel="Reissue"
          onClose={() => {
            setReissuing(undefined);
          }}
          onConfirm={async (fields) => {
            const reissued = await unwrap(
              api
                .forTenant(scope.tenant)
                .POST('/policys/{policy_reference}/documents/{document_id}/reissue', {
                  params: { path: { policy_reference: scope.policyReference, document_id: reissuing.id } },
                  body: { reason: textOf(fields, 'reason') },
                }),
            );
            messages.setNotice(`${reissued.file_name} was issued.`);
            setGeneration((n) => n + 1);
          }}
        >
          <p>A new document is made with today’s template; {reissuing.file_name} stays as it was issued.</p>
          <ReasonField />
        </ConfirmDialog>
      )}
    </Panel>
  );
}

function ReasonField() {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>Reason</label>
      <textarea id={id} name="reason" rows={3} required maxLength={500} />
    </div>
  );
}
