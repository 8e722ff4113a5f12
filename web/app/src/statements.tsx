import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import {
  MilepostError,
  unwrap,
  type operations,
  type PolicyDetails,
  type Session,
} from '../../../sdk/src/index.ts';
import { CardForm } from './card-form.tsx';
import { addPaymentMethod, productReferenceOf } from './cards.tsx';
import type { AppConfig } from './config.ts';
import { PageMessages } from '../../shared/messages.tsx';
import { humanError } from './errors.ts';
import { formatDate, formatDateTime, formatDistance, formatMoney } from '../../shared/format.ts';
import type { PageProps } from './page-props.ts';
import { usePolicy } from './policy-context.tsx';
import { CardProblem } from './stripe-sandbox.ts';

type StatementList = operations['statements.list']['responses'][200]['content']['application/json'];
type Statement = StatementList['statements'][number];
type Journey = Statement['journeys'][number];
type PaymentRecord =
  operations['payments.list']['responses'][200]['content']['application/json']['payments'][number];
type Unit = 'mile' | 'km';

/** Why a bank said no, in words (Stripe's decline codes). */
const DECLINES: Readonly<Record<string, string>> = {
  insufficient_funds: 'Your bank declined the payment: the card does not have enough funds.',
  expired_card: 'The card has expired.',
  generic_decline: 'Your bank declined the payment.',
  card_declined: 'Your bank declined the payment.',
  do_not_honor: 'Your bank declined the payment.',
  lost_card: 'Your bank declined the card.',
  stolen_card: 'Your bank declined the card.',
  card_not_supported: 'This card cannot be used for this payment.',
  authentication_required:
    'Your bank wants you to approve this payment, which it cannot ask while you are away. Please add your card again to pay now.',
  processing_error: 'The payment could not be processed. Please try again.',
};

/** A failed payment's reason as a sentence: the decline code's, or the processor's own when it is one. */
export function declineReason(declineCode: string | null, message: string | null | undefined): string {
  const known = declineCode === null ? undefined : DECLINES[declineCode];
  if (known !== undefined) return known;
  if (message !== null && message !== undefined && /^[A-Z][^_{}[\]]*\.$/.test(message)) return message;
  return 'The payment did not go through.';
}

/** The statement's charge: a succeeded one when there is one, else the latest attempt. */
function paymentOf(statement: Statement, payments: readonly PaymentRecord[]): PaymentRecord | undefined {
  const charges = payments.filter(
    (p) =>
      p.type === 'charge' &&
      p.purpose === 'statement' &&
      p.policy_version_reference === statement.policy_version_reference,
  );
  return charges.find((p) => p.status === 'succeeded' || p.status === 'refunded') ?? charges.at(-1);
}

const needsCard = (payment: PaymentRecord | undefined): boolean =>
  payment?.status === 'failed' || payment?.status === 'requires_action';

/** The payment line: what happened to the billed amount. */
function paymentStatus(statement: Statement, payment: PaymentRecord | undefined): string {
  if (payment === undefined) {
    if (statement.billed_premium === 0) return 'Nothing to pay';
    if (statement.carried_forward > 0) return 'Below the minimum card payment: added to your next statement';
    return 'Not charged yet';
  }
  switch (payment.status) {
    case 'succeeded':
      return `Paid ${formatMoney(payment.amount)}`;
    case 'refunded':
      return `Paid ${formatMoney(payment.amount)}, refunded ${formatMoney(payment.refunded_amount)}`;
    case 'pending':
      return 'Payment in progress';
    case 'requires_action':
      return 'Waiting for your bank';
    case 'canceled':
      return 'Payment cancelled';
    case 'failed':
      return 'Payment failed';
    case 'scheduled':
      return `Direct Debit of ${formatMoney(payment.amount)} on ${payment.collect_on ?? 'its day'}`;
    case 'processing':
      return `Direct Debit of ${formatMoney(payment.amount)} with your bank`;
  }
}

const distanceOf = (item: { total_miles: number; total_kms: number }, unit: Unit): string =>
  formatDistance(unit === 'km' ? item.total_kms : item.total_miles, unit);

/**
 * RETRY_PAYMENT for a statement's version. A 409 is "already paid" (adding the card collects what
 * waited for one) or "in progress" (that collection is running now).
 */
