import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * The pair a refresh token was rotated into, sealed with AES-256-GCM under a key derived from the
 * rotated token. Only a caller presenting that token (whose hash alone is stored) can open it, so a
 * copy of the database yields no live token.
 */
const keyOf = (refreshToken: string): Buffer =>
  createHash('sha256').update(`milepost:refresh-successor:${refreshToken}`).digest();

export function sealSuccessorPair(refreshToken: string, pair: object): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(refreshToken), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(pair), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

/** The sealed pair, or undefined when it does not open with this token. */
export function openSuccessorPair(refreshToken: string, sealed: string): unknown {
  try {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', keyOf(refreshToken), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8'));
  } catch {
    return undefined;
  }
}
