/** Email templates: each yields a subject, a text part and an HTML part from the same values. Pure. */

export interface RenderedEmail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

const escapeHtml = (value: string): string =>
  value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/** Lines are `[label, value]` pairs (value null for a plain paragraph); one layout for every email. */
export function renderEmail(
  subject: string,
  greeting: string,
  lines: ReadonlyArray<readonly [string, string | null]>,
  closing: string,
): RenderedEmail {
  const text = [
    greeting,
    '',
    ...lines.map(([label, value]) => (value === null ? label : `${label}: ${value}`)),
    '',
    closing,
    '',
  ].join('\n');
  const rows = lines
    .map(([label, value]) =>
      value === null
        ? `<p>${escapeHtml(label)}</p>`
        : `<p>${escapeHtml(label)}: <strong>${escapeHtml(value)}</strong></p>`,
    )
    .join('\n');
  const html = `<!doctype html><html><body style="font-family:sans-serif"><p>${escapeHtml(greeting)}</p>\n${rows}\n<p>${escapeHtml(closing)}</p></body></html>`;
  return { subject, text, html };
}

/** The line that links a change's documents (certificate, schedule, notices, statements) in the web app. */
const documentsLine = (url: string | undefined): Array<readonly [string, string | null]> =>
  url === undefined ? [] : [['Your documents', url]];

export function welcomeEmail(values: {
  firstNames: string;
  username: string;
  temporaryPassword: string;
  policyReference: string;
  expiresOn: string;
  /** The web app's address for this company, when the service knows it. */
  signInUrl?: string | undefined;
  /** The policy's documents page in the web app, when the service knows its address. */
  documentsUrl?: string | undefined;
}): RenderedEmail {
  return renderEmail(
    'Your motor insurance account',
    `Hello ${values.firstNames},`,
    [
      ['Your policy is set up and an account has been created for you.', null],
      ['Policy', values.policyReference],
      ['Username', values.username],
      ['Temporary password', values.temporaryPassword],
      ...(values.signInUrl === undefined ? [] : [['Sign in at', values.signInUrl] as const]),
      ...documentsLine(values.documentsUrl),
      [
        `Log in with these details to choose your own password before ${values.expiresOn}, when the temporary password expires.`,
        null,
      ],
    ],
    'Drive safely.',
  );
}

export function policyAddedEmail(values: {
  firstNames: string;
  username: string;
  policyReference: string;
  documentsUrl?: string | undefined;
}): RenderedEmail {
  return renderEmail(
    'A new policy has been added to your account',
    `Hello ${values.firstNames},`,
    [
      ['A new policy has been added to your existing account. Log in with your usual password.', null],
      ['Policy', values.policyReference],
      ['Username', values.username],
      ...documentsLine(values.documentsUrl),
    ],
    'Drive safely.',
  );
}

/** FORGOT_PASSWORD for an account with a personal password: the 6-digit reset code. */
export function resetCodeEmail(values: {
  firstNames: string;
  username: string;
  code: string;
  validMinutes: number;
}): RenderedEmail {
  return renderEmail(
    'Your password reset code',
    `Hello ${values.firstNames},`,
    [
      ['Somebody (we hope you) asked to reset the password of your motor insurance account.', null],
      ['Username', values.username],
      ['Code', values.code],
      [
        `Enter the code with your new password within ${values.validMinutes} minutes. It works once. If you did not ask for it, ignore this email: your password has not changed.`,
        null,
      ],
    ],
    'Drive safely.',
  );
}

/** RESEND_PASSWORD: a new temporary password, in the welcome email's layout. */
export function temporaryPasswordEmail(values: {
  firstNames: string;
  username: string;
  temporaryPassword: string;
  expiresOn: string;
}): RenderedEmail {
  return renderEmail(
    'Your new temporary password',
    `Hello ${values.firstNames},`,
    [
      [
        'Here is a new temporary password for your motor insurance account; the old one no longer works.',
        null,
      ],
      ['Username', values.username],
      ['Temporary password', values.temporaryPassword],
      [
        `Log in with these details to choose your own password before ${values.expiresOn}, when the temporary password expires.`,
        null,
      ],
    ],
    'Drive safely.',
  );
}