async function payNow(
  session: Session,
  policy: PolicyDetails,
  statement: Statement,
): Promise<'paid' | 'in progress'> {
  try {
    const outcome = await unwrap(
      session.client.POST('/payments', {
        body: {
          type: 'RETRY_PAYMENT',
          policy_reference: policy.policy_reference,
          product_reference: productReferenceOf(policy) ?? '',
          policy_version_reference: statement.policy_version_reference,
        },
      }),
    );
    if (outcome.payment_amount === null)
      throw new CardProblem(
        `Your new card is saved, but the payment did not go through. ${declineReason(null, outcome.error_message)}`,
      );
    return 'paid';
  } catch (caught) {
    if (caught instanceof MilepostError && caught.status === 409)
      return caught.code === 'ALREADY_PAID' ? 'paid' : 'in progress';
    throw caught;
  }
}

export function StatementsPage({ session, config }: PageProps) {
  const { policy, error: policyError, reload } = usePolicy();
  const [statements, setStatements] = useState<Statement[] | undefined>();
  const [cursor, setCursor] = useState<string | null>(null);
  const [payments, setPayments] = useState<PaymentRecord[]>([]);
  const [error, setError] = useState<string | undefined>();
  const [loadingMore, setLoadingMore] = useState(false);
  const [notice, setNotice] = useState<string | undefined>();
  const [generation, setGeneration] = useState(0);
  const noticeRef = useRef<HTMLParagraphElement>(null);
  const reference = policy?.policy_reference;

  useEffect(() => {
    if (reference === undefined) return;
    let live = true;
    Promise.all([
      unwrap(session.client.GET('/statements', { params: { query: { policy_reference: reference } } })),
      unwrap(session.client.GET('/payments', { params: { query: { policy_reference: reference } } })),
    ]).then(
      ([list, paid]) => {
        if (!live) return;
        setStatements(list.statements);
        setCursor(list.next_cursor);
        setPayments(paid.payments);
        setError(undefined);
      },
      (caught: unknown) => {
        if (live) setError(humanError(caught));
      },
    );
    return () => {
      live = false;
    };
  }, [session, reference, generation]);

  useLayoutEffect(() => {
    if (notice !== undefined) noticeRef.current?.focus();
  }, [notice]);

  const loadOlder = async () => {
    if (reference === undefined || cursor === null) return;
    setLoadingMore(true);
    try {
      const older = await unwrap(
        session.client.GET('/statements', {
          params: { query: { policy_reference: reference, before: cursor } },
        }),
      );
      setStatements((shown) => [...(shown ?? []), ...older.statements]);
      setCursor(older.next_cursor);
    } catch (caught) {
      setError(humanError(caught));
    } finally {
      setLoadingMore(false);
    }
  };

  const paid = useCallback(
    (statement: Statement, outcome: 'paid' | 'in progress') => {
      const period = `${formatDate(statement.statement_start_date)} to ${formatDate(statement.statement_end_date)}`;
      setNotice(
        outcome === 'paid'
          ? `Thank you: the statement for ${period} is paid with your new card.`
          : `Your new card is saved and the payment for ${period} is being taken now.`,
      );
      setGeneration((n) => n + 1);
      reload();
    },
    [reload],
  );

  const failure = policyError ?? error;
  const unit: Unit = policy?.product?.usage_unit ?? policy?.pricing.usage_unit ?? 'mile';
  return (
    <>
      <h1>Statements</h1>
      <PageMessages error={failure} notice={notice} noticeRef={noticeRef} />
      {statements === undefined ? (
        failure === undefined ? (
          <p role="status">Loading your statements…</p>
        ) : null
      ) : statements.length === 0 ? (
        <p className="card">
          No statements yet. Your first statement comes at the end of your first billing period.
        </p>
      ) : (
        <ol className="statements">
          {statements.map((statement) => (
            <li key={statement.policy_version_reference}>
              <StatementCard
                statement={statement}
                payment={paymentOf(statement, payments)}
                unit={unit}
                session={session}
                config={config}
                policy={policy}
                onPaid={paid}
              />
            </li>
          ))}
        </ol>
      )}
      {cursor !== null && statements !== undefined ? (
        <button type="button" className="link-button" onClick={() => void loadOlder()} disabled={loadingMore}>
          {loadingMore ? 'Loading older statements…' : 'Show older statements'}
        </button>
      ) : null}
    </>
  );
}

