import { useId } from 'react';

/*
 * The Direct Debit Guarantee in the wording Bacs Payment Schemes Limited publishes for every service user
 * (directdebit.co.uk, "The Direct Debit Guarantee"), word for word, with the organisation's name and its
 * advance notice period put in where the scheme's template leaves them blank. The scheme asks for it on
 * the same page as the details are taken and confirmed, apart from other terms; the Direct Debit logo,
 * which Bacs licenses to service users only, is left out, as the scheme allows where it is not available.
 */

/** The Guarantee as the Bacs scheme words it, for `organisation`, with `noticeWorkingDays` of notice. */
export function DirectDebitGuarantee(props: {
  /** Who collects and notifies: the insurer's name. */
  readonly organisation: string;
  /** The advance notice before each collection, in working days (the insurer's setting, at least 3). */
  readonly noticeWorkingDays: number;
}) {
  const id = useId();
  const { organisation: name, noticeWorkingDays: days } = props;
  return (
    <section className="dd-guarantee" aria-labelledby={id} data-testid="dd-guarantee">
      <h2 id={id}>The Direct Debit Guarantee</h2>
      <ul>
        <li>
          This Guarantee is offered by all banks and building societies that accept instructions to pay Direct
          Debits
        </li>
        <li>
          If there are any changes to the amount, date or frequency of your Direct Debit {name} will notify
          you {days} working days in advance of your account being debited or as otherwise agreed. If you
          request {name} to collect a payment, confirmation of the amount and date will be given to you at the
          time of the request
        </li>
        <li>
          If an error is made in the payment of your Direct Debit, by {name} or your bank or building society,
          you are entitled to a full and immediate refund of the amount paid from your bank or building
          society
          <ul>
            <li>
              If you receive a refund you are not entitled to, you must pay it back when {name} asks you to
            </li>
          </ul>
        </li>
        <li>
          You can cancel a Direct Debit at any time by simply contacting your bank or building society.
          Written confirmation may be required. Please also notify us.
        </li>
      </ul>
    </section>
  );
}
