import { formatDate, formatRate } from '../../../shared/format.ts';
import type { Policy, Tenant } from '../api-types.ts';
import { followLink, hrefOf, type Route } from '../router.ts';
import { Panel } from './panel.tsx';

/** Quotes made by Milepost are named by a uuid; another quoting engine's reference is shown as it is. */
const MILEPOST_QUOTE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The quote the policy was bound from: a link to its page when Milepost rated it. */
function QuoteOf({ tenant, reference }: { readonly tenant: Tenant; readonly reference: string | undefined }) {
  if (reference === undefined || reference === '') return <>—</>;
  if (!MILEPOST_QUOTE.test(reference)) return <>{reference}</>;
  const route: Route = {
    page: 'quote',
    companyReference: tenant.company.company_reference,
    environment: tenant.environment,
    quoteReference: reference,
  };
  return (
    <a
      href={hrefOf(route)}
      onClick={(event) => {
        followLink(event, route);
      }}
    >
      {reference}
    </a>
  );
}

/** Who and what the policy covers, for how long, at what rate, and the quote it was bound from. */
export function SummaryPanel({ policy, tenant }: { readonly policy: Policy; readonly tenant: Tenant }) {
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
        <dt>Quote</dt>
        <dd>
          <QuoteOf tenant={tenant} reference={pricing.quote_reference} />
        </dd>
        <dt>Account</dt>
        <dd>{policy.user_reference}</dd>
      </dl>
    </Panel>
  );
}