/** Pence as money for people to read, e.g. `£1,234.50`. */
export const formatMoney = (amountPence: number, currency: string): string => {
  // A formatter takes tens of microseconds to build; a billing run renders thousands of emails.
  let format = moneyFormats.get(currency);
  if (format === undefined) {
    format = new Intl.NumberFormat('en-GB', { style: 'currency', currency });
    moneyFormats.set(currency, format);
  }
  return format.format(amountPence / 100);
};
const moneyFormats = new Map<string, Intl.NumberFormat>();

/** What a change to a policy charges to the card on file or refunds to the card that paid. */
export interface Settlement {
  readonly kind: 'charge' | 'refund';
  readonly amountPence: number;
  readonly currency: string;
}

/** A policy was adjusted mid-term: from when, and what it costs or returns. */
export function policyAdjustedEmail(values: {
  firstNames: string;
  policyReference: string;
  effectiveOn: string;
  settlement?: Settlement | undefined;
  documentsUrl?: string | undefined;
}): RenderedEmail {
  return renderEmail(
    'Your policy has been changed',
    `Hello ${values.firstNames},`,
    [
      ['Your policy has been changed.', null],
      ['Policy', values.policyReference],
      ['Effective from', values.effectiveOn],
      ...settlementLines(values.settlement),
      ...documentsLine(values.documentsUrl),
    ],
    'Drive safely.',
  );
}

/** A policy was cancelled: from when, and the refund or the amount due. */
export function policyCancelledEmail(values: {
  firstNames: string;
  policyReference: string;
  effectiveOn: string;
  settlement?: Settlement | undefined;
  documentsUrl?: string | undefined;
}): RenderedEmail {
  return renderEmail(
    'Your policy has been cancelled',
    `Hello ${values.firstNames},`,
    [
      ['Your policy has been cancelled. You are not insured by it after the date below.', null],
      ['Policy', values.policyReference],
      ['Cancelled from', values.effectiveOn],
      ...(values.settlement === undefined
        ? ([['There is no refund and nothing more to pay for the cancellation.', null]] as const)
        : settlementLines(values.settlement)),
      ['A final statement for your driving up to the cancellation follows.', null],
      ...documentsLine(values.documentsUrl),
    ],
    'Thank you for driving with us.',
  );
}

/** A policy was renewed: the new term. */
export function policyRenewedEmail(values: {
  firstNames: string;
  policyReference: string;
  startOn: string;
  endOn: string;
  documentsUrl?: string | undefined;
}): RenderedEmail {
  return renderEmail(
    'Your policy has been renewed',
    `Hello ${values.firstNames},`,
    [
      ['Your policy has been renewed for a new term.', null],
      ['Policy', values.policyReference],
      ['New term', `${values.startOn} to ${values.endOn}`],
      ...documentsLine(values.documentsUrl),
    ],
    'Drive safely.',
  );
}

/** A policy lapsed: its term ended without a renewal. */
export function policyLapsedEmail(values: {
  firstNames: string;
  policyReference: string;
  endedOn: string;
}): RenderedEmail {
  return renderEmail(
    'Your policy has ended',
    `Hello ${values.firstNames},`,
    [
      ['Your policy has ended and was not renewed. You are no longer insured by it.', null],
      ['Policy', values.policyReference],
      ['Ended on', values.endedOn],
      ['A final statement for your driving up to the end follows. Contact us to renew.', null],
    ],
    'Thank you for driving with us.',
  );
}

function settlementLines(settlement: Settlement | undefined): Array<readonly [string, string | null]> {
  if (settlement === undefined) return [];
  const amount = formatMoney(settlement.amountPence, settlement.currency);
  return settlement.kind === 'refund'
    ? [['Refund to your card', amount]]
    : [['Amount due, charged to your card on file', amount]];
}

export interface StatementIssuedValues {
  firstNames: string;
  policyReference: string;
  /** Inclusive calendar dates, Europe/London, as `YYYY-MM-DD`. */
  periodStartOn: string;
  periodEndOn: string;
  journeyCount: number;
  distanceMiles: number;
  usagePremiumPence: number;
  subscriptionPremiumPence: number;
  totalPremiumPence: number;
  billedPremiumPence: number;
  currency: string;
  /**
   * How the amount is paid: `card` (a charge to the card on file was recorded with the statement),
   * `carried` (below the processor's minimum: added to the next statement), `none` (no card here).
   * Absent in emails queued before it existed: read as `card`.
   */
  payment?: 'card' | 'carried' | 'none';
  carriedForwardPence?: number;
  /** The policy's documents page in the web app (the statement's PDF is there), when known. */
  documentsUrl?: string;
}

