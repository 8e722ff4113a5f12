/** UK postcodes as the policies and journeys hold them. Pure. */

/** A whole UK postcode without its space: the outward code, then the inward code (digit, two letters). */
const UK_POSTCODE = /^([A-Z]{1,2}[0-9][A-Z0-9]?)([0-9][A-Z]{2})$/;

/**
 * A postcode's district (its outward code): `SW1A 1AA` → `SW1A`, `m11ae` → `M1`. What is already a
 * district, or is not a UK postcode, is kept upper case up to its first space. Idempotent: a district
 * is never itself the shape of a whole postcode.
 */
export function postcodeDistrict(postcode: string): string {
  const upper = postcode.trim().toUpperCase();
  const whole = UK_POSTCODE.exec(upper.replace(/\s+/g, ''));
  if (whole?.[1] !== undefined) return whole[1];
  const firstWord = upper.split(/\s+/)[0] ?? '';
  return UK_POSTCODE.exec(firstWord)?.[1] ?? firstWord;
}
