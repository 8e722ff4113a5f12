import { Fragment, type MouseEvent } from 'react';
import { unwrap } from '../../../sdk/src/client.ts';
import { formatDate, formatDateTime, formatMoney, formatRate } from '../../shared/format.ts';
import { LoadFailed } from '../../shared/messages.tsx';
import { goTo } from '../../shared/router.ts';
import type { Answer, Environment, Tenant } from './api-types.ts';
import { useConsole, useLoad } from './console-context.tsx';
import { ForCompany } from './for-company.tsx';
import { Panel } from './policy/panel.tsx';
import { QuoteBreakdown } from './referrals.tsx';
import { applicantOf, exactPounds, type Applicant } from './quote-input.ts';
import { followLink, hrefOf } from './router.ts';
import { Loading } from './ui.tsx';

type StaffQuote = Answer<'quotes.staffGet'>;
type Breakdown = StaffQuote['breakdown'];

const STATUS_WORDS: Readonly<Record<StaffQuote['status'], string>> = {
  bindable: 'bindable',
  referred: 'referred, waiting for an underwriter',
  declined: 'declined',
  expired: 'expired',
  bound: 'bound',
};

const pence = (amountPence: number): string => exactPounds(amountPence);
const money = (pounds: number | undefined | null): string => (pounds == null ? '—' : formatMoney(pounds));

/** One quote for staff: who and what it rates, the decision and why, the price and how it was made. */
export function QuotePage(props: {
  companyReference: string;
  environment: Environment;
  quoteReference: string;
}) {
  return (
    <ForCompany
      companyReference={props.companyReference}
      environment={props.environment}
      heading={`Quote ${props.quoteReference}`}
      what="the quote"
    >
      {(tenant) => <QuoteView tenant={tenant} quoteReference={props.quoteReference} />}
    </ForCompany>
  );
}

function QuoteView({ tenant, quoteReference }: { tenant: Tenant; quoteReference: string }) {
  const { api } = useConsole();
  const quote = useLoad(
    () =>
      unwrap(
        api.client.GET('/admin/quotes/{quote_reference}', {
          params: {
            path: { quote_reference: quoteReference },
            query: { company_reference: tenant.company.company_reference, environment: tenant.environment },
          },
        }),
      ),
    `${tenant.company.company_reference}/${tenant.environment}/${quoteReference}`,
  );
  if (quote.data === undefined)
    return (
      <>
        <h1>Quote {quoteReference}</h1>
        {quote.error === undefined ? (
          <Loading what="the quote" />
        ) : (
          <LoadFailed what="The quote" error={quote.error} onRetry={quote.reload} />
        )}
      </>
    );
  const data = quote.data;
  return (
    <>
      <h1>
        Quote <span data-testid="quote-reference">{data.quote_reference}</span>
      </h1>
      <p className="lead">
        <span className={`status status-${data.status}`} data-testid="quote-status">
          {STATUS_WORDS[data.status]}
        </span>
        <span>
          {tenant.company.name} ({tenant.company.company_reference})
        </span>
        <span className={`env env-${tenant.environment}`}>{tenant.environment}</span>
      </p>
      <div className="columns">
        <ApplicantPanel applicant={applicantOf(data.input)} pseudonymised={data.pseudonymised} />
        <StatePanel quote={data} tenant={tenant} />
      </div>
      <DecisionPanel quote={data} />
      <PricingPanel quote={data} />
      <Panel title="Breakdown">
        <QuoteBreakdown quote={data} />
        <BreakdownFigures breakdown={data.breakdown} />
      </Panel>
    </>
  );
}

/** Who is quoted and for what: read from the quote as asked (its pseudonym once past retention). */
function ApplicantPanel({ applicant, pseudonymised }: { applicant: Applicant; pseudonymised: boolean }) {
  return (
    <Panel title="Applicant and vehicle">
      {pseudonymised ? (
        <p className="hint">Past the company’s retention and never bound: the quote names no one any more.</p>
      ) : null}
      <dl className="facts" data-testid="quote-applicant">
        <dt>Applicant</dt>
        <dd>{applicant.name || '—'}</dd>
        <dt>Email</dt>
        <dd>{applicant.email || '—'}</dd>
        <dt>Drivers</dt>
        <dd>{applicant.drivers.length === 0 ? '—' : applicant.drivers.join(', ')}</dd>
        <dt>Vehicle</dt>
        <dd>
          {applicant.vehicle || '—'}{' '}
          {applicant.reg === '' ? null : <span className="reg">{applicant.reg}</span>}
        </dd>
        <dt>Value</dt>
        <dd>{money(applicant.valuePounds)}</dd>
        <dt>Address</dt>
        <dd>{applicant.address || '—'}</dd>
        <dt>Cover</dt>
        <dd>{applicant.cover || '—'}</dd>
        <dt>Term</dt>
        <dd>
          {applicant.startAt === undefined || applicant.endAt === undefined
            ? '—'
            : `${formatDate(applicant.startAt)} to ${formatDate(applicant.endAt)}`}
        </dd>
        <dt>Expected mileage</dt>
        <dd>{applicant.yearlyMileage === undefined ? '—' : `${String(applicant.yearlyMileage)} a year`}</dd>
      </dl>
    </Panel>
  );
}