/** What the statement email says about paying. */
function paymentLine(values: StatementIssuedValues, money: (pence: number) => string): string {
  if (values.billedPremiumPence === 0) return 'There is nothing to pay this time.';
  switch (values.payment ?? 'card') {
    case 'card':
      return 'The amount to pay is charged to your card on file; you will hear from us if the payment fails.';
    case 'carried':
      return `${money(values.carriedForwardPence ?? values.billedPremiumPence)} is below the smallest card payment we can take, so it will be added to your next statement.`;
    case 'none':
      return 'There is no card on file for this policy: add a card in your app, or contact us to pay.';
  }
}

/** A statement was generated: the period, distance and amounts, and what will be charged. */
export function statementIssuedEmail(values: StatementIssuedValues): RenderedEmail {
  const money = (pence: number) => formatMoney(pence, values.currency);
  return renderEmail(
    `Your statement for ${values.periodStartOn} to ${values.periodEndOn}`,
    `Hello ${values.firstNames},`,
    [
      ['Your statement is ready.', null],
      ['Policy', values.policyReference],
      ['Period', `${values.periodStartOn} to ${values.periodEndOn}`],
      ['Journeys', String(values.journeyCount)],
      ['Distance', `${values.distanceMiles.toFixed(1)} miles`],
      ['Usage premium', money(values.usagePremiumPence)],
      ['Subscription premium', money(values.subscriptionPremiumPence)],
      ['Total premium', money(values.totalPremiumPence)],
      ['Amount to pay', money(values.billedPremiumPence)],
      [paymentLine(values, money), null],
      ...documentsLine(values.documentsUrl),
    ],
    'Drive safely.',
  );
}

/** A change's documents, attached (the company chose attachments): what they are, and where to read them. */
export function documentsIssuedEmail(values: {
  firstNames: string;
  policyReference: string;
  /** The attached files' names, as the policyholder sees them. */
  fileNames: readonly string[];
  documentsUrl?: string | undefined;
}): RenderedEmail {
  return renderEmail(
    'Your insurance documents',
    `Hello ${values.firstNames},`,
    [
      ['Your documents for this change are attached. Please keep them, and check that they are right.', null],
      ['Policy', values.policyReference],
      ...values.fileNames.map((name) => ['Attached', name] as const),
      ...documentsLine(values.documentsUrl),
    ],
    'Drive safely.',
  );
}

/** A card payment failed: what failed, why, and when it is tried again. */
export function paymentFailedEmail(values: {
  firstNames: string;
  policyReference: string;
  amountPence: number;
  currency: string;
  /** The processor's message, e.g. "Your card was declined." */
  reason: string;
  /** `YYYY-MM-DD`, or null when no further attempt is scheduled. */
  nextAttemptOn: string | null;
}): RenderedEmail {
  return renderEmail(
    'Your payment did not go through',
    `Hello ${values.firstNames},`,
    [
      ['We could not take a payment for your motor insurance.', null],
      ['Policy', values.policyReference],
      ['Amount', formatMoney(values.amountPence, values.currency)],
      ['Reason', values.reason],
      values.nextAttemptOn === null
        ? ['Please add a new card or contact us so that your cover continues.', null]
        : ['We will try again on', values.nextAttemptOn],
      ['You can add a new card in your app; it becomes your default card.', null],
    ],
    'Thank you.',
  );
}

/** To a company: one of its webhook endpoints failed every delivery for days and has been disabled. */
export function webhookEndpointDisabledEmail(values: {
  companyName: string;
  endpointId: string;
  url: string;
  environment: string;
  failingSince: string;
  lastError: string;
}): RenderedEmail {
  return renderEmail(
    `Webhook endpoint disabled (${values.environment})`,
    `Hello ${values.companyName},`,
    [
      [
        'Every delivery to one of your webhook endpoints has failed for 3 days, so it has been disabled.',
        null,
      ],
      ['Endpoint', values.endpointId],
      ['URL', values.url],
      ['Environment', values.environment],
      ['Failing since', values.failingSince],
      ['Last error', values.lastError],
      [
        'Fix the endpoint, send a test event (POST /webhooks/{id}/test) and enable it again with PATCH /webhooks/{id} {"enabled": true}. Events can be sent again with POST /events/{event_id}/replay.',
        null,
      ],
    ],
    'Milepost',
  );
}

