import { formatDate, formatDateTime, formatMoney, formatRate } from '../../../shared/format.ts';
import type { PolicyVersion } from '../api-types.ts';
import { TableBox } from '../ui.tsx';
import { Panel } from './panel.tsx';

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

/** The policy's versions in force (superseded ones left out), each with what it changed. */
export function VersionsPanel({ versions }: { readonly versions: readonly PolicyVersion[] }) {
  const shown = versions.filter((v) => !v.superseded);
  return (
    <Panel title="Versions">
      <ol className="versions">
        {shown.map((version, index) => (
          <li key={version.policy_version_reference}>
            <p>
              <strong>{VERSION_NAMES[version.version_type]}</strong>{' '}
              <span className="when">
                effective {formatDateTime(version.effective_date)}, written{' '}
                {formatDateTime(version.created_at)}
              </span>
            </p>
            {index === 0 ? null : <VersionChanges version={version} previous={shown[index - 1]} />}
          </li>
        ))}
      </ol>
    </Panel>
  );
}

function VersionChanges(props: { version: PolicyVersion; previous: PolicyVersion | undefined }) {
  const diff = versionDiff(props.version, props.previous);
  if (diff.length === 0) return <p className="hint">No change to the summary fields.</p>;
  return (
    <TableBox label={`What the ${VERSION_NAMES[props.version.version_type].toLowerCase()} changed`}>
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
  );
}
