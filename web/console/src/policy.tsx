import { useId, useMemo, useState, type ReactNode } from 'react';
import { decodePolyline } from '../../../src/platform/geo/polyline.ts';
import { formatDate, formatDateTime, formatMoney, formatRate } from '../../app/src/format.ts';
import { LoadFailed, PageMessages } from '../../app/src/messages.tsx';
import { RouteMap } from '../../app/src/route-map.tsx';
import { AuditGroups } from './audit.tsx';
import { useCanAct, useConsole, useLoad } from './console-context.tsx';
import type {
  AuditRow,
  Company,
  Device,
  Environment,
  Journey,
  Page,
  Payment,
  Policy,
  PolicyVersion,
  Statement,
  Tenant,
} from './types.ts';
import { ConfirmDialog, Field, Loading, TableBox, textOf, useNotice } from './ui.tsx';

const VERSION_NAMES: Readonly<Record<PolicyVersion['version_type'], string>> = {
  nb: 'New business',
  mta: 'Adjustment',
  st: 'Statement',
  cn: 'Cancellation',
  rn: 'Renewal',
  ls: 'Lapse',
};

/** The summary fields compared between consecutive versions, with how each reads. */
const DIFF_FIELDS: ReadonlyArray<{
  key: keyof PolicyVersion;
  name: string;
  format?: (value: never) => string;
}> = [
  { key: 'proposer_first_names', name: 'First names' },
  { key: 'proposer_last_names', name: 'Last names' },
  { key: 'email', name: 'Email' },
  { key: 'vehicle_reg', name: 'Vehicle' },
  { key: 'address_postcode', name: 'Postcode' },
  { key: 'usage', name: 'Use' },
  { key: 'start_date', name: 'Term start', format: (v: string) => formatDate(v) },
  { key: 'end_date', name: 'Term end', format: (v: string) => formatDate(v) },
  { key: 'usage_rate', name: 'Rate', format: (v: number) => formatRate(v, 'mile').replace(/ a mile$/, '') },
  { key: 'upfront_premium', name: 'Upfront premium', format: (v: number) => formatMoney(v) },
  { key: 'subscription_premium', name: 'Subscription premium', format: (v: number) => formatMoney(v) },
  { key: 'ipt_rate', name: 'IPT rate' },
  { key: 'commission_rate', name: 'Commission rate' },
];

/** What a version changed in the summary fields against the one before it. */
export function versionDiff(
  version: PolicyVersion,
  previous: PolicyVersion | undefined,
): Array<{ name: string; before: string; after: string }> {
  if (previous === undefined) return [];
  const read = (field: (typeof DIFF_FIELDS)[number], value: unknown): string =>
    value === null || value === undefined
      ? '—'
      : field.format !== undefined
        ? field.format(value as never)
        : typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
          ? String(value)
          : JSON.stringify(value);
  return DIFF_FIELDS.filter((field) => version[field.key] !== previous[field.key]).map((field) => ({
    name: field.name,
    before: read(field, previous[field.key]),
    after: read(field, version[field.key]),
  }));
}

/** One policy for staff: everything about it, its audit trail, and the actions the role allows. */
export function PolicyPage(props: {
  companyReference: string;
  environment: Environment;
  policyReference: string;
}) {
  const { api } = useConsole();
  const company = useLoad(
    () => api.get<Company>(`/admin/companies/${encodeURIComponent(props.companyReference)}`),
    props.companyReference,
  );
  if (company.error !== undefined)
    return (
      <>
        <h1>Policy {props.policyReference}</h1>
        <LoadFailed what="The company" error={company.error} onRetry={company.reload} />
      </>
    );
  if (company.data === undefined)
    return (
      <>
        <h1>Policy {props.policyReference}</h1>
        <Loading what="the policy" />
      </>
    );
  return (
    <PolicyView
      tenant={{ company: company.data, environment: props.environment }}
      policyReference={props.policyReference}
    />
  );
}

type Action =
  | { kind: 'void'; journey: Journey }
  | { kind: 'credit' }
  | { kind: 'retry'; payment: Payment }
  | { kind: 'cancel' }
  | { kind: 'welcome' };