/** Where the quote stands: made, bindable until, bound to which policy; the rate book version that rated it. */
function StatePanel({ quote, tenant }: { quote: StaffQuote; tenant: Tenant }) {
  const { setTenant } = useConsole();
  const company = tenant.company.company_reference;
  const policyLink = (reference: string) => {
    const route = {
      page: 'policy',
      companyReference: company,
      environment: tenant.environment,
      policyReference: reference,
    } as const;
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
  };
  // NOTE: the rate books page shows the company picked above it, so the link picks the quote's first.
  const versionHref = `${hrefOf({ page: 'rate-books' })}?book=${encodeURIComponent(quote.rate_book_reference)}&version=${String(quote.rate_book_version)}`;
  const openVersion = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey || event.button !== 0) return;
    event.preventDefault();
    setTenant(company, tenant.environment);
    goTo(versionHref);
  };
  return (
    <Panel title="State">
      <dl className="facts" data-testid="quote-state">
        <dt>Status</dt>
        <dd>{STATUS_WORDS[quote.status]}</dd>
        <dt>Made</dt>
        <dd>{formatDateTime(quote.created_at)}</dd>
        <dt>Bindable until</dt>
        <dd>{formatDateTime(quote.expires_at)}</dd>
        <dt>Bound</dt>
        <dd>
          {quote.bound_at === null ? 'Not bound' : formatDateTime(quote.bound_at)}
          {quote.bound_policy_reference === null ? null : (
            <> to policy {policyLink(quote.bound_policy_reference)}</>
          )}
        </dd>
        {quote.policy_reference === null ? null : (
          <>
            <dt>Adjusts</dt>
            <dd>policy {policyLink(quote.policy_reference)}</dd>
          </>
        )}
        <dt>Rate book</dt>
        <dd>
          <a href={versionHref} onClick={openVersion}>
            {quote.rate_book_reference} version {quote.rate_book_version}
          </a>
        </dd>
      </dl>
    </Panel>
  );
}

/** The underwriting decision, every rule that matched, and a referral's review. */
function DecisionPanel({ quote }: { quote: StaffQuote }) {
  const { decision, referral } = quote;
  return (
    <Panel title="Decision">
      <p data-testid="quote-decision">
        Underwriting: <strong>{decision.outcome}</strong>
        {decision.reasons.length === 0 ? ', no rule matched.' : '.'}
      </p>
      {decision.reasons.length === 0 ? null : (
        <ul>
          {decision.reasons.map((r) => (
            <li key={r.rule}>
              Rule {r.rule} ({r.outcome}): {r.reason}
            </li>
          ))}
        </ul>
      )}
      {referral === null ? null : (
        <p data-testid="quote-referral">
          Referral {referral.status}
          {referral.decided_by === null
            ? ''
            : ` by ${referral.decided_by.replace(/^staff:/, '')}${referral.decided_at === null ? '' : ` on ${formatDateTime(referral.decided_at)}`}`}
          {referral.reason === null ? '' : `: ${referral.reason}`}
        </p>
      )}
    </Panel>
  );
}

