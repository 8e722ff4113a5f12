import { useState } from 'react';
import { MilepostError } from '../../../sdk/src/index.ts';
import { formatMoney } from '../../shared/format.ts';
import { CardForm } from './card-form.tsx';
import type { AppConfig } from './config.ts';
import { humanError } from './errors.ts';
import { authenticate, purchase, secretOf, type Quote } from './quote-api.ts';
import { Panel } from './sign-in-forms.tsx';
import { CardProblem } from './stripe-sandbox.ts';
import { navigate } from './router.ts';

interface OutcomeProps {
  readonly config: AppConfig;
  readonly quote: Quote;
  /** Back to the questions, for another quote. */
  readonly onChange: () => void;
}

type Bought = {
  readonly username: string;
  /** A new account: its temporary password is in the welcome email. */
  readonly newAccount: boolean;
  readonly policyReference: string;
};

const SENTENCES: Readonly<Record<string, string>> = {
  PAYMENT_DECLINED: 'Your card was declined, and nothing was taken. Please try another card.',
  QUOTE_NOT_BINDABLE: 'This quote can no longer be bought. Please ask for a new quote.',
  NOT_FOUND:
    'We cannot find this quote in this browser: open the link in the browser you asked for the quote in, or ask for a new quote.',
};

/** This page for buying one quote (a referred one, once an underwriter approves it). */
export function buyLink(quoteReference: string): string {
  const query = new URLSearchParams(window.location.search);
  query.set('quote', quoteReference);
  return `${window.location.pathname}?${query.toString()}`;
}

const pence = (pounds: number): string => `${(pounds * 100).toFixed(2).replace(/\.?0+$/, '')}p`;