function StatementCard(props: {
  statement: Statement;
  payment: PaymentRecord | undefined;
  unit: Unit;
  session: Session;
  config: AppConfig;
  policy: PolicyDetails | undefined;
  onPaid: (statement: Statement, outcome: 'paid' | 'in progress') => void;
}) {
  const { statement, payment, unit, policy } = props;
  const id = `statement-${statement.policy_version_reference}`;
  const canPay = needsCard(payment) && policy !== undefined && productReferenceOf(policy) !== undefined;
  return (
    <section className="card statement" aria-labelledby={`${id}-title`} data-testid="statement">
      <h2 id={`${id}-title`}>
        {formatDate(statement.statement_start_date)} to {formatDate(statement.statement_end_date)}
      </h2>
      <p className="lead">
        <span className={`status payment-${payment?.status ?? 'none'}`} data-testid="payment-status">
          {paymentStatus(statement, payment)}
        </span>
      </p>
      {needsCard(payment) ? (
        <div className="message error" data-testid="payment-failure">
          <p>
            {declineReason(payment?.decline_code ?? null, payment?.error_message)}
            {payment?.next_attempt_at === null || payment?.next_attempt_at === undefined
              ? ''
              : ` We will try the card again on ${formatDate(payment.next_attempt_at)}.`}
          </p>
        </div>
      ) : null}
      {canPay ? <PayNow {...props} policy={policy} /> : null}
      <StatementFigures statement={statement} unit={unit} />
      <CappedDays statement={statement} unit={unit} />
      <details className="statement-journeys">
        <summary>Journeys ({statement.journeys.length})</summary>
        {statement.journeys.length === 0 ? (
          <p>No journeys in this statement.</p>
        ) : (
          <ol className="journey-lines">
            {statement.journeys.map((journey) => (
              <JourneyLine key={journey.journey_reference} journey={journey} unit={unit} />
            ))}
          </ol>
        )}
      </details>
    </section>
  );
}

/** A failed charge paid with a new card: the button, then the card form. */
function PayNow(props: {
  statement: Statement;
  payment: PaymentRecord | undefined;
  session: Session;
  config: AppConfig;
  policy: PolicyDetails;
  onPaid: (statement: Statement, outcome: 'paid' | 'in progress') => void;
}) {
  const { statement, payment, session, policy, onPaid } = props;
  const [paying, setPaying] = useState(false);
  const pay = async (paymentMethodId: string) => {
    await addPaymentMethod(session, policy, paymentMethodId);
    const outcome = await payNow(session, policy, statement);
    setPaying(false);
    onPaid(statement, outcome);
  };
  if (!paying)
    return (
      <button
        type="button"
        className="primary"
        onClick={() => {
          setPaying(true);
        }}
      >
        Update card and pay now
      </button>
    );
  return (
    <div className="panel pay-now">
      <h3>Update card and pay now</h3>
      <CardForm
        config={props.config}
        submitLabel={`Save card and pay ${formatMoney(payment?.amount ?? statement.billed_premium)}`}
        onPaymentMethod={pay}
        onCancel={() => {
          setPaying(false);
        }}
      />
    </div>
  );
}