/** A card payment needs the policyholder's approval (3-D Secure) before it can be taken. */
export function paymentActionRequiredEmail(values: {
  firstNames: string;
  policyReference: string;
  amountPence: number;
  currency: string;
  paymentReference: string;
}): RenderedEmail {
  return renderEmail(
    'Please approve your payment',
    `Hello ${values.firstNames},`,
    [
      [
        'Your card issuer asks you to approve a payment for your motor insurance before it can be taken.',
        null,
      ],
      ['Policy', values.policyReference],
      ['Amount', formatMoney(values.amountPence, values.currency)],
      ['Payment', values.paymentReference],
      ['Open your app to approve it, or add another card there: the payment is then tried again.', null],
    ],
    'Thank you.',
  );
}

/** A month (`YYYY-MM`) as people read it, e.g. `June 2025`. */
const monthName = (month: string): string =>
  new Date(`${month}-01T12:00:00Z`).toLocaleDateString('en-GB', {
    month: 'long',
    year: 'numeric',
    timeZone: 'UTC',
  });

/** Template `mileage-budget-exceeded`: the policyholder drove past their own monthly budget (it is not a charge). */
export function mileageBudgetExceededEmail(values: {
  firstNames: string;
  policyReference: string;
  /** `YYYY-MM`, Europe/London. */
  month: string;
  /** The budget and the distance so far, each with its unit, e.g. `500 miles`, `512.3 miles`. */
  budget: string;
  distanceSoFar: string;
}): RenderedEmail {
  const month = monthName(values.month);
  return renderEmail(
    `You have passed your mileage budget for ${month}`,
    `Hello ${values.firstNames},`,
    [
      [`Just to let you know: you have now driven more than the monthly mileage budget you set.`, null],
      ['Policy', values.policyReference],
      ['Month', month],
      ['Your budget', values.budget],
      ['Driven so far this month', values.distanceSoFar],
      [
        'This is only a reminder: your cover and the way you are charged have not changed. You can change your budget in your app at any time.',
        null,
      ],
    ],
    'Drive safely.',
  );
}

/** Template `device-offline`: the policyholder's tracker stopped reporting; silent days will be estimated. */
export function deviceOfflineEmail(values: {
  firstNames: string;
  policyReference: string;
  deviceId: string;
  /** When it last reported, as people read it, or null when it never did. */
  lastSeen: string | null;
  /** The estimate per day with its unit, e.g. `150 miles`, and the days without data not estimated. */
  estimatedPerDay: string;
  graceDays: number;
}): RenderedEmail {
  return renderEmail(
    'Your tracker has stopped reporting',
    `Hello ${values.firstNames},`,
    [
      [
        'The tracking device on your policy has not sent any journeys for a while. Please check that it is plugged in, or that the app is running with location allowed.',
        null,
      ],
      ['Policy', values.policyReference],
      ['Device', values.deviceId],
      ['Last reported', values.lastSeen ?? 'never, since it was fitted'],
      [
        `If it stays silent, each whole day without data after ${String(values.graceDays)} day(s) of grace is charged at an estimated ${values.estimatedPerDay}. An estimate is taken off your bill if the device's data for that day arrives later.`,
        null,
      ],
    ],
    'Thank you.',
  );
}

/**
 * Templates whose values are stored with the queued email and rendered when it is sent: those queued in
 * bulk (a billing chunk queues a thousand statement emails in one transaction; rendering them there was
 * a tenth of its own CPU, and their bodies most of its WAL).
 */
export const LATER_TEMPLATES = {
  'statement-issued': statementIssuedEmail,
} as const satisfies Record<string, (values: never) => RenderedEmail>;

export type LaterTemplate = keyof typeof LATER_TEMPLATES;

/** Renders a stored email of a `LATER_TEMPLATES` template; undefined for any other, or once sent (values dropped). */
export function renderLater(template: string, data: unknown): RenderedEmail | undefined {
  if (data === null || data === undefined || !Object.hasOwn(LATER_TEMPLATES, template)) return undefined;
  return LATER_TEMPLATES[template as LaterTemplate](data as StatementIssuedValues);
}
