/**
 * Quote emails: the underwriter's answer to a referred quote, sent to the applicant. Pure.
 */
import { renderEmail, type RenderedEmail } from './email-templates.ts';

/** Template `quote-referral-approved` or `quote-referral-declined`: an underwriter decided a referred quote. */
export function quoteReferralDecidedEmail(values: {
  firstNames: string;
  quoteReference: string;
  outcome: 'approved' | 'declined';
  reason: string;
  /** `YYYY-MM-DD` (London): the last day the quote may be bought; only for an approval. */
  bindableUntil: string | undefined;
}): RenderedEmail {
  const approved = values.outcome === 'approved';
  return renderEmail(
    approved ? 'Your quote has been approved' : 'We cannot offer cover on your quote',
    `Hello ${values.firstNames},`,
    [
      [
        approved
          ? 'An underwriter has reviewed your quote and approved it: you can now buy the policy at the price quoted.'
          : 'An underwriter has reviewed your quote and we are unable to offer you cover on it.',
        null,
      ],
      ['Quote', values.quoteReference],
      ['Reason', values.reason],
      ...(approved && values.bindableUntil !== undefined
        ? [['Valid until', values.bindableUntil] as const]
        : []),
    ],
    approved ? 'Thank you for choosing us.' : 'Thank you for asking us for a quote.',
  );
}
