/** Claim emails to policyholders. Pure. */
import { renderEmail, type RenderedEmail } from './email-templates.ts';

/** Template `claim-crash-detected`: a crash was reported for their vehicle; a draft claim waits for them. */
export function claimCrashDetectedEmail(values: {
  firstNames: string;
  policyReference: string;
  claimReference: string;
  /** When, as people read it (Europe/London). */
  occurredAt: string;
  /** Where, as the geocoder names it, or null. */
  place: string | null;
  /** By when, as people read it, before the claim goes to the claims team. */
  respondBy: string;
}): RenderedEmail {
  return renderEmail(
    'Have you had an accident?',
    `Hello ${values.firstNames},`,
    [
      [
        'Your vehicle’s tracker reported what looks like a crash. If you need help now, call 999. We have started a claim for you, in case you need one.',
        null,
      ],
      ['When', values.occurredAt],
      ['Where', values.place ?? 'near the position your tracker reported'],
      ['Policy', values.policyReference],
      ['Claim', values.claimReference],
      [
        `Please open your account and tell us either "I've had an accident" (with whether anyone was hurt, other vehicles, and the police) or that it was a false alarm. If we have not heard from you by ${values.respondBy}, our claims team will contact you.`,
        null,
      ],
    ],
    'We hope everyone is safe.',
  );
}

/** The states of a claim its claimant is told of, by email. */
export type ToldClaimState = 'open' | 'settled' | 'rejected' | 'closed';

const STATE_EMAILS: Readonly<Record<ToldClaimState, { subject: string; body: string }>> = {
  open: {
    subject: 'We have opened your claim',
    body: 'Your claim is open and our claims team is looking after it. They will contact you if they need anything more; you can follow it in your account.',
  },
  settled: {
    subject: 'Your claim is settled',
    body: 'We have made the final payments on your claim. If something is not right, reply to this email or contact our claims team.',
  },
  rejected: {
    subject: 'About your claim',
    body: 'We are sorry: we cannot accept this claim. Our claims team will write to you with the reasons. If you disagree, you can complain to us, and then to the Financial Ombudsman Service.',
  },
  closed: {
    subject: 'Your claim is closed',
    body: 'Your claim is closed: there is nothing more for you to do. If anything changes, contact our claims team and we can reopen it.',
  },
};

/** Templates `claim-open`, `claim-settled`, `claim-rejected`, `claim-closed`: the claim reached the state. */
export function claimStateEmail(values: {
  firstNames: string;
  policyReference: string;
  claimReference: string;
  state: ToldClaimState;
}): RenderedEmail {
  const text = STATE_EMAILS[values.state];
  return renderEmail(
    text.subject,
    `Hello ${values.firstNames},`,
    [
      [text.body, null],
      ['Policy', values.policyReference],
      ['Claim', values.claimReference],
    ],
    'Thank you.',
  );
}
