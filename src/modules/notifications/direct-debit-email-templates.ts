/**
 * Direct Debit emails (Bacs scheme rules): the mandate's confirmation, each collection's advance notice,
 * and a mandate that ended. Each carries the Direct Debit Guarantee, worded as the scheme requires,
 * with the company's name and notice period. Pure.
 */
import { formatMoney, renderEmail, type RenderedEmail } from './email-templates.ts';

/**
 * The Direct Debit Guarantee as the Bacs scheme words it, with the originator's name and its advance
 * notice in working days.
 */
export function directDebitGuarantee(companyName: string, noticeWorkingDays: number): readonly string[] {
  return [
    'The Direct Debit Guarantee',
    'This Guarantee is offered by all banks and building societies that accept instructions to pay Direct Debits.',
    `If there are any changes to the amount, date or frequency of your Direct Debit ${companyName} will notify you ${String(noticeWorkingDays)} working days in advance of your account being debited or as otherwise agreed. If you request ${companyName} to collect a payment, confirmation of the amount and date will be given to you at the time of the request.`,
    `If an error is made in the payment of your Direct Debit, by ${companyName} or your bank or building society, you are entitled to a full and immediate refund of the amount paid from your bank or building society.`,
    `If you receive a refund you are not entitled to, you must pay it back when ${companyName} asks you to.`,
    'You can cancel a Direct Debit at any time by simply contacting your bank or building society. Written confirmation may be required. Please also notify us.',
  ];
}

const guaranteeLines = (companyName: string, noticeWorkingDays: number) =>
  directDebitGuarantee(companyName, noticeWorkingDays).map((line) => [line, null] as const);

interface MandateValues {
  readonly firstNames: string;
  readonly policyReference: string;
  readonly companyName: string;
  readonly noticeWorkingDays: number;
  readonly mandateReference: string;
  readonly accountHolderName: string | null;
  readonly sortCode: string | null;
  readonly accountLast4: string | null;
}

/**
 * The mandate's confirmation (Bacs: sent within 3 working days of the instruction): its reference, the
 * account, the first collection's day, and the Guarantee.
 */
export function directDebitMandateConfirmedEmail(
  values: MandateValues & { readonly firstCollectionOn: string },
): RenderedEmail {
  return renderEmail(
    'Your Direct Debit Instruction is set up',
    `Hello ${values.firstNames},`,
    [
      [`Your Direct Debit Instruction to ${values.companyName} is confirmed.`, null],
      ['Policy', values.policyReference],
      ['Mandate reference', values.mandateReference],
      ['Account holder', values.accountHolderName ?? 'as given'],
      ['Sort code', values.sortCode ?? 'as given'],
      ['Account number ending', values.accountLast4 ?? 'as given'],
      ['Payments will be taken from', values.firstCollectionOn],
      [
        `Before each payment we will email you its amount and date at least ${String(values.noticeWorkingDays)} working days ahead. Your bank statement will show the mandate reference.`,
        null,
      ],
      ...guaranteeLines(values.companyName, values.noticeWorkingDays),
    ],
    'Thank you.',
  );
}

/** A collection's advance notice: amount, day, mandate reference, and the Guarantee. */
export function directDebitAdvanceNoticeEmail(
  values: Omit<MandateValues, 'accountHolderName' | 'sortCode'> & {
    readonly amountPence: number;
    readonly currency: string;
    readonly collectOn: string;
    /** True when this presents again a collection the bank returned unpaid. */
    readonly retry: boolean;
  },
): RenderedEmail {
  return renderEmail(
    values.retry ? 'We will try your Direct Debit again' : 'Your next Direct Debit payment',
    `Hello ${values.firstNames},`,
    [
      [
        values.retry
          ? 'Your bank did not pay our last Direct Debit request. We will ask for it once more:'
          : 'We will collect your next motor insurance payment by Direct Debit:',
        null,
      ],
      ['Policy', values.policyReference],
      ['Amount', formatMoney(values.amountPence, values.currency)],
      ['On or just after', values.collectOn],
      ['Mandate reference', values.mandateReference],
      ['From the account ending', values.accountLast4 ?? 'on your mandate'],
      ...guaranteeLines(values.companyName, values.noticeWorkingDays),
    ],
    'Thank you.',
  );
}

/** The payer's mandate ended (cancelled by them or their bank): how the policy will be paid now. */
export function directDebitMandateEndedEmail(values: {
  readonly firstNames: string;
  readonly policyReference: string;
  readonly mandateReference: string;
  readonly reason: string;
  /** True when a card on file will be charged instead. */
  readonly cardOnFile: boolean;
}): RenderedEmail {
  return renderEmail(
    'Your Direct Debit has been cancelled',
    `Hello ${values.firstNames},`,
    [
      ['Your Direct Debit Instruction for your motor insurance is no longer active.', null],
      ['Policy', values.policyReference],
      ['Mandate reference', values.mandateReference],
      ['Reason', values.reason],
      values.cardOnFile
        ? ['Your next payments will be charged to the card you have with us.', null]
        : ['Please set up a new Direct Debit or add a card in your app, so that your cover continues.', null],
    ],
    'Thank you.',
  );
}