function PolicyView({ tenant, policyReference }: { tenant: Tenant; policyReference: string }) {
  const { api } = useConsole();
  const canAct = useCanAct();
  const ids = useId();
  const ref = encodeURIComponent(policyReference);
  const key = `${tenant.company.company_reference}/${tenant.environment}/${policyReference}`;
  const policy = useLoad(() => api.get<Policy>(`/policys/${ref}`, { tenant }), key);
  const ninetyDaysAgo = useMemo(() => Math.floor(Date.now() / 1000) - 90 * 86_400, []);
  const journeys = useLoad(
    () =>
      api.get<{ journeys: Journey[] }>('/journeys', {
        tenant,
        query: { policy_reference: policyReference, from: ninetyDaysAgo, limit: 500 },
      }),
    key,
  );
  const statements = useLoad(
    () =>
      api.get<{ statements: Statement[] }>('/statements', {
        tenant,
        query: { policy_reference: policyReference, limit: 12 },
      }),
    key,
  );
  const payments = useLoad(
    () =>
      api.get<{ payments: Payment[] }>('/payments', { tenant, query: { policy_reference: policyReference } }),
    key,
  );
  const devices = useLoad(
    () =>
      api.get<{ devices: Device[] }>('/devices', { tenant, query: { policy_reference: policyReference } }),
    key,
  );
  const credits = useLoad(
    () =>
      api.get<{ balance: number }>('/admin/credits', {
        query: {
          company_reference: tenant.company.company_reference,
          environment: tenant.environment,
          policy_reference: policyReference,
        },
      }),
    key,
  );
  const audit = useLoad(
    () =>
      api.get<Page<AuditRow>>('/admin/audit', {
        query: {
          policy_reference: policyReference,
          company_reference: tenant.company.company_reference,
          environment: tenant.environment,
          limit: 100,
        },
      }),
    key,
  );
  const [action, setAction] = useState<Action | undefined>();
  const [balance, setBalance] = useState<number | undefined>();
  const messages = useNotice();

  if (policy.error !== undefined)
    return (
      <>
        <h1>Policy {policyReference}</h1>
        <LoadFailed what="The policy" error={policy.error} onRetry={policy.reload} />
      </>
    );
  if (policy.data === undefined)
    return (
      <>
        <h1>Policy {policyReference}</h1>
        <Loading what="the policy" />
      </>
    );
  const details = policy.data;
  const { policy: cover, proposer, vehicle, pricing } = details;
  const live = details.status === 'active' || details.status === 'pending';
  const unit = details.product?.usage_unit ?? pricing.usage_unit;
  const versions = details.versions.filter((v) => !v.superseded);
  const sorted = [...(journeys.data?.journeys ?? [])].reverse();

  /** An action button: absent the role's right to it, shown disabled with the reason beside it. */
  const actionButton = (label: string, next: Action, enabled = true) => (
    <button
      type="button"
      className="secondary"
      disabled={!canAct || !enabled}
      aria-describedby={canAct ? undefined : `${ids}-read-only`}
      onClick={() => {
        setAction(next);
      }}
    >
      {label}
    </button>
  );

  const done = (notice: string, ...reload: Array<() => void>) => {
    messages.setNotice(notice);
    for (const again of [...reload, audit.reload]) again();
  };

  return (
    <>
      <h1>
        Policy <span data-testid="policy-reference">{details.policy_reference}</span>
      </h1>
      <p className="lead">
        <span className={`status status-${details.status}`}>{details.status}</span>
        <span>
          {tenant.company.name} ({tenant.company.company_reference})
        </span>
        <span className={`env env-${tenant.environment}`}>{tenant.environment}</span>
      </p>
      <PageMessages error={messages.error} notice={messages.notice} noticeRef={messages.noticeRef} />
      <section aria-labelledby={`${ids}-actions`} className="panel">
        <h2 id={`${ids}-actions`}>Actions</h2>
        {canAct ? null : (
          <p className="hint" id={`${ids}-read-only`}>
            Your role can read this policy but not act on it.
          </p>
        )}
        <div className="actions">
          {actionButton('Grant a credit', { kind: 'credit' })}
          {actionButton('Resend the welcome email', { kind: 'welcome' })}
          {actionButton('Cancel the policy', { kind: 'cancel' }, live)}
        </div>
        {(balance ?? credits.data?.balance) === undefined ? null : (
          <p data-testid="credit-balance">
            Credit balance: {formatMoney(balance ?? credits.data?.balance ?? 0)}
          </p>
        )}
      </section>

      <div className="columns">
        <section aria-labelledby={`${ids}-summary`} className="panel">
          <h2 id={`${ids}-summary`}>Summary</h2>
          <dl className="facts">
            <dt>Policyholder</dt>
            <dd>
              {proposer.first_names} {proposer.last_names}
            </dd>
            <dt>Email</dt>
            <dd>{proposer.email}</dd>
            <dt>Vehicle</dt>
            <dd>
              {[vehicle.make, vehicle.model].filter(Boolean).join(' ')}{' '}
              <span className="reg">{vehicle.reg}</span>
            </dd>
            <dt>Address</dt>
            <dd data-testid="policy-address">
              {[
                cover.address.line_1,
                cover.address.line_2,
                cover.address.line_3,
                cover.address.city,
                cover.address.postcode,
              ]
                .filter(Boolean)
                .join(', ')}
            </dd>
            <dt>Term</dt>
            <dd>
              {formatDate(cover.start_date)} to {formatDate(cover.end_date)}
            </dd>
            <dt>Cover</dt>
            <dd>{cover.cover}</dd>
            <dt>Product</dt>
            <dd>{cover.product_reference ?? '—'}</dd>
            <dt>Rate</dt>
            <dd>{formatRate(pricing.usage_rate, unit)}</dd>
            <dt>Account</dt>
            <dd>{details.user_reference}</dd>
          </dl>
        </section>

        <section aria-labelledby={`${ids}-devices`} className="panel">
          <h2 id={`${ids}-devices`}>Devices</h2>
          {devices.error !== undefined ? (
            <LoadFailed what="The devices" error={devices.error} onRetry={devices.reload} />
          ) : devices.data === undefined ? (
            <Loading what="devices" />
          ) : devices.data.devices.length === 0 ? (
            <p className="empty">No device has been bound to this policy.</p>
          ) : (
            <ul className="plain">
              {devices.data.devices.map((device) => (
                <li key={device.device_id}>
                  <span className="device-id">{device.device_id}</span> ({device.kind}){' '}
                  <span className={`status status-${device.status}`}>{device.status}</span>
                  <br />
                  <span className="hint">
                    Last seen {device.last_seen_at === null ? 'never' : formatDateTime(device.last_seen_at)}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>

      <section aria-labelledby={`${ids}-versions`} className="panel">
        <h2 id={`${ids}-versions`}>Versions</h2>
        <ol className="versions">
          {versions.map((version, index) => {
            const diff = versionDiff(version, versions[index - 1]);
            return (
              <li key={version.policy_version_reference}>
                <p>
                  <strong>{VERSION_NAMES[version.version_type]}</strong>{' '}
                  <span className="when">
                    effective {formatDateTime(version.effective_date)}, written{' '}
                    {formatDateTime(version.created_at)}
                  </span>
                </p>
                {index === 0 ? null : diff.length === 0 ? (
                  <p className="hint">No change to the summary fields.</p>
                ) : (
                  <TableBox label={`What the ${VERSION_NAMES[version.version_type].toLowerCase()} changed`}>
                    <table className="grid diff">
                      <thead>
                        <tr>
                          <th scope="col">Field</th>
                          <th scope="col">Before</th>
                          <th scope="col">After</th>
                        </tr>
                      </thead>
                      <tbody>
                        {diff.map((change) => (
                          <tr key={change.name}>
                            <th scope="row">{change.name}</th>
                            <td className="before">{change.before}</td>
                            <td className="after">{change.after}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </TableBox>
                )}
              </li>
            );
          })}
        </ol>
      </section>

      <section aria-labelledby={`${ids}-journeys`} className="panel">
        <h2 id={`${ids}-journeys`}>Journeys (last 90 days)</h2>
        {journeys.error !== undefined ? (
          <LoadFailed what="The journeys" error={journeys.error} onRetry={journeys.reload} />
        ) : journeys.data === undefined ? (
          <Loading what="journeys" />
        ) : sorted.length === 0 ? (
          <p className="empty">No journeys in the last 90 days.</p>
        ) : (
          <ul className="plain journeys">
            {sorted.map((journey) => (
              <JourneyRow
                key={journey.journey_reference}
                journey={journey}
                action={journey.is_void ? null : actionButton('Void', { kind: 'void', journey })}
              />
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby={`${ids}-payments`} className="panel">
        <h2 id={`${ids}-payments`}>Payments</h2>
        {payments.error !== undefined ? (
          <LoadFailed what="The payments" error={payments.error} onRetry={payments.reload} />
        ) : payments.data === undefined ? (
          <Loading what="payments" />
        ) : payments.data.payments.length === 0 ? (
          <p className="empty">No payments.</p>
        ) : (
          <PaymentsTable
            payments={payments.data.payments}
            action={(payment) =>
              payment.type === 'charge' &&
              payment.status === 'failed' &&
              payment.policy_version_reference !== null
                ? actionButton('Retry', { kind: 'retry', payment })
                : null
            }
          />
        )}
      </section>

      <section aria-labelledby={`${ids}-statements`} className="panel">
        <h2 id={`${ids}-statements`}>Statements</h2>
        {statements.error !== undefined ? (
          <LoadFailed what="The statements" error={statements.error} onRetry={statements.reload} />
        ) : statements.data === undefined ? (
          <Loading what="statements" />
        ) : statements.data.statements.length === 0 ? (
          <p className="empty">No statements yet.</p>
        ) : (
          <TableBox label="Statements">
            <table className="grid">
              <thead>
                <tr>
                  <th scope="col">Period</th>
                  <th scope="col">Journeys</th>
                  <th scope="col" className="number">
                    Distance
                  </th>
                  <th scope="col" className="number">
                    Total
                  </th>
                  <th scope="col" className="number">
                    Credits used
                  </th>
                  <th scope="col" className="number">
                    Billed
                  </th>
                  <th scope="col">Payment</th>
                </tr>
              </thead>
              <tbody>
                {statements.data.statements.map((statement) => (
                  <tr key={statement.policy_version_reference}>
                    <th scope="row" className="nowrap">
                      {formatDate(statement.statement_start_date)} to{' '}
                      {formatDate(statement.statement_end_date)}
                    </th>
                    <td>{statement.journey_count}</td>
                    <td className="number">{statement.total_miles} miles</td>
                    <td className="number">{formatMoney(statement.total_premium)}</td>
                    <td className="number">{formatMoney(statement.credits_used)}</td>
                    <td className="number">{formatMoney(statement.billed_premium)}</td>
                    <td>
                      {statement.payment === undefined
                        ? '—'
                        : statement.payment.payment_amount === null
                          ? `Failed: ${statement.payment.error_message ?? 'declined'}`
                          : `Paid ${formatMoney(statement.payment.payment_amount)}`}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        )}
      </section>

      <section aria-labelledby={`${ids}-audit`} className="panel">
        <h2 id={`${ids}-audit`}>Audit</h2>
        {audit.error !== undefined ? (
          <LoadFailed what="The audit records" error={audit.error} onRetry={audit.reload} />
        ) : audit.data === undefined ? (
          <Loading what="audit records" />
        ) : (
          <AuditGroups rows={audit.data.data} label="Audit records of this policy" />
        )}
      </section>

      {action === undefined ? null : (
        <ActionDialog
          action={action}
          tenant={tenant}
          policy={details}
          onClose={() => {
            setAction(undefined);
          }}
          onDone={(notice, what) => {
            if (what === 'credit') {
              done(notice);
              return;
            }
            done(
              notice,
              ...(what === 'void' ? [journeys.reload] : []),
              ...(what === 'retry' ? [payments.reload, statements.reload] : []),
              ...(what === 'cancel' ? [policy.reload, payments.reload] : []),
            );
          }}
          onBalance={setBalance}
        />
      )}
    </>
  );
}

const clock = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/London',
  dateStyle: 'medium',
  timeStyle: 'short',
});

function JourneyRow({ journey, action }: { journey: Journey; action: ReactNode }) {
  const { config } = useConsole();
  const [open, setOpen] = useState(false);
  const points = useMemo(() => {
    if (journey.route === '') return undefined;
    const decoded = decodePolyline(journey.route, journey.precision);
    return decoded.ok ? decoded.points : undefined;
  }, [journey.route, journey.precision]);
  const start = journey.start_name ?? journey.start_postcode ?? 'Unknown place';
  const end = journey.end_name ?? journey.end_postcode ?? 'Unknown place';
  const distance =
    journey.distance_units === 'kms' ? `${journey.total_kms} km` : `${journey.total_miles} miles`;
  return (
    <li className={journey.is_void ? 'journey-row void' : 'journey-row'} data-testid="journey">
      <p>
        <strong>{clock.format(journey.start_at * 1000)}</strong> {start} → {end}
      </p>
      <p className="hint">
        {distance} · {formatMoney(journey.usage_premium)} · {journey.source}
        {journey.is_void ? ` · void: ${journey.void_reason ?? 'no reason given'}` : ''}
      </p>
      <div className="actions">
        {points === undefined ? null : (
          <button
            type="button"
            className="link-button"
            aria-expanded={open}
            onClick={() => {
              setOpen(!open);
            }}
          >
            {open ? 'Hide route' : 'Show route'}
            <span className="visually-hidden">
              {' '}
              from {start} to {end}
            </span>
          </button>
        )}
        {action === null ? null : action}
      </div>
      {open && points !== undefined ? (
        <RouteMap points={points} startName={start} endName={end} tileUrl={config.map_tile_url} />
      ) : null}
    </li>
  );
}

export function PaymentsTable({
  payments,
  action,
}: {
  payments: readonly (Payment & { policy_reference?: string })[];
  action?: (payment: Payment) => ReactNode;
}) {
  return (
    <TableBox label="Payments">
      <table className="grid">
        <thead>
          <tr>
            <th scope="col">Created</th>
            <th scope="col">What</th>
            <th scope="col" className="number">
              Amount
            </th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Decline</th>
            <th scope="col">Next attempt</th>
            {action === undefined ? null : <th scope="col">Action</th>}
          </tr>
        </thead>
        <tbody>
          {payments.map((payment) => (
            <tr key={payment.payment_reference}>
              <th scope="row" className="nowrap">
                {formatDateTime(payment.created_at)}
              </th>
              <td>
                {payment.type} for {payment.purpose.replace(/_/g, ' ')}
              </td>
              <td className="number">{formatMoney(payment.amount)}</td>
              <td>
                <span className={`status payment-${payment.status}`}>{payment.status}</span>
              </td>
              <td>{payment.attempts}</td>
              <td>
                {payment.decline_code ?? '—'}
                {payment.error_message === null ? null : (
                  <>
                    <br />
                    <span className="hint">{payment.error_message}</span>
                  </>
                )}
              </td>
              <td className="nowrap">
                {payment.next_attempt_at === null ? '—' : formatDateTime(payment.next_attempt_at)}
              </td>
              {action === undefined ? null : <td>{action(payment)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

function ActionDialog(props: {
  action: Action;
  tenant: Tenant;
  policy: Policy;
  onClose: () => void;
  onDone: (notice: string, what: Action['kind']) => void;
  onBalance: (pounds: number) => void;
}) {
  const { api } = useConsole();
  const { action, tenant, policy, onClose, onDone } = props;
  const ref = encodeURIComponent(policy.policy_reference);
  switch (action.kind) {
    case 'void': {
      const { journey } = action;
      return (
        <ConfirmDialog
          title="Void this journey?"
          confirmLabel="Void the journey"
          onClose={onClose}
          onConfirm={async (fields) => {
            await api.post(`/journeys/${encodeURIComponent(journey.journey_reference)}/void`, {
              tenant,
              body: { reason: textOf(fields, 'reason') },
            });
            onDone(`The journey of ${clock.format(journey.start_at * 1000)} is void.`, 'void');
          }}
        >
          <p>
            {clock.format(journey.start_at * 1000)}: {journey.start_name ?? 'unknown'} →{' '}
            {journey.end_name ?? 'unknown'}, {formatMoney(journey.usage_premium)}. A void journey is not
            charged; a billed one is credited on the next statement.
          </p>
          <Field label="Reason" name="reason" required maxLength={500} autoFocus />
        </ConfirmDialog>
      );
    }
    case 'credit':
      return (
        <ConfirmDialog
          title="Grant a credit"
          confirmLabel="Grant the credit"
          onClose={onClose}
          onConfirm={async (fields) => {
            const amount = Number(textOf(fields, 'amount'));
            const granted = await api.post<{ balance: number }>('/admin/credits', {
              body: {
                company_reference: tenant.company.company_reference,
                environment: tenant.environment,
                policy_reference: policy.policy_reference,
                amount,
                reason: textOf(fields, 'reason'),
              },
            });
            props.onBalance(granted.balance);
            onDone(
              `A credit of ${formatMoney(amount)} was granted; the balance is ${formatMoney(granted.balance)}.`,
              'credit',
            );
          }}
        >
          <p>The credit is taken off the policy’s next statements.</p>
          <Field
            label="Amount in pounds"
            name="amount"
            type="number"
            inputMode="decimal"
            min="0.01"
            step="0.01"
            required
            autoFocus
          />
          <Field label="Reason" name="reason" required maxLength={500} />
        </ConfirmDialog>
      );
    case 'retry': {
      const { payment } = action;
      return (
        <ConfirmDialog
          title="Retry this payment now?"
          confirmLabel="Retry the payment"
          onClose={onClose}
          onConfirm={async () => {
            const product = policy.policy.product_reference;
            const outcome = await api.post<{ payment_amount?: number | null; error_message?: string }>(
              '/payments',
              {
                tenant,
                body: {
                  type: 'RETRY_PAYMENT',
                  // The interface asks every payment request for a product; a retry does not use it.
                  product_reference: product ?? 'unspecified',
                  policy_reference: policy.policy_reference,
                  policy_version_reference: payment.policy_version_reference,
                },
              },
            );
            onDone(
              outcome.payment_amount === null || outcome.payment_amount === undefined
                ? `The retry failed: ${outcome.error_message ?? 'the card was declined'}.`
                : `The retry collected ${formatMoney(outcome.payment_amount)}.`,
              'retry',
            );
          }}
        >
          <p>
            Charges the card on file {formatMoney(payment.amount)} for the{' '}
            {payment.purpose.replace(/_/g, ' ')} now, instead of waiting for the next scheduled attempt.
          </p>
        </ConfirmDialog>
      );
    }
    case 'cancel':
      return (
        <ConfirmDialog
          title="Cancel this policy?"
          confirmLabel="Cancel the policy"
          onClose={onClose}
          onConfirm={async (fields) => {
            const reason = textOf(fields, 'reason');
            await api.delete(`/policys/${ref}`, { tenant, body: reason === '' ? {} : { reason } });
            onDone(`Policy ${policy.policy_reference} is cancelled.`, 'cancel');
          }}
        >
          <p>
            Cover ends now. Any refund or charge is worked out from the remaining term. This cannot be undone.
          </p>
          <Field label="Reason" name="reason" maxLength={500} autoFocus />
        </ConfirmDialog>
      );
    case 'welcome':
      return (
        <ConfirmDialog
          title="Resend the welcome email?"
          confirmLabel="Send it"
          onClose={onClose}
          onConfirm={async () => {
            const sent = await api.post<{ sent_to: string }>(`/policys/${ref}/welcome-email`, { tenant });
            onDone(`The welcome email was sent to ${sent.sent_to}.`, 'welcome');
          }}
        >
          <p>Sends the welcome email, with the sign-in details, to {policy.proposer.email} again.</p>
        </ConfirmDialog>
      );
  }
}
