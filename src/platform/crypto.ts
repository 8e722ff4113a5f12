import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random token of `bytes` bytes (default 32 = 256 bits), base64url, with an optional prefix. */
export function randomToken(prefix = '', bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

/** SHA-256 of a high-entropy secret. Enough for random tokens (no dictionary to attack); passwords use argon2id. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Constant-time comparison of a presented token with a stored hash. */
export function tokenMatches(presented: string, storedHash: Uint8Array): boolean {
  const presentedHash = hashToken(presented);
  return storedHash.length === presentedHash.length && timingSafeEqual(presentedHash, storedHash);
}
