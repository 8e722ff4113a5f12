/** Letters about money and term: the renewal notice, the credit note and the cancellation notice. */
import type {
  CancellationNoticeContent,
  CreditNoteContent,
  RenewalNoticeContent,
} from '../document-content.ts';
import { bullets, facts, heading, paragraph, table, type Layout } from './layout.ts';
import { priceRows } from './schedule.ts';
import { longDate, londonDateTime, londonLongDate, money, printable } from './text.ts';

function addressBlock(l: Layout, name: string, lines: readonly string[]): void {
  paragraph(l, name, { bold: true });
  for (const line of lines) paragraph(l, line);
}

/*
 * NOTE: ICOBS 6.5 (renewal): the notice shows last year's premium beside the new one, in the same terms,
 * so a change is plain; ICOBS 6B (the pricing practice rules of FCA PS21/5): a policy that renews itself
 * says how to stop it, and stopping it must be as easy as buying.
 */
/** Lays out a renewal notice: the new term and price beside this year's, and how to stop auto-renewal. */
export function renderRenewalNotice(l: Layout, r: RenewalNoticeContent): void {
  addressBlock(l, printable(r.policyholder.name), r.policyholder.addressLines);
  paragraph(
    l,
    `Your policy ${printable(r.policyReference)} for ${printable(r.registrationMark)} ends at ${londonDateTime(r.currentTerm.endsAt)}. Here is the price to renew it for another year, beside what you pay now.`,
  );
  heading(l, 'Your price: this year and next year');
  const last = priceRows(r.lastYearPrice);
  const next = priceRows(r.newPrice);
  table(
    l,
    [
      { header: '', share: 0.3 },
      { header: `This year (to ${londonLongDate(r.currentTerm.endsAt)})`, share: 0.35 },
      { header: `Next year (from ${londonLongDate(r.newTerm.startsAt)})`, share: 0.35 },
    ],
    last.map(([label, value], i) => [label, value, next[i]?.[1] ?? '']),
  );
  if (r.lastYearPaidPence !== null)
    paragraph(l, `Over the term now ending you have paid ${money(r.lastYearPaidPence)} in all.`);
  heading(l, 'The new term');
  facts(l, [
    ['Starts', londonDateTime(r.newTerm.startsAt)],
    ['Ends', londonDateTime(r.newTerm.endsAt)],
  ]);
  heading(l, r.autoRenew ? 'Your policy renews automatically' : 'To renew');
  if (r.autoRenew) {
    paragraph(
      l,
      `Unless you tell us otherwise, the policy renews on ${londonLongDate(r.newTerm.startsAt)} at the new price and the first payment is taken from your card. You can stop auto-renewal at no charge until ${longDate(r.cancelAutoRenewalBy)}:`,
    );
    bullets(l, r.howToCancelAutoRenewal);
  } else {
    paragraph(
      l,
      'Your policy does not renew automatically: to stay insured, accept this renewal before the term ends.',
    );
  }
  paragraph(
    l,
    'Please check that the details on your schedule and statement of fact are still right, and tell us of any change. It is worth comparing prices before you renew.',
    { sizePt: 8.5 },
  );
}

/** Lays out a credit note: what is credited, why, and where the money goes. */
export function renderCreditNote(l: Layout, c: CreditNoteContent): void {
  addressBlock(l, printable(c.policyholder.name), c.policyholder.addressLines);
  facts(l, [
    ['Credit note number', c.creditNoteNumber],
    ['Policy number', c.policyReference],
    ['Date', londonLongDate(c.issuedAt)],
    ['Reason', c.reason === 'void' ? 'A journey billed earlier has been voided' : 'A refund'],
    ['Corrects', c.relatesTo],
  ]);
  heading(l, 'Credited');
  table(
    l,
    [
      { header: 'Description', share: 0.75 },
      { header: 'Amount', share: 0.25, align: 'right' },
    ],
    c.lines.map((line) => [line.description, money(line.amountPence)]),
    { totals: ['Total credited', money(c.totalPence)] },
  );
  paragraph(l, c.settlement, { bold: true });
}

/** Lays out a cancellation notice: when cover ends, why, the refund or amount due. */
export function renderCancellationNotice(l: Layout, c: CancellationNoticeContent): void {
  addressBlock(l, printable(c.policyholder.name), c.policyholder.addressLines);
  paragraph(
    l,
    `Your policy ${printable(c.policyReference)} for ${printable(c.registrationMark)} is cancelled. Cover ends at ${londonDateTime(c.effectiveAt)}.`,
    { bold: true },
  );
  facts(l, [
    ['Policy number', c.policyReference],
    ['Cover ends', londonDateTime(c.effectiveAt)],
    ['Reason', c.reason],
  ]);
  heading(l, 'The final account');
  const balance =
    c.balancePence > 0
      ? `Refund to you: ${money(c.balancePence)}`
      : c.balancePence < 0
        ? `Amount due from you: ${money(-c.balancePence)}`
        : 'Nothing is due either way';
  table(
    l,
    [
      { header: 'Item', share: 0.75 },
      { header: 'Amount', share: 0.25, align: 'right' },
    ],
    c.lines.map((line) => [line.description, money(line.amountPence)]),
    { totals: [balance, money(Math.abs(c.balancePence))] },
  );
  paragraph(l, c.settlement);
  paragraph(
    l,
    'From the time above the vehicle is not insured by this policy and its certificate of motor insurance is no longer valid: driving it uninsured is an offence (Road Traffic Act 1988 s.143).',
    { bold: true },
  );
}
