import { useId, useState } from 'react';
import { unwrap } from '../../../sdk/src/client.ts';
import { formatDateTime } from '../../shared/format.ts';
import { LoadFailed, PageMessages } from '../../shared/messages.tsx';
import { useCanAct, useConsole, useLoad } from './console-context.tsx';
import type { Tenant, Webhook, WebhookDelivery } from './api-types.ts';
import { ConfirmDialog, ForTenant, Loading, TableBox, useNotice } from './ui.tsx';

/** The company's webhook endpoints, each one's deliveries with their attempts, and retrying one. */
export function WebhooksPage() {
  return (
    <>
      <h1>Webhooks</h1>
      <ForTenant>
        {(tenant) => (
          <Webhooks key={`${tenant.company.company_reference}/${tenant.environment}`} tenant={tenant} />
        )}
      </ForTenant>
    </>
  );
}

function Webhooks({ tenant }: { tenant: Tenant }) {
  const { api } = useConsole();
  const id = useId();
  const endpoints = useLoad(() => unwrap(api.forTenant(tenant).GET('/webhooks')), 'endpoints');
  const [chosen, setChosen] = useState<string | undefined>();
  if (endpoints.error !== undefined)
    return <LoadFailed what="The endpoints" error={endpoints.error} onRetry={endpoints.reload} />;
  if (endpoints.data === undefined) return <Loading what="endpoints" />;
  const list = endpoints.data.webhooks;
  if (list.length === 0)
    return (
      <p className="empty" role="status">
        {tenant.company.name} has no webhook endpoints in {tenant.environment}.
      </p>
    );
  const selected = list.find((endpoint) => endpoint.id === chosen);
  return (
    <>
      <section className="panel" aria-labelledby={`${id}-endpoints`}>
        <h2 id={`${id}-endpoints`}>Endpoints</h2>
        <ul className="plain endpoints">
          {list.map((endpoint) => (
            <li key={endpoint.id}>
              <button
                type="button"
                className="link-button"
                aria-pressed={endpoint.id === chosen}
                onClick={() => {
                  setChosen(endpoint.id);
                }}
              >
                {endpoint.url}
              </button>{' '}
              <span className={`status ${endpoint.enabled ? 'status-active' : 'status-cancelled'}`}>
                {endpoint.enabled ? 'enabled' : `disabled (${endpoint.disabled_reason ?? 'manual'})`}
              </span>
              <br />
              <span className="hint">
                {endpoint.events === null ? 'Every event' : endpoint.events.join(', ')}
                {endpoint.failing_since === null
                  ? ''
                  : ` · failing since ${formatDateTime(endpoint.failing_since)}`}
              </span>
            </li>
          ))}
        </ul>
      </section>
      {selected === undefined ? (
        <p className="hint">Choose an endpoint to see its deliveries.</p>
      ) : (
        <Deliveries key={selected.id} tenant={tenant} endpoint={selected} />
      )}
    </>
  );
}

type DeliveryStatus = WebhookDelivery['status'];
const STATUSES: readonly DeliveryStatus[] = ['failed', 'pending', 'succeeded'];
const statusOf = (value: string): DeliveryStatus | '' => STATUSES.find((status) => status === value) ?? '';

function Deliveries({ tenant, endpoint }: { tenant: Tenant; endpoint: Webhook }) {
  const { api } = useConsole();
  const id = useId();
  const [status, setStatus] = useState<DeliveryStatus | ''>('');
  const deliveries = useLoad(
    () =>
      unwrap(
        api.forTenant(tenant).GET('/webhooks/{id}/deliveries', {
          params: { path: { id: endpoint.id }, query: { limit: 50, ...(status === '' ? {} : { status }) } },
        }),
      ),
    status,
  );
  const [retrying, setRetrying] = useState<WebhookDelivery | undefined>();
  const messages = useNotice();
  return (
    <section className="panel" aria-labelledby={`${id}-deliveries`}>
      <h2 id={`${id}-deliveries`}>Deliveries to {endpoint.url}</h2>
      <div className="field inline">
        <label htmlFor={`${id}-status`}>Show</label>
        <select
          id={`${id}-status`}
          value={status}
          onChange={(event) => {
            setStatus(statusOf(event.target.value));
          }}
        >
          <option value="">All</option>
          <option value="failed">Failed</option>
          <option value="pending">Pending</option>
          <option value="succeeded">Succeeded</option>
        </select>
      </div>
      <PageMessages error={messages.error} notice={messages.notice} noticeRef={messages.noticeRef} />
      {deliveries.error !== undefined ? (
        <LoadFailed what="The deliveries" error={deliveries.error} onRetry={deliveries.reload} />
      ) : deliveries.data === undefined ? (
        <Loading what="deliveries" />
      ) : deliveries.data.deliveries.length === 0 ? (
        <p className="empty">No deliveries.</p>
      ) : (
        <DeliveriesTable deliveries={deliveries.data.deliveries} onRetry={setRetrying} />
      )}
      {retrying === undefined ? null : (
        <ConfirmDialog
          title="Send this delivery again?"
          confirmLabel="Retry the delivery"
          onClose={() => {
            setRetrying(undefined);
          }}
          onConfirm={async () => {
            await unwrap(
              api.forTenant(tenant).POST('/webhooks/{id}/deliveries/{delivery_id}/retry', {
                params: { path: { id: endpoint.id, delivery_id: retrying.id } },
              }),
            );
            messages.setNotice(`The ${retrying.event_type} delivery is queued to be sent again.`);
            deliveries.reload();
          }}
        >
          <p>
            The {retrying.event_type} event is sent to {endpoint.url} again, with the same webhook id.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}

function DeliveriesTable(props: {
  deliveries: readonly WebhookDelivery[];
  onRetry: (delivery: WebhookDelivery) => void;
}) {
  const canAct = useCanAct();
  return (
    <TableBox label="Deliveries">
      <table className="grid">
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last answer</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {props.deliveries.map((delivery) => (
            <tr key={delivery.id}>
              <th scope="row">
                {delivery.event_type}
                <br />
                <span className="hint">{formatDateTime(delivery.created_at)}</span>
              </th>
              <td>
                <span className={`status delivery-${delivery.status}`}>{delivery.status}</span>
              </td>
              <td>
                <details>
                  <summary>{delivery.attempt_count}</summary>
                  <ol className="attempts">
                    {delivery.attempts.map((attempt) => (
                      <li key={attempt.attempt}>
                        {formatDateTime(attempt.started_at)}: {attempt.status}
                        {attempt.response_status_code === null
                          ? ''
                          : ` (HTTP ${attempt.response_status_code})`}
                        {attempt.error === null ? '' : ` — ${attempt.error}`}, {attempt.duration_ms} ms
                      </li>
                    ))}
                  </ol>
                </details>
              </td>
              <td>
                {delivery.last_response_status_code === null
                  ? '—'
                  : `HTTP ${delivery.last_response_status_code}`}
                {delivery.last_error === null ? null : (
                  <>
                    <br />
                    <span className="hint">{delivery.last_error}</span>
                  </>
                )}
              </td>
              <td>
                {delivery.status === 'succeeded' ? null : (
                  <button
                    type="button"
                    className="secondary"
                    disabled={!canAct}
                    onClick={() => {
                      props.onRetry(delivery);
                    }}
                  >
                    Retry
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}
