/**
 * Rendering documents to PDF in process (pdfkit): `renderDocument` lays out any kind of document with a
 * company's branding; `documentFileName` names it for a download.
 */
import type { Branding, DocumentInput } from '../document-content.ts';
import { renderCertificate } from './certificate.ts';
import { renderIpid } from './ipid.ts';
import { finish, openLayout, type DocumentMeta, type Layout } from './layout.ts';
import { renderCancellationNotice, renderCreditNote, renderRenewalNotice } from './notices.ts';
import { renderSchedule, renderStatementOfFact } from './schedule.ts';
import { renderStatement } from './statement.ts';
import { londonParts } from './text.ts';

export { checkLogo } from './logo-check.ts';

/** Each kind's title, as its first heading and the PDF's title say it. */
export const DOCUMENT_TITLES: Record<DocumentInput['kind'], string> = {
  certificate: 'Certificate of Motor Insurance',
  schedule: 'Policy Schedule',
  ipid: 'Insurance Product Information Document',
  statement_of_fact: 'Statement of Fact',
  renewal_notice: 'Renewal Notice',
  statement: 'Monthly Statement',
  credit_note: 'Credit Note',
  cancellation_notice: 'Cancellation Notice',
};

function metaOf(input: DocumentInput): DocumentMeta {
  const title = DOCUMENT_TITLES[input.kind];
  if (input.kind === 'ipid') {
    const c = input.content;
    return {
      title,
      reference: c.productName,
      subject: `${c.productName} from ${c.effectiveFrom}`,
      issuedAt: c.issuedAt,
    };
  }
  const c = input.content;
  return {
    title,
    reference: c.policyReference,
    subject: `${title} for policy ${c.policyReference}`,
    issuedAt: c.issuedAt,
  };
}

function layOut(l: Layout, input: DocumentInput): void {
  switch (input.kind) {
    case 'certificate':
      renderCertificate(l, input.content);
      return;
    case 'schedule':
      renderSchedule(l, input.content);
      return;
    case 'ipid':
      renderIpid(l, input.content);
      return;
    case 'statement_of_fact':
      renderStatementOfFact(l, input.content);
      return;
    case 'renewal_notice':
      renderRenewalNotice(l, input.content);
      return;
    case 'statement':
      renderStatement(l, input.content);
      return;
    case 'credit_note':
      renderCreditNote(l, input.content);
      return;
    case 'cancellation_notice':
      renderCancellationNotice(l, input.content);
      return;
  }
}

/**
 * The document as PDF bytes: A4, DejaVu Sans embedded (subset), tagged, with the company's heading and
 * page numbers. Deterministic: the same input and branding give the same bytes (the PDF's dates are the
 * content's `issuedAt`), so a SHA-256 identifies what was issued.
 */
export async function renderDocument(input: DocumentInput, branding: Branding): Promise<Uint8Array> {
  const layout = openLayout(metaOf(input), branding);
  layOut(layout, input);
  return finish(layout);
}

const ASCII_SAFE = /[^A-Za-z0-9-]+/g;
/** Letters NFKD does not take apart into a base letter and an accent. */
const FOLDED: Record<string, string> = {
  ł: 'l',
  Ł: 'L',
  ø: 'o',
  Ø: 'O',
  đ: 'd',
  Đ: 'D',
  ß: 'ss',
  æ: 'ae',
  Æ: 'AE',
};

/** The London date a document is known by: commencement, a statement's last day, else the day issued. */
function documentDate(input: DocumentInput): string {
  switch (input.kind) {
    case 'certificate':
      return londonParts(input.content.commencesAt).date;
    case 'statement':
      return input.content.periodEndOn;
    case 'ipid':
      return input.content.effectiveFrom;
    default:
      return londonParts(input.content.issuedAt).date;
  }
}

/** A readable ASCII file name: `certificate-MP-123456-2026-01-01.pdf` (kind, reference, date). */
export function documentFileName(input: DocumentInput): string {
  const reference = input.kind === 'ipid' ? input.content.productReference : input.content.policyReference;
  const safe = (text: string): string =>
    text
      .replace(/[łŁøØđĐßæÆ]/g, (letter) => FOLDED[letter] ?? '')
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .replace(ASCII_SAFE, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60);
  const parts = [input.kind.replace(/_/g, '-'), safe(reference), documentDate(input)].filter((p) => p !== '');
  return `${parts.join('-')}.pdf`;
}
