/** Whether a logo can be drawn: the check an upload passes before a template may use it. */
import PDFDocument from 'pdfkit';
import type { BrandingLogo } from '../document-content.ts';
import { drawLogo } from './layout.ts';

/** Draws the logo into a scratch page; `{ ok: false, reason }` when pdfkit or the SVG reader cannot. */
export function checkLogo(logo: BrandingLogo): { ok: true } | { ok: false; reason: string } {
  const doc = new PDFDocument({ size: 'A4', autoFirstPage: true });
  try {
    drawLogo(doc, logo, 0, 0);
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  } finally {
    doc.end();
  }
}
