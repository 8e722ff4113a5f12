import { randomInt } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { hash, verify } from '@node-rs/argon2';
import { createLimiter } from '../../platform/concurrency.ts';

// NOTE: @node-rs/argon2's defaults are argon2id, m = 19 MiB, t = 2, p = 1: the OWASP setting.
export const hashPassword = (password: string): Promise<string> => lane(() => hash(password));
export const verifyPassword = (hashed: string, password: string): Promise<boolean> =>
  lane(() => verify(hashed, password)).catch(() => false);

// Each hash keeps a core busy for ~10 ms. Left to libuv's four threads, a burst of logins takes every
// core and the event loop serving everything else waits its turn (bench/login.ts: reads fell to a
// quarter). Hashes run PASSWORD_HASHING_CONCURRENCY at a time, by default one fewer than the cores.
let lane = createLimiter(Math.max(1, availableParallelism() - 1));

/** How many hashes run at once in this process (set once, from the configuration, at start). */
export function setPasswordHashingConcurrency(concurrency: number): void {
  lane = createLimiter(concurrency);
}

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
const DIGITS = '23456789';
const SYMBOLS = '!#%+=?@';

/** A temporary password: 16 characters (≈ 90 bits) without look-alike characters, with a digit and a symbol. */
export function generateTemporaryPassword(): string {
  const pick = (set: string): string => set[randomInt(set.length)] ?? 'x';
  const chars = Array.from({ length: 14 }, () => pick(ALPHABET));
  chars.splice(randomInt(chars.length + 1), 0, pick(DIGITS));
  chars.splice(randomInt(chars.length + 1), 0, pick(SYMBOLS));
  return chars.join('');
}

/** A username from the policyholder's name plus random digits: readable, unique per company and environment by retry. */
export function generateUsername(firstNames: string, lastNames: string): string {
  const clean = (s: string) =>
    s
      .normalize('NFKD')
      .replace(/[^A-Za-z]/g, '')
      .toLowerCase();
  const base = `${clean(firstNames).slice(0, 1)}${clean(lastNames).slice(0, 11)}` || 'driver';
  return `${base}${String(randomInt(1000, 10000))}`;
}
