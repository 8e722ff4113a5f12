import type { PolicyDetails } from '../../../sdk/src/index.ts';
import { formatDate, formatDistance, formatMoney, formatRate } from '../../shared/format.ts';
import { codeLabel, POLICY_STATUS_LABELS, VERSION_TYPE_LABELS } from './labels.ts';
import type { PageProps } from './page-props.ts';
import { usePolicy } from './policy-context.tsx';

type Version = PolicyDetails['versions'][number];

/** What a version changed against the one before it, in words. */
function changes(version: Version, previous: Version | undefined, unit: 'mile' | 'km'): string[] {
  if (previous === undefined) return [];
  const out: string[] = [];
  const was = (key: keyof Version) => version[key] !== previous[key];
  if (was('vehicle_reg')) out.push(`Car ${previous.vehicle_reg} → ${version.vehicle_reg}`);
  if (was('usage'))
    out.push(`Use ${codeLabel('usage', previous.usage)} → ${codeLabel('usage', version.usage)}`);
  if (was('address_postcode'))
    out.push(`Postcode ${previous.address_postcode} → ${version.address_postcode}`);
  if (was('email')) out.push(`Email ${previous.email} → ${version.email}`);
  if (was('proposer_first_names') || was('proposer_last_names'))
    out.push(
      `Name ${previous.proposer_first_names} ${previous.proposer_last_names} → ${version.proposer_first_names} ${version.proposer_last_names}`,
    );
  if (was('start_date') || was('end_date'))
    out.push(`Term ${formatDate(version.start_date)} to ${formatDate(version.end_date)}`);
  if (was('usage_rate'))
    out.push(`Rate ${formatRate(previous.usage_rate, unit)} → ${formatRate(version.usage_rate, unit)}`);
  if (was('upfront_premium'))
    out.push(
      `Upfront premium ${formatMoney(previous.upfront_premium)} → ${formatMoney(version.upfront_premium)}`,
    );
  if (was('subscription_premium'))
    out.push(
      `Subscription ${formatMoney(previous.subscription_premium)} → ${formatMoney(version.subscription_premium)}`,
    );
  return out;
}

export function PolicyPage(_props: PageProps) {
  const { policy, error } = usePolicy();
  if (error !== undefined)
    return (
      <>
        <h1>My policy</h1>
        <p className="message error" role="alert">
          {error}
        </p>
      </>
    );
  if (policy === undefined)
    return (
      <>
        <h1>My policy</h1>
        <p role="status">Loading your policy…</p>
      </>
    );
  const unit = policy.product?.usage_unit ?? policy.pricing.usage_unit;
  return (
    <>
      <h1>My policy</h1>
      <p className="lead">
        <span className="reference" data-testid="policy-reference">
          {policy.policy_reference}
        </span>{' '}
        <span className={`status status-${policy.status}`}>{POLICY_STATUS_LABELS[policy.status]}</span>
      </p>
      <CoverCard policy={policy} />
      <PriceCard policy={policy} unit={unit} />
      <HistoryCard versions={policy.versions} unit={unit} />
    </>
  );
}

