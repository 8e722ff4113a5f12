/**
 * The fonts' files as bytes (DejaVu Sans and DejaVu Sans Bold), apart from their parsing (fonts.ts), so that a
 * process that renders only on its threads reads them for the threads without loading fontkit.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The two TTF files' bytes. */
export interface DocumentFontBytes {
  readonly regular: Uint8Array;
  readonly bold: Uint8Array;
}

/** A file's bytes in memory that other threads can be handed without a copy. */
function readShared(file: string): Uint8Array {
  const read = readFileSync(require.resolve(`dejavu-fonts-ttf/ttf/${file}`));
  const shared = new Uint8Array(new SharedArrayBuffer(read.length));
  shared.set(read);
  return shared;
}

/*
 * NOTE: the files (1.4 MB) are read once per process into shared memory, and each render thread parses
 * its fonts from those bytes (fontkit reads its tables out of the buffer it is given, as it needs them)
 * instead of holding a copy of its own.
 */
let bytes: DocumentFontBytes | undefined;

/** The fonts' bytes in shared memory, for a render thread's `useDocumentFontBytes`; read on first use. */
export function documentFontBytes(): DocumentFontBytes {
  bytes ??= { regular: readShared('DejaVuSans.ttf'), bold: readShared('DejaVuSans-Bold.ttf') };
  return bytes;
}

/** Has this thread parse the fonts from bytes another thread read, instead of reading its own. */
export function useDocumentFontBytes(shared: DocumentFontBytes): void {
  if (bytes !== undefined) return;
  bytes = shared;
}
