/** UK postcodes as the policies and journeys hold them. Pure. */

const UK_INWARD = /^(.+?)\s*([0-9][A-Z]{2})$/;

/**
 * A postcode's district (its outward code): `SW1A 1AA` → `SW1A`, `m11ae` → `M1`. What is already a
 * district, or is not a UK postcode, is kept upper case up to its first space. Idempotent.
 */
export function postcodeDistrict(postcode: string): string {
  const upper = postcode.trim().toUpperCase();
  const squeezed = upper.replace(/\s+/g, '');
  if (squeezed.length >= 5) {
    const match = UK_INWARD.exec(squeezed);
    if (match?.[1] !== undefined) return match[1];
  }
  return upper.split(/\s+/)[0] ?? '';
}
