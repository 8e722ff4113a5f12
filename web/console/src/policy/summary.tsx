import { formatDate, formatRate } from '../../../shared/format.ts';
import type { Policy } from '../api-types.ts';
import { Panel } from './panel.tsx';

/** Who and what the policy covers, for how long, at what rate. */
export function SummaryPanel({ policy }: { readonly policy: Policy }) {
  const { policy: cover, proposer, vehicle, pricing } = policy;
  const unit = policy.product?.usage_unit ?? pricing.usage_unit;
  return (
    <Panel title="Summary">
      <dl className="facts">
        <dt>Policyholder</dt>
        <dd>
          {proposer.first_names} {proposer.last_names}
        </dd>
        <dt>Email</dt>
        <dd>{proposer.email}</dd>
        <dt>Vehicle</dt>
        <dd>
          {[vehicle.make, vehicle.model].filter(Boolean).join(' ')} <span className="reg">{vehicle.reg}</span>
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
        <dd>{policy.user_reference}</dd>
      </dl>
    </Panel>
  );
}
