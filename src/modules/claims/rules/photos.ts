/** A photo's type told by its first bytes (magic numbers), never by what the sender says it is. */

export type PhotoType = 'image/jpeg' | 'image/png' | 'image/heic' | 'image/webp';
export const PHOTO_TYPES: readonly PhotoType[] = ['image/jpeg', 'image/png', 'image/heic', 'image/webp'];
/** The largest photo taken: 10 MiB. */
export const MAX_PHOTO_BYTES = 10 * 1024 * 1024;

/** HEIF brands of HEIC stills and sequences (ISO/IEC 23008-12 Annex B), as phones write them. */
const HEIC_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1']);

const ascii = (bytes: Uint8Array, from: number, to: number): string =>
  String.fromCharCode(...bytes.subarray(from, to));

/**
 * JPEG (FF D8 FF), PNG (the 8-byte signature), WebP (RIFF….WEBP) or HEIC (an ISO BMFF `ftyp` box with a
 * HEIC brand); undefined for anything else.
 */
export function sniffPhotoType(bytes: Uint8Array): PhotoType | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (bytes.length >= 8 && png.every((b, i) => bytes[i] === b)) return 'image/png';
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP')
    return 'image/webp';
  if (bytes.length >= 12 && ascii(bytes, 4, 8) === 'ftyp' && HEIC_BRANDS.has(ascii(bytes, 8, 12)))
    return 'image/heic';
  return undefined;
}

export type PhotoCheck =
  { readonly ok: true; readonly contentType: PhotoType } | { readonly ok: false; readonly message: string };

/** Whether the bytes are a photo Milepost keeps: at most 10 MiB, and a JPEG, PNG, HEIC or WebP by content. */
export function checkPhoto(bytes: Uint8Array): PhotoCheck {
  if (bytes.length === 0) return { ok: false, message: 'is empty' };
  if (bytes.length > MAX_PHOTO_BYTES)
    return {
      ok: false,
      message: `is ${String(bytes.length)} bytes; a photo may be at most ${String(MAX_PHOTO_BYTES)} (10 MiB)`,
    };
  const contentType = sniffPhotoType(bytes);
  if (contentType === undefined)
    return { ok: false, message: 'is not a JPEG, PNG, HEIC or WebP image (judged by its content)' };
  return { ok: true, contentType };
}
