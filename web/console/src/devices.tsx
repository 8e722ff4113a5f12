import { unwrap } from '../../../sdk/src/client.ts';
import { formatDateTime } from '../../shared/format.ts';
import { LoadFailed } from '../../shared/messages.tsx';
import { useConsole, useLoad } from './console-context.tsx';
import { followLink, hrefOf } from './router.ts';
import type { Tenant } from './api-types.ts';
import { ForTenant, Loading, TableBox } from './ui.tsx';

/** Bound devices that have gone quiet, for the company picked. */
export function DevicesPage() {
  return (
    <>
      <h1>Devices offline</h1>
      <ForTenant>{(tenant) => <OfflineDevices tenant={tenant} />}</ForTenant>
    </>
  );
}

function OfflineDevices({ tenant }: { tenant: Tenant }) {
  const { api } = useConsole();
  const devices = useLoad(
    () =>
      unwrap(api.forTenant(tenant).GET('/devices', { params: { query: { status: 'offline', limit: 200 } } })),
    `${tenant.company.company_reference}/${tenant.environment}`,
  );
  if (devices.error !== undefined)
    return <LoadFailed what="The devices" error={devices.error} onRetry={devices.reload} />;
  if (devices.data === undefined) return <Loading what="devices" />;
  const offline = devices.data.devices;
  if (offline.length === 0)
    return (
      <p className="empty" role="status">
        Every bound device of {tenant.company.name} in {tenant.environment} is online.
      </p>
    );
  return (
    <TableBox label="Offline devices">
      <table className="grid">
        <thead>
          <tr>
            <th scope="col">Device</th>
            <th scope="col">Kind</th>
            <th scope="col">Policy</th>
            <th scope="col">Last seen</th>
          </tr>
        </thead>
        <tbody>
          {offline.map((device) => {
            const target =
              device.policy_reference === null
                ? undefined
                : ({
                    page: 'policy',
                    companyReference: tenant.company.company_reference,
                    environment: tenant.environment,
                    policyReference: device.policy_reference,
                  } as const);
            return (
              <tr key={device.device_id}>
                <th scope="row" className="device-id">
                  {device.device_id}
                </th>
                <td>{device.kind}</td>
                <td>
                  {target === undefined ? (
                    '—'
                  ) : (
                    <a
                      href={hrefOf(target)}
                      onClick={(event) => {
                        followLink(event, target);
                      }}
                    >
                      {target.policyReference}
                    </a>
                  )}
                </td>
                <td>{device.last_seen_at === null ? 'Never' : formatDateTime(device.last_seen_at)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableBox>
  );
}