/** The quote's price as the customer reads it: the fixed part (a year's, and a month's share) and the rate a mile. */
function Price({ quote }: { quote: Quote }) {
  const { pricing } = quote;
  const installments = pricing.subscription_installments ?? 0;
  const monthly = installments > 0;
  // In whole pence: the year's fixed part is the upfront premium and every installment.
  const fixedPence =
    Math.round(pricing.upfront_premium * 100) +
    (monthly ? Math.round(pricing.subscription_premium * 100) * installments : 0);
  const fixed = fixedPence / 100;
  const factors = quote.breakdown.factors;
  return (
    <>
      <p className="quote-price">
        <strong>{formatMoney(monthly ? pricing.subscription_premium : fixed / 12)} a month</strong> plus{' '}
        <strong>{pence(pricing.usage_rate)} a mile</strong>
      </p>
      <p>
        {monthly
          ? `The fixed part, ${formatMoney(fixed)} for the year, is paid in ${String(installments)} monthly installments of ${formatMoney(pricing.subscription_premium)}, the first today.`
          : `The fixed part, ${formatMoney(fixed)} for the year, is paid today.`}{' '}
        Each mile you drive is billed monthly at {pence(pricing.usage_rate)}. With your estimate that is about{' '}
        {formatMoney(pricing.yearly_premium_estimate ?? fixed)} a year, including Insurance Premium Tax.
      </p>
      {factors.length === 0 ? null : (
        <table className="quote-factors">
          <caption>How your price was worked out</caption>
          <thead>
            <tr>
              <th scope="col">What we looked at</th>
              <th scope="col">Your answer</th>
              <th scope="col">Effect</th>
            </tr>
          </thead>
          <tbody>
            {factors.map((factor) => (
              <tr key={`${factor.name}-${factor.driver ?? ''}`}>
                <th scope="row">{factor.name.replace(/-/g, ' ')}</th>
                <td>{factor.value === null ? '—' : String(factor.value)}</td>
                <td>× {factor.factor}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/** The quote (with buying it), or the referral or decline with its reasons. */
export function QuoteOutcome({ config, quote, onChange }: OutcomeProps) {
  const [bought, setBought] = useState<Bought | undefined>();
  if (bought !== undefined) return <SignInAfterPurchase bought={bought} />;
  const reasons = quote.decision.reasons.map((r) => r.reason);
  if (quote.status !== 'bindable')
    return (
      <Panel
        title={quote.status === 'referred' ? 'Your quote needs an underwriter' : 'We cannot offer cover'}
        status={null}
      >
        <p role="status">
          {quote.status === 'referred'
            ? 'An underwriter will look at your quote and email you. If it is approved, open the buying link below in this browser tab to buy it.'
            : 'We are sorry: we cannot insure this car and driver.'}
        </p>
        {reasons.length === 0 ? null : (
          <ul>
            {reasons.map((reason) => (
              <li key={reason}>{reason}</li>
            ))}
          </ul>
        )}
        <p>
          Your quote reference: <span className="reference">{quote.quote_reference}</span>
        </p>
        {quote.status === 'referred' ? (
          <p>
            <a href={buyLink(quote.quote_reference)}>Your link to buy this quote once it is approved</a>
          </p>
        ) : null}
        <p>
          <button type="button" className="link-button" onClick={onChange}>
            Change your answers
          </button>
        </p>
      </Panel>
    );
  return (
    <Panel title="Your quote" status={null}>
      <Price quote={quote} />
      <p>
        Your quote reference: <span className="reference">{quote.quote_reference}</span>
      </p>
      <h2>Buy your policy</h2>
      <BuyForm
        config={config}
        quoteReference={quote.quote_reference}
        secret={quote.purchase_secret}
        amount={quote.pricing.upfront_premium}
        onBought={setBought}
      />
      <p>
        <button type="button" className="link-button" onClick={onChange}>
          Change your answers
        </button>
      </p>
    </Panel>
  );
}

/** The card, the first payment (with 3-D Secure when the bank asks), and the policy bound. */
export function BuyForm(props: {
  config: AppConfig;
  quoteReference: string;
  /** The quote's purchase secret: from the quote in memory, or this tab's session storage. */
  secret: string | undefined;
  amount: number | undefined;
  onBought: (bought: Bought) => void;
}) {
  const { config, quoteReference, secret } = props;
  const buy = async (paymentMethodId: string) => {
    try {
      let answer = await purchase(config, quoteReference, secret, paymentMethodId);
      if (answer.status === 'requires_action') {
        await authenticate(config, answer);
        answer = await purchase(config, quoteReference, secret, paymentMethodId);
      }
      if (answer.status !== 'bound')
        throw new Error('Your bank did not confirm the payment. Please try again.');
      props.onBought({
        username: answer.sign_in.username,
        newAccount: answer.sign_in.type === 'TEMPORARY_PASSWORD_SENT',
        policyReference: answer.policy_reference,
      });
    } catch (caught) {
      // The card form shows a CardProblem's sentence under the card.
      if (caught instanceof CardProblem) throw caught;
      const known = caught instanceof MilepostError ? SENTENCES[caught.code] : undefined;
      throw new CardProblem(
        known ??
          (caught instanceof Error && !(caught instanceof MilepostError)
            ? caught.message
            : humanError(caught)),
      );
    }
  };
  const label = props.amount === undefined ? 'Pay and buy' : `Pay ${formatMoney(props.amount)} and buy`;
  return <CardForm config={config} submitLabel={label} onPaymentMethod={buy} />;
}

/**
 * Bought: the buyer signs in. A new account with the temporary password of its welcome email, then
 * chooses a password (the sign-in's next step); one that existed with its own password.
 */
export function SignInAfterPurchase({ bought }: { bought: Bought }) {
  const status = (
    <p className="message notice" role="status">
      You are insured: policy {bought.policyReference}. We have emailed your welcome pack.
    </p>
  );
  return (
    <Panel title="Sign in to your policy" status={status}>
      {bought.newAccount ? (
        <p>
          We have emailed your username and a temporary password to {bought.username}: sign in with them, then
          choose your own password.
        </p>
      ) : (
        <p>You already have an account with us: sign in with your password to see your new policy.</p>
      )}
      <button
        type="button"
        className="primary"
        onClick={() => {
          navigate('sign-in');
        }}
      >
        Sign in
      </button>
    </Panel>
  );
}

/** Buying a quote by its reference (a referral approved since it was asked): the card, then the sign-in. */
export function BuyApprovedQuote(props: { config: AppConfig; quoteReference: string }) {
  const [bought, setBought] = useState<Bought | undefined>();
  if (bought !== undefined) return <SignInAfterPurchase bought={bought} />;
  return (
    <Panel title="Buy your quote" status={null}>
      <p>
        Quote reference: <span className="reference">{props.quoteReference}</span>. Once an underwriter has
        approved it, pay for the year’s fixed part with your card to be insured.
      </p>
      <BuyForm
        config={props.config}
        quoteReference={props.quoteReference}
        secret={secretOf(props.quoteReference)}
        amount={undefined}
        onBought={setBought}
      />
    </Panel>
  );
}
