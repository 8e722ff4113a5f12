/**
 * A document's file name for a download. Apart from the renderer, so that a process that renders only on
 * its threads names documents without loading pdfkit and fontkit.
 */
import type { DocumentInput } from '../document-content.ts';
import { londonParts } from './text.ts';

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
