/** The insurance product information document (IPID) in the standard form, on at most two A4 pages. */
import type { IpidContent } from '../document-content.ts';
import { bullets, heading, paragraph, type Layout } from './layout.ts';
import { longDate, printable } from './text.ts';

/*
 * NOTE: the Insurance Distribution Directive's standardised presentation format (Commission Implementing
 * Regulation (EU) 2017/1469, retained in UK law; ICOBS 6 Annex 2): the title "Insurance Product Information
 * Document", the company and product, the statement that full information is elsewhere, then these headings
 * in this order, in plain words, on no more than two sides of A4 (a test counts the pages).
 */
export const IPID_HEADINGS = {
  what: 'What is this type of insurance?',
  insured: 'What is insured?',
  notInsured: 'What is not insured?',
  restrictions: 'Are there any restrictions on cover?',
  where: 'Where am I covered?',
  obligations: 'What are my obligations?',
  pay: 'When and how do I pay?',
  period: 'When does the cover start and end?',
  cancel: 'How do I cancel the contract?',
} as const;

/** Lays out an IPID: the standard headings in order, compact enough for two pages. */
export function renderIpid(l: Layout, c: IpidContent): void {
  paragraph(
    l,
    `Company: ${printable(c.insurerName)}. ${printable(c.insurerRegulatoryStatus)}. Product: ${printable(c.productName)} (${printable(c.productReference)}), from ${longDate(c.effectiveFrom)}.`,
    { bold: true, sizePt: 8.5 },
  );
  paragraph(
    l,
    'This document is a summary of the key information about this insurance. The complete pre-contractual and contractual information on the product is in the policy documents: the policy wording, the schedule and the certificate of motor insurance.',
    { sizePt: 8 },
  );
  heading(l, IPID_HEADINGS.what);
  paragraph(l, c.whatIsThisInsurance, { sizePt: 8.5 });
  const sections: Array<[string, readonly string[]]> = [
    [IPID_HEADINGS.insured, c.whatIsInsured],
    [IPID_HEADINGS.notInsured, c.whatIsNotInsured],
    [IPID_HEADINGS.restrictions, c.restrictions],
    [IPID_HEADINGS.where, c.whereCovered],
    [IPID_HEADINGS.obligations, c.obligations],
    [IPID_HEADINGS.pay, c.whenAndHowToPay],
    [IPID_HEADINGS.period, c.whenCoverStartsAndEnds],
    [IPID_HEADINGS.cancel, c.howToCancel],
  ];
  for (const [title, items] of sections) {
    heading(l, title);
    bullets(l, items);
  }
}
