import { useEffect, useState } from 'react';
import { unwrap, type components, type PolicyDetails } from '../../../sdk/src/index.ts';
import { LoadFailed } from '../../shared/messages.tsx';
import { humanError } from './errors.ts';
import { formatDate, formatDateTime, formatDistance } from '../../shared/format.ts';
import { DEVICE_KIND_LABELS } from './labels.ts';
import type { PageProps } from './page-props.ts';
import { usePolicy } from './policy-context.tsx';

type Device = components['schemas']['Device'];

/** What to try when a device of this kind goes quiet. */
const KIND_ADVICE: Readonly<Record<Device['kind'], string>> = {
  obd: 'Check that the dongle is firmly plugged into the car’s diagnostic (OBD) port.',
  connected_car: 'Check that the car’s connected services are switched on in its settings.',
  phone: 'Open the app on your phone and check that it may use your location.',
};

const relative = new Intl.RelativeTimeFormat('en-GB', { numeric: 'auto' });

/** "just now", "5 minutes ago", "3 hours ago", "2 days ago": the largest unit that reads naturally. */
function formatAgo(iso: string, nowMs: number): string {
  // A device's clock may run a little ahead of ours: never "in 1 minute".
  const minutes = Math.min(0, Math.round((Date.parse(iso) - nowMs) / 60_000));
  if (minutes === 0) return 'just now';
  if (Math.abs(minutes) < 60) return relative.format(minutes, 'minute');
  const hours = Math.round(minutes / 60);
  if (Math.abs(hours) < 48) return relative.format(hours, 'hour');
  return relative.format(Math.round(hours / 24), 'day');
}

export function DevicePage({ session }: PageProps) {
  const { policy, error } = usePolicy();
  const reference = policy?.policy_reference;
  const [devices, setDevices] = useState<Device[] | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const [attempt, setAttempt] = useState(0);
  const [nowMs, setNowMs] = useState(() => Date.now());

  useEffect(() => {
    if (reference === undefined) return;
    let live = true;
    setLoadError(undefined);
    unwrap(session.client.GET('/devices', { params: { query: { policy_reference: reference } } })).then(
      (list) => {
        if (!live) return;
        setDevices(list.devices);
        setNowMs(Date.now());
      },
      (caught: unknown) => {
        if (live) setLoadError(humanError(caught));
      },
    );
    return () => {
      live = false;
    };
  }, [session, reference, attempt]);

  // "x minutes ago" stays true while the page is open.
  useEffect(() => {
    const timer = setInterval(() => {
      setNowMs(Date.now());
    }, 60_000);
    return () => {
      clearInterval(timer);
    };
  }, []);

  let body;
  if (error !== undefined)
    body = (
      <p className="message error" role="alert">
        {error}
      </p>
    );
  else if (loadError !== undefined)
    body = (
      <LoadFailed
        what="Your device"
        error={loadError}
        onRetry={() => {
          setAttempt((n) => n + 1);
        }}
      />
    );
  else if (policy === undefined || devices === undefined) body = <p role="status">Loading your device…</p>;
  else {
    const device = devices.find((d) => d.policy_reference === policy.policy_reference);
    body =
      device === undefined ? (
        <p className="card" data-testid="no-device">
          No device is linked to your policy. Your insurer links one when it is fitted or when you set up the
          app.
        </p>
      ) : (
        <DeviceCard device={device} policy={policy} nowMs={nowMs} />
      );
  }

  return (
    <>
      <h1>Device</h1>
      {body}
    </>
  );
}

function DeviceCard({ device, policy, nowMs }: { device: Device; policy: PolicyDetails; nowMs: number }) {
  const binding = device.bindings.find(
    (b) => b.policy_reference === policy.policy_reference && b.unbound_at === null,
  );
  const offline = device.status === 'offline';
  return (
    <>
      <section aria-labelledby="device-title" className="card">
        <h2 id="device-title">{DEVICE_KIND_LABELS[device.kind]}</h2>
        <p className="lead">
          <span className={`status status-${device.status}`} data-testid="device-status">
            {offline ? 'Offline' : 'Online'}
          </span>
        </p>
        <dl className="facts">
          <dt>Device</dt>
          <dd className="device-id">{device.device_id}</dd>
          <dt>Kind</dt>
          <dd>{DEVICE_KIND_LABELS[device.kind]}</dd>
          {device.vin === null ? null : (
            <>
              <dt>Car (VIN)</dt>
              <dd className="device-id">{device.vin}</dd>
            </>
          )}
          {binding === undefined ? null : (
            <>
              <dt>Linked since</dt>
              <dd>{formatDate(binding.bound_at)}</dd>
            </>
          )}
          <dt>Last seen</dt>
          <dd data-testid="last-seen">
            {device.last_seen_at === null ? (
              'Nothing received yet'
            ) : (
              <>
                <time dateTime={device.last_seen_at}>{formatDateTime(device.last_seen_at)}</time> (
                {formatAgo(device.last_seen_at, nowMs)})
              </>
            )}
          </dd>
        </dl>
      </section>
      {offline ? <OfflineWarning device={device} policy={policy} /> : null}
    </>
  );
}

function OfflineWarning({ device, policy }: { device: Device; policy: PolicyDetails }) {
  const rule = policy.product?.rules.device_offline;
  const unit = policy.product?.usage_unit ?? policy.pricing.usage_unit;
  return (
    <section aria-labelledby="offline-title" className="card offline-warning">
      <h2 id="offline-title">Your device is offline</h2>
      <p>
        We have not received anything from it
        {device.last_seen_at === null
          ? ' since it was linked'
          : ` since ${formatDateTime(device.last_seen_at)}`}
        . While it is offline your journeys are not recorded, and an estimated distance may be billed instead.
      </p>
      {rule === undefined ? null : (
        <p data-testid="offline-rule">
          Under your policy’s terms, after {rule.grace_days} {rule.grace_days === 1 ? 'day' : 'days'} without
          data, each whole day without data is billed as{' '}
          {formatDistance(rule.estimated_distance_per_day, unit)} (a device counts as offline after{' '}
          {rule.after_hours} {rule.after_hours === 1 ? 'hour' : 'hours'} without data). Estimates for days
          whose data arrives later are taken off your bill.
        </p>
      )}
      <p>{KIND_ADVICE[device.kind]}</p>
    </section>
  );
}