/** The interface’s `pricing` block as the quote fills it (pounds; rates in percent). */
function PricingPanel({ quote }: { quote: StaffQuote }) {
  const { pricing } = quote;
  const unit = pricing.usage_unit;
  const rows: ReadonlyArray<readonly [string, string]> = [
    ['Upfront premium', money(pricing.upfront_premium)],
    [
      'Subscription',
      `${money(pricing.subscription_premium)} × ${String(pricing.subscription_installments ?? 0)}`,
    ],
    ['Rate', formatRate(pricing.usage_rate, unit)],
    ['Base premium', money(pricing.base_premium)],
    ['Yearly estimate', money(pricing.yearly_premium_estimate)],
    [
      'Estimated distance',
      pricing.estimated_distance == null ? '—' : `${String(pricing.estimated_distance)} ${unit}s`,
    ],
    ['Total excess', money(pricing.total_excess)],
    ['Admin fee', money(pricing.admin_fee)],
    ['Deposit fee', money(pricing.deposit_fee)],
    ['Adjustment fee', money(pricing.mta_fee)],
    ['Cancellation fee', money(pricing.cancel_fee)],
    ['IPT', pricing.ipt_rate == null ? '—' : `${String(pricing.ipt_rate)} %`],
    ['Commission', pricing.commission_rate == null ? '—' : `${String(pricing.commission_rate)} %`],
  ];
  return (
    <Panel title="Pricing">
      <dl className="facts" data-testid="quote-pricing">
        {rows.map(([name, value]) => (
          <Fragment key={name}>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </Fragment>
        ))}
      </dl>
    </Panel>
  );
}

/** The fixed part, the per-unit rate, the plan and the usage estimate: each step, the limits and the rounding. */
function BreakdownFigures({ breakdown }: { breakdown: Breakdown }) {
  const { fixed, per_unit: perUnit, installments, usage_estimate: usage } = breakdown;
  const limit =
    fixed.limit_applied === null ? 'none' : fixed.limit_applied === 'minimum' ? 'the minimum' : 'the maximum';
  return (
    <>
      <h3>Fixed part</h3>
      <dl className="facts" data-testid="breakdown-fixed">
        <dt>Base</dt>
        <dd>{pence(fixed.base_pence)} a year</dd>
        <dt>Factors multiplied</dt>
        <dd>{fixed.factor}</dd>
        <dt>Before limits</dt>
        <dd>{exactPounds(fixed.before_limits_pence)}</dd>
        <dt>Limits</dt>
        <dd>
          {pence(fixed.min_pence)} to {pence(fixed.max_pence)}; applied: {limit}
        </dd>
        <dt>After limits</dt>
        <dd>{exactPounds(fixed.after_limits_pence)}</dd>
        <dt>Term</dt>
        <dd>
          {fixed.term_days} of {fixed.year_days} days, IPT {fixed.ipt_rate} %
        </dd>
        <dt>Exact</dt>
        <dd>{exactPounds(fixed.exact_pence)}</dd>
        <dt>Rounded</dt>
        <dd>{pence(fixed.rounded_pence)}</dd>
      </dl>
      <h3>Rate per {breakdown.usage_unit}</h3>
      <dl className="facts" data-testid="breakdown-per-unit">
        <dt>Base rate</dt>
        <dd>£{perUnit.base_rate}</dd>
        <dt>Factors multiplied</dt>
        <dd>{perUnit.factor}</dd>
        <dt>Exact, with IPT</dt>
        <dd>£{perUnit.exact}</dd>
        <dt>Rounded</dt>
        <dd>£{perUnit.rounded}</dd>
      </dl>
      <h3>Plan</h3>
      <dl className="facts" data-testid="breakdown-plan">
        <dt>Plan</dt>
        <dd>{installments.plan}</dd>
        <dt>Loading</dt>
        <dd>{installments.loading_rate}</dd>
        <dt>Total with loading</dt>
        <dd>{exactPounds(installments.exact_total_pence)}</dd>
        <dt>Upfront</dt>
        <dd>{pence(installments.upfront_pence)}</dd>
        <dt>Installments</dt>
        <dd>
          {installments.installments} × {pence(installments.installment_pence)}
        </dd>
        <dt>APR</dt>
        <dd>{installments.apr_percent} %</dd>
      </dl>
      <h3>Usage estimate</h3>
      <dl className="facts" data-testid="breakdown-usage">
        <dt>Distance</dt>
        <dd>
          {usage.annual_distance} {breakdown.usage_unit}s a year; {usage.term_distance} in the term
        </dd>
        <dt>Rate</dt>
        <dd>£{usage.rate}</dd>
        <dt>Exact</dt>
        <dd>{exactPounds(usage.exact_pence)}</dd>
        <dt>Rounded</dt>
        <dd>{pence(usage.rounded_pence)}</dd>
      </dl>
      <p data-testid="breakdown-rounding">
        Rated on {formatDate(breakdown.rated_on)}. Rounding: {breakdown.rounding}
      </p>
    </>
  );
}