/** What is covered: the car, who, where and for how long. */
function CoverCard({ policy }: { policy: PolicyDetails }) {
  const { policy: cover, proposer, vehicle } = policy;
  const address = [
    cover.address.line_1,
    cover.address.line_2,
    cover.address.line_3,
    cover.address.city,
    cover.address.postcode,
  ]
    .filter((line): line is string => line !== undefined && line !== '')
    .join(', ');
  return (
    <section aria-labelledby="cover-title" className="card">
      <h2 id="cover-title">Your cover</h2>
      <dl className="facts">
        <dt>Cover</dt>
        <dd>{codeLabel('cover', cover.cover)}</dd>
        <dt>Use</dt>
        <dd>{codeLabel('usage', cover.usage)}</dd>
        <dt>Car</dt>
        <dd>
          {[vehicle.make, vehicle.model].filter(Boolean).join(' ')} <span className="reg">{vehicle.reg}</span>
        </dd>
        {vehicle.colour === undefined || vehicle.colour === '' ? null : (
          <>
            <dt>Colour</dt>
            <dd>{codeLabel('colour', vehicle.colour)}</dd>
          </>
        )}
        {vehicle.fuel === undefined || vehicle.fuel === '' ? null : (
          <>
            <dt>Fuel</dt>
            <dd>{codeLabel('fuel', vehicle.fuel)}</dd>
          </>
        )}
        <dt>Name</dt>
        <dd>
          {proposer.first_names} {proposer.last_names}
        </dd>
        <dt>Address</dt>
        <dd>{address}</dd>
        <dt>Term</dt>
        <dd>
          {formatDate(cover.start_date)} to {formatDate(cover.end_date)}
        </dd>
      </dl>
    </section>
  );
}

/** The rate, the premiums and the product's caps, free distance and minimum. */
function PriceCard({ policy, unit }: { policy: PolicyDetails; unit: 'mile' | 'km' }) {
  const { pricing } = policy;
  const rules = policy.product?.rules;
  return (
    <section aria-labelledby="price-title" className="card">
      <h2 id="price-title">What you pay</h2>
      <dl className="facts">
        <dt>Per {unit === 'km' ? 'kilometre' : 'mile'}</dt>
        <dd>{formatRate(pricing.usage_rate, unit)}</dd>
        {pricing.upfront_premium > 0 ? (
          <>
            <dt>Upfront</dt>
            <dd>{formatMoney(pricing.upfront_premium)}</dd>
          </>
        ) : null}
        {pricing.subscription_premium > 0 ? (
          <>
            <dt>Each instalment</dt>
            <dd>{formatMoney(pricing.subscription_premium)}</dd>
          </>
        ) : null}
        {rules?.daily_cap_distance !== undefined ? (
          <>
            <dt>Daily cap</dt>
            <dd>You pay for at most {formatDistance(rules.daily_cap_distance, unit)} a day</dd>
          </>
        ) : null}
        {rules?.annual_cap_distance !== undefined ? (
          <>
            <dt>Yearly cap</dt>
            <dd>You pay for at most {formatDistance(rules.annual_cap_distance, unit)} a policy year</dd>
          </>
        ) : null}
        {rules?.free_distance_per_statement !== undefined ? (
          <>
            <dt>Free distance</dt>
            <dd>
              The first {formatDistance(rules.free_distance_per_statement, unit)} of each statement are free
            </dd>
          </>
        ) : null}
        {rules?.minimum_usage_premium !== undefined ? (
          <>
            <dt>Minimum</dt>
            <dd>At least {formatMoney(rules.minimum_usage_premium)} of driving per statement</dd>
          </>
        ) : null}
      </dl>
    </section>
  );
}

/** The versions in force, oldest first, each change with what it changed. */
function HistoryCard({ versions, unit }: { versions: readonly Version[]; unit: 'mile' | 'km' }) {
  const shown = versions.filter((v) => !v.superseded);
  // Statements are versions too; what a change changed is told against the change before it.
  const changesOnly = shown.filter((v) => v.version_type !== 'st');
  return (
    <section aria-labelledby="history-title" className="card">
      <h2 id="history-title">History</h2>
      <ol className="history">
        {shown.map((version) => {
          const previous = changesOnly[changesOnly.indexOf(version) - 1];
          const changed = version.version_type === 'st' ? [] : changes(version, previous, unit);
          return (
            <li key={version.policy_version_reference}>
              <span className="when">{formatDate(version.effective_date)}</span>{' '}
              <strong>{VERSION_TYPE_LABELS[version.version_type]}</strong>
              {changed.length > 0 ? (
                <ul>
                  {changed.map((line) => (
                    <li key={line}>{line}</li>
                  ))}
                </ul>
              ) : null}
            </li>
          );
        })}
      </ol>
    </section>
  );
}
