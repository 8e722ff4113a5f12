import { unwrap } from '../../../../sdk/src/client.ts';
import { formatDateTime } from '../../../shared/format.ts';
import { useConsole, useLoad } from '../console-context.tsx';
import { Panel, WhenLoaded, type PolicyScope } from './panel.tsx';

/** The devices bound to the policy. */
export function useDevices({ tenant, policyReference, key }: PolicyScope) {
  const { api } = useConsole();
  return useLoad(
    () =>
      unwrap(
        api.forTenant(tenant).GET('/devices', { params: { query: { policy_reference: policyReference } } }),
      ),
    key,
  );
}

export function DevicesPanel({ devices }: { readonly devices: ReturnType<typeof useDevices> }) {
  return (
    <Panel title="Devices">
      <WhenLoaded load={devices} what="devices">
        {({ devices: bound }) =>
          bound.length === 0 ? (
            <p className="empty">No device has been bound to this policy.</p>
          ) : (
            <ul className="plain">
              {bound.map((device) => (
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
          )
        }
      </WhenLoaded>
    </Panel>
  );
}
