import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { TestApp } from '../../support/app.ts';

/** A document as `GET /policys/:policy_reference/documents` lists it. */
export interface ListedDocument {
  id: string;
  kind: string;
  issued_at: string;
  file_name: string;
  size_bytes: number;
  sha256: string;
  template_version: string;
  policy_reference: string;
  policy_version_reference: string | null;
  payment_reference: string | null;
  journey_reference: string | null;
  reissue_of: string | null;
  current: boolean;
  url: string;
}

/** The text of a PDF, as poppler's `pdftotext` reads it (layout kept). */
export async function pdfText(bytes: Uint8Array): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('pdftotext', ['-layout', '-enc', 'UTF-8', '-', '-']);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else reject(new Error(`pdftotext exited ${String(code)}: ${Buffer.concat(err).toString('utf8')}`));
    });
    child.stdin.end(Buffer.from(bytes));
  });
}

/** The policy's documents, through the route, as `headers` reach them; asserts 200. */
export async function listDocuments(
  t: TestApp,
  headers: Record<string, string>,
  policyReference: string,
): Promise<ListedDocument[]> {
  const r = await t.app.inject({
    method: 'GET',
    url: `/policys/${encodeURIComponent(policyReference)}/documents`,
    headers,
  });
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{ documents: ListedDocument[] }>().documents;
}

/** A document's PDF through the route: asserts 200, the PDF type and that its bytes are the listed SHA-256. */
export async function fetchDocument(
  t: TestApp,
  headers: Record<string, string>,
  document: Pick<ListedDocument, 'id' | 'sha256' | 'file_name'>,
): Promise<{ bytes: Buffer; text: string; disposition: string }> {
  const r = await t.app.inject({ method: 'GET', url: `/documents/${document.id}`, headers });
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(r.headers['content-type'], 'application/pdf');
  const bytes = r.rawPayload;
  assert.equal(createHash('sha256').update(bytes).digest('hex'), document.sha256);
  const disposition = String(r.headers['content-disposition']);
  assert.ok(disposition.startsWith('inline;'), disposition);
  assert.ok(disposition.includes(document.file_name), disposition);
  return { bytes, text: await pdfText(bytes), disposition };
}

/** Kinds of documents, sorted, for comparing what a change issued. */
export const kindsOf = (documents: readonly Pick<ListedDocument, 'kind'>[]): string[] =>
  documents.map((d) => d.kind).sort();