/** The statement's figures: distance, premiums, credits and what was billed. */
function StatementFigures({ statement, unit }: { statement: Statement; unit: Unit }) {
  const credits: Array<[string, number]> = [
    ['Daily cap credit', statement.cap_credit],
    ['Yearly cap credit', statement.annual_cap_credit],
    ['Free distance credit', statement.free_distance_credit],
    ['Goodwill credit', statement.credits_used],
  ];
  return (
    <dl className="facts">
      <dt>Distance</dt>
      <dd>
        {distanceOf(statement, unit)} in {statement.journey_count}{' '}
        {statement.journey_count === 1 ? 'journey' : 'journeys'}
      </dd>
      <dt>Usage premium</dt>
      <dd>{formatMoney(statement.usage_premium)}</dd>
      {statement.subscription_premium > 0 ? (
        <>
          <dt>Subscription</dt>
          <dd>
            {formatMoney(statement.subscription_premium)} ({statement.subscription_installments}{' '}
            {statement.subscription_installments === 1 ? 'instalment' : 'instalments'})
          </dd>
        </>
      ) : null}
      {credits
        .filter(([, amount]) => amount > 0)
        .map(([name, amount]) => (
          <CreditLine key={name} name={name} amount={amount} />
        ))}
      {statement.minimum_top_up > 0 ? (
        <>
          <dt>Minimum top-up</dt>
          <dd>{formatMoney(statement.minimum_top_up)}</dd>
        </>
      ) : null}
      {statement.score_adjustment !== 0 ? (
        <>
          <dt>{statement.score_adjustment < 0 ? 'Driving score discount' : 'Driving score surcharge'}</dt>
          <dd>
            {statement.score_adjustment < 0 ? '−' : ''}
            {formatMoney(Math.abs(statement.score_adjustment))} (
            {statement.score_months.map((m) => `${monthName(m.month)}: ${scoreMonthText(m)}`).join('; ')})
          </dd>
        </>
      ) : null}
      {statement.brought_forward > 0 ? (
        <>
          <dt>From last statement</dt>
          <dd>{formatMoney(statement.brought_forward)}</dd>
        </>
      ) : null}
      <dt>Billed</dt>
      <dd>
        <strong>{formatMoney(statement.billed_premium)}</strong>
        {statement.carried_forward > 0
          ? ` (${formatMoney(statement.carried_forward)} is below the minimum card payment and moves to your next statement)`
          : ''}
      </dd>
    </dl>
  );
}

/** The days the daily cap reduced, with what was driven and what was charged. */
function CappedDays({ statement, unit }: { statement: Statement; unit: Unit }) {
  if (statement.capped_days.length === 0) return null;
  return (
    <>
      <h3>Capped days</h3>
      <ul className="capped-days">
        {statement.capped_days.map((day) => (
          <li key={day.date}>
            <span className="when">{formatDate(day.date)}</span>: you drove{' '}
            {formatDistance(metresIn(day.distance_driven_in_metres, unit), unit)}, you pay for{' '}
            {formatDistance(metresIn(day.distance_charged_in_metres, unit), unit)} ({formatMoney(day.credit)}{' '}
            off)
          </li>
        ))}
      </ul>
    </>
  );
}

/** `YYYY-MM` as "June 2025". */
const monthName = (month: string): string =>
  new Date(`${month}-15T12:00:00Z`).toLocaleDateString('en-GB', {
    month: 'long',
    year: 'numeric',
    timeZone: 'UTC',
  });

/** A month's score adjustment in words: its score and band, and what was adjusted before when it was. */
function scoreMonthText(m: Statement['score_months'][number]): string {
  const score = m.score === null ? 'no score' : `score ${m.score.toFixed(1)}`;
  const band = `${m.adjustment_percent > 0 ? '+' : ''}${String(m.adjustment_percent)} %`;
  return m.adjusted_before === 0
    ? `${score}, ${band}`
    : `${score}, ${band}, after ${formatMoney(m.adjusted_before)} before`;
}

function CreditLine({ name, amount }: { name: string; amount: number }) {
  return (
    <>
      <dt>{name}</dt>
      <dd>−{formatMoney(amount)}</dd>
    </>
  );
}

/** Metres in the policy's unit (display only: distances, never money). */
const metresIn = (metres: number, unit: Unit): number => metres / (unit === 'km' ? 1000 : 1609.344);

function JourneyLine({ journey, unit }: { journey: Journey; unit: Unit }) {
  const from = journey.start_name ?? journey.start_postcode ?? 'Start';
  const to = journey.end_name ?? journey.end_postcode ?? 'End';
  const marks = [
    journey.is_void ? 'void, not charged' : undefined,
    journey.is_estimated ? 'estimated' : undefined,
    journey.source === 'odometer_reconciliation' ? 'odometer adjustment' : undefined,
  ].filter((mark): mark is string => mark !== undefined);
  return (
    <li>
      <span className="when">{formatDateTime(journey.start_at)}</span>{' '}
      {journey.source === 'odometer_reconciliation'
        ? 'Distance on the odometer beyond the GPS'
        : `${from} to ${to}`}
      : {distanceOf(journey, unit)}, {formatMoney(journey.usage_premium)}
      {marks.length > 0 ? <span className="marks"> ({marks.join(', ')})</span> : null}
    </li>
  );
}
