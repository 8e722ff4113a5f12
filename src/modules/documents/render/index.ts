/**
 * Rendering documents to PDF in process (pdfkit): `renderDocument` lays out any kind of document with a
 * company's branding; `documentFileName` (file-name.ts) names it for a download.
 */
import type { Branding, DocumentInput } from '../document-content.ts';
import { renderCertificate } from './certificate.ts';
import { renderIpid } from './ipid.ts';
import { finish, openLayout, type DocumentMeta, type Layout } from './layout.ts';
import { renderCancellationNotice, renderCreditNote, renderRenewalNotice } from './notices.ts';
import { renderSchedule, renderStatementOfFact } from './schedule.ts';
import { renderStatement } from './statement.ts';

export { checkLogo } from './logo-check.ts';
export { documentFileName } from './file-name.ts';

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
