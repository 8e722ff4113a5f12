/**
 * What a render thread runs (see render-pool.ts): one document to PDF bytes, in the thread's own heap,
 * with its own parsed fonts and shaped-word cache, which later documents on the thread reuse. The fonts'
 * bytes and the map's outline are the pool's, in memory the threads share.
 */
import { workerData } from 'node:worker_threads';
import { move } from 'piscina';
import type { Branding } from '../document-content.ts';
import { useDocumentFontBytes, type DocumentFontBytes } from './font-bytes.ts';
import { renderDocument } from './index.ts';
import { unpackDocument, type PackedDocument } from './packed-routes.ts';
import { useUkOutline } from './uk-outline.ts';

export interface RenderTask {
  /** The document, a statement's routes packed (packed-routes.ts). */
  readonly document: PackedDocument;
  readonly branding: Branding;
}

/** What the pool hands each thread when it starts: read-only data in shared memory. */
export interface RenderThreadData {
  readonly fonts: DocumentFontBytes;
  readonly outline: Float64Array;
}

const shared = workerData as RenderThreadData | undefined;
if (shared !== undefined) {
  useDocumentFontBytes(shared.fonts);
  useUkOutline(shared.outline);
}

/*
 * NOTE: the PDF's bytes are moved to the pool's thread, not copied: the thread lets go of them at once
 * (rather than at its next garbage collection) and the receiver allocates nothing. Only a buffer of the
 * PDF's own can move; a view into a larger one (Node's pool of small buffers) is copied first.
 */
export default async function renderTask(task: RenderTask): Promise<Uint8Array> {
  const pdf = await renderDocument(unpackDocument(task.document), task.branding);
  const own = pdf.byteOffset === 0 && pdf.byteLength === pdf.buffer.byteLength ? pdf : new Uint8Array(pdf);
  return move(own) as Uint8Array;
}
