/**
 * Rendering on every core: documents laid out in a pool of worker threads (piscina), so a worker process
 * renders as many documents at once as it has threads while its own thread does the database work.
 * Rendering is pure CPU (no I/O, no clock: the content carries its instants), so a thread gives the same
 * bytes as the process itself would.
 */
import { Piscina } from 'piscina';
import type { Branding, DocumentInput } from '../document-content.ts';
import { documentFontBytes } from './font-bytes.ts';
import { packDocument } from './packed-routes.ts';
import type { RenderTask, RenderThreadData } from './render-thread.ts';
import { packedUkOutline } from './uk-outline.ts';

/** A thread idle this long exits, and gives back its heap; the next document starts one again. */
const IDLE_THREAD_MS = 30_000;
/*
 * NOTE: a thread's heap: a statement allocates ~6 MB, and ~1.5 MB of it (the document being built) is still
 * alive at a scavenge. These limits hold only in a process started without V8's heap flags (tests, tools):
 * V8 lets `--max-semi-space-size` and `--max-old-space-size` override a worker's resource limits
 * (nodejs/node#43991), so under `npm start` each thread has 2 × 8 MB semi-spaces and the 256 MB ceiling,
 * and holds 43–48 MB of heap at work (young 16, old 19–22 of which 11 live, code 7).
 */
const THREAD_LIMITS = { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 12 };

/** Lays out a document as PDF bytes. */
export type RenderPdf = (input: DocumentInput, branding: Branding) => Promise<Uint8Array>;

export interface RenderPool {
  readonly render: RenderPdf;
  /** Documents to have in hand at once to keep it busy: twice its threads (the others wait on the database), 1 in process. */
  readonly concurrency: number;
  /** Ends the threads (after the documents they are rendering). */
  readonly close: () => Promise<void>;
}

/*
 * NOTE: the thread runs the sibling module as this one was loaded: `.ts` from src/ (tests, tools), `.js`
 * from dist/ (`npm start`), so a running service never loads the TypeScript stripper in a thread.
 */
const threadFile = new URL(
  `./render-thread${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
).href;

/**
 * The branding as a render thread is handed it: the logo, if any, in a buffer of its own size.
 *
 * NOTE: a task reaches its thread by the structured clone, which copies the whole ArrayBuffer under a byte
 * view, not the view: a logo of a few hundred bytes read from a result or a file may be a view on a buffer
 * of megabytes (or on Node's 8 kB pool of small buffers), all of it copied into the thread for every
 * document.
 */
export function brandingForThread(branding: Branding): Branding {
  const logo = branding.logo;
  if (logo === undefined || logo.bytes.byteLength === logo.bytes.buffer.byteLength) return branding;
  return { ...branding, logo: { mediaType: logo.mediaType, bytes: new Uint8Array(logo.bytes) } };
}

/**
 * Lays out a document in the calling thread, loading the renderer on first use.
 *
 * NOTE: the renderer (pdfkit, fontkit, svg-to-pdfkit: about 6 MB of heap and 10 MB of RSS) is imported by
 * the first document rendered here, not with this module: a process that renders on its threads never
 * loads it itself.
 */
export const renderInProcess: RenderPdf = async (input, branding) => {
  const { renderDocument } = await import('./index.ts');
  return renderDocument(input, branding);
};

/**
 * A pool of `threads` render threads, started on first use; `threads` 0 renders in the calling thread
 * (one document at a time).
 */
export function createRenderPool(threads: number): RenderPool {
  if (threads <= 0) return { render: renderInProcess, concurrency: 1, close: () => Promise.resolve() };
  let pool: Piscina<RenderTask, Uint8Array> | undefined;
  return {
    concurrency: 2 * threads,
    render: (input, branding) => {
      pool ??= new Piscina<RenderTask, Uint8Array>({
        filename: threadFile,
        minThreads: 0,
        maxThreads: threads,
        idleTimeout: IDLE_THREAD_MS,
        resourceLimits: THREAD_LIMITS,
        workerData: { fonts: documentFontBytes(), outline: packedUkOutline() } satisfies RenderThreadData,
      });
      return pool.run({ document: packDocument(input), branding: brandingForThread(branding) });
    },
    close: async () => {
      const closing = pool;
      pool = undefined;
      await closing?.close();
    },
  };
}
