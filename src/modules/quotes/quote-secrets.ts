import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The purchase secret of a quote asked with the client id alone (the web app): the buyer's capability
 * to read the quote back and to buy it, since the client id is public and a quote reference may be
 * seen or guessed. 256 random bits; the quote stores only the SHA-256 of it.
 */
export function newPurchaseSecret(): { readonly secret: string; readonly hash: Buffer } {
  const secret = randomBytes(32).toString('base64url');
  return { secret, hash: hashOf(secret) };
}

const hashOf = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();

// Compared against when a quote has no secret, so every answer costs the same hash and compare.
const NO_SECRET = randomBytes(32);

/**
 * Whether `presented` is the secret whose SHA-256 is `storedHash`: the hashes are compared in constant
 * time, so the time taken tells nothing of how much of a guess was right. False when the quote has no
 * secret (asked by a server) or none was presented.
 */
export function secretMatches(storedHash: Uint8Array | null, presented: string | undefined): boolean {
  const expected = storedHash?.length === 32 ? storedHash : NO_SECRET;
  const same = timingSafeEqual(hashOf(presented ?? ''), expected);
  return same && storedHash !== null && presented !== undefined;
}
