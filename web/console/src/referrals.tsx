import { useState } from 'react';
import { unwrap } from '../../../sdk/src/client.ts';
import { formatDateTime, formatMoney } from '../../shared/format.ts';
import { LoadFailed } from '../../shared/messages.tsx';
import type { Answer, Tenant } from './api-types.ts';
import { consoleError } from './api.ts';
import { useCanAct, useConsole, useLoad } from './console-context.tsx';
import { followLink, hrefOf, type Route } from './router.ts';
import { Field, ForTenant, Loading, TableBox, textOf, useNotice } from './ui.tsx';

type Referral = Answer<'quotes.referrals'>['referrals'][number];

/** The referral queue: referred quotes waiting for an underwriter, oldest first, each with its breakdown. */
export function ReferralsPage() {
  return (
    <>
      <h1>Referrals</h1>
      <ForTenant>{(tenant) => <Referrals tenant={tenant} />}</ForTenant>
    </>
  );
}

function Referrals({ tenant }: { tenant: Tenant }) {
  const { api } = useConsole();
  const notice = useNotice();
  const query = { company_reference: tenant.company.company_reference, environment: tenant.environment };
  const queue = useLoad(
    () => unwrap(api.client.GET('/admin/referrals', { params: { query: { ...query, limit: 100 } } })),
    `${tenant.company.company_reference}/${tenant.environment}`,
  );
  if (queue.error !== undefined)
    return <LoadFailed what="The referral queue" error={queue.error} onRetry={queue.reload} />;
  if (queue.data === undefined) return <Loading what="referrals" />;
  const decide = async (quote: Referral, decision: 'approve' | 'decline', reason: string) => {
    try {
      await unwrap(
        api.client.POST('/admin/referrals/{quote_reference}/decision', {
          params: { path: { quote_reference: quote.quote_reference } },
          body: { ...query, decision, reason },
        }),
      );
      notice.setNotice(
        `Quote ${quote.quote_reference} ${decision === 'approve' ? 'approved' : 'declined'}; the applicant is emailed.`,
      );
      queue.reload();
    } catch (caught) {
      notice.setError(consoleError(caught));
    }
  };
  return (
    <>
      {notice.notice === undefined ? null : (
        <p className="message notice" role="status" tabIndex={-1} ref={notice.noticeRef}>
          {notice.notice}
        </p>
      )}
      {notice.error === undefined ? null : (
        <p className="message error" role="alert">
          {notice.error}
        </p>
      )}
      {queue.data.referrals.length === 0 ? (
        <p className="empty" role="status">
          No referrals waiting for {tenant.company.name} in {tenant.environment}.
        </p>
      ) : (
        queue.data.referrals.map((quote) => (
          <ReferralCard key={quote.quote_reference} quote={quote} tenant={tenant} onDecide={decide} />
        ))
      )}
    </>
  );
}

/** One referred quote: why it was referred, its price and breakdown, and the decision with a reason. */
function ReferralCard(props: {
  quote: Referral;
  tenant: Tenant;
  onDecide: (quote: Referral, decision: 'approve' | 'decline', reason: string) => Promise<void>;
}) {
  const { quote } = props;
  const canAct = useCanAct();
  const [busy, setBusy] = useState(false);
  const id = `referral-${quote.quote_reference}`;
  const page: Route = {
    page: 'quote',
    companyReference: props.tenant.company.company_reference,
    environment: props.tenant.environment,
    quoteReference: quote.quote_reference,
  };
  return (
    <section className="panel" aria-labelledby={id}>
      <h2 id={id}>
        Quote{' '}
        <a
          href={hrefOf(page)}
          onClick={(event) => {
            followLink(event, page);
          }}
        >
          {quote.quote_reference}
        </a>
      </h2>
      <p>
        Asked {formatDateTime(quote.created_at)}; bindable until {formatDateTime(quote.expires_at)} if
        approved. Rate book {quote.rate_book_reference} version {quote.rate_book_version}.
      </p>
      <ul>
        {quote.decision.reasons.map((r) => (
          <li key={r.rule}>
            Rule {r.rule} ({r.outcome}): {r.reason}
          </li>
        ))}
      </ul>
      <QuoteBreakdown quote={quote} />
      {canAct ? (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            const decision =
              event.nativeEvent.submitter?.getAttribute('value') === 'decline' ? 'decline' : 'approve';
            const reason = textOf(new FormData(event.currentTarget), 'reason');
            setBusy(true);
            void props.onDecide(quote, decision, reason).finally(() => {
              setBusy(false);
            });
          }}
        >
          <Field
            label="Reason"
            name="reason"
            required
            maxLength={500}
            hint="Emailed to the applicant and kept in the audit trail."
          />
          <div className="actions">
            <button type="submit" name="decision" value="approve" className="primary" disabled={busy}>
              Approve
            </button>
            <button type="submit" name="decision" value="decline" disabled={busy}>
              Decline
            </button>
          </div>
        </form>
      ) : (
        <p className="hint">Operations or admin staff approve or decline referrals.</p>
      )}
    </section>
  );
}

/** A quote's price and each factor, band and value in order: what staff see of how it was rated. */
export function QuoteBreakdown({
  quote,
}: {
  quote: Pick<Referral, 'quote_reference' | 'pricing' | 'breakdown'>;
}) {
  const { pricing, breakdown } = quote;
  return (
    <>
      <p>
        Fixed {formatMoney(pricing.base_premium ?? pricing.upfront_premium)} a year, {pricing.usage_rate} a{' '}
        {pricing.usage_unit}; estimate {formatMoney(pricing.yearly_premium_estimate ?? 0)} a year.
      </p>
      <TableBox label={`Breakdown of quote ${quote.quote_reference}`}>
        <table>
          <caption>Factors, in the rate book’s order</caption>
          <thead>
            <tr>
              <th scope="col">Factor</th>
              <th scope="col">Applies to</th>
              <th scope="col">Value</th>
              <th scope="col">Band or key</th>
              <th scope="col">Factor</th>
            </tr>
          </thead>
          <tbody>
            {breakdown.factors.map((factor) => (
              <tr key={`${factor.name}-${factor.driver ?? ''}`}>
                <th scope="row">
                  {factor.name}
                  {factor.driver === null ? '' : ` (${factor.driver})`}
                </th>
                <td>{factor.applies_to.replace('_', ' ')}</td>
                <td>{factor.value === null ? '—' : String(factor.value)}</td>
                <td>{factor.matched}</td>
                <td>{factor.factor}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
    </>
  );
}
