/** Bytes as base64, in slices: String.fromCharCode takes its bytes as arguments, and a call has a limit on those. */
export function base64Of(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * Bytes fetched with the company's headers as a data URL an <img> can show: the console's policy lets
 * images come from its own origin and `data:` only (never `blob:`), and an <img src> cannot send those
 * headers.
 */
export async function dataUrlOf(blob: Blob, mediaType: string): Promise<string> {
  return `data:${mediaType};base64,${base64Of(new Uint8Array(await blob.arrayBuffer()))}`;
}
