/*
 * The password policy for personal passwords (NIST SP 800-63B style): a length range, no composition
 * rules, and a refusal of passwords that attackers try first: common passwords and the words they are
 * built from, with digits or symbols around them ("Password2024!"), leet spellings ("p@ssw0rd"),
 * repeated or sequential characters ("aaaaaaaa", "12345678", "abcabcabc") and the account's own
 * username or email. Pure: the list of common passwords is passed in.
 */

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 128;
/** Digits and symbols around a common word that still leave it guessable ("monkey1", "!dragon2024"). */
const MAX_PREDICTABLE_AFFIX = 6;

export type PasswordProblem = 'TOO_SHORT' | 'TOO_LONG' | 'COMMON' | 'PREDICTABLE' | 'CONTAINS_IDENTITY';

export type PasswordCheck =
  { readonly ok: true } | { readonly ok: false; readonly problem: PasswordProblem; readonly message: string };

export interface PasswordContext {
  readonly username?: string | undefined;
  readonly email?: string | undefined;
}

const LEET: Readonly<Record<string, string>> = {
  '0': 'o',
  '1': 'i',
  '3': 'e',
  '4': 'a',
  '5': 's',
  '7': 't',
  '8': 'b',
  '@': 'a',
  $: 's',
  '!': 'i',
  '|': 'l',
  '+': 't',
};

const foldLeet = (text: string): string => text.replace(/[0134578@$!|+]/g, (c) => LEET[c] ?? c);

/** Parses the data file: one lower-case entry a line, `#` comments. */
export function parseCommonPasswords(text: string): ReadonlySet<string> {
  const entries = new Set<string>();
  for (const line of text.split('\n')) {
    const entry = line.trim().toLowerCase();
    if (entry !== '' && !entry.startsWith('#')) entries.add(entry);
  }
  return entries;
}

/** "aaaaaaaa", "abababab", "123123123": a unit of up to 4 characters repeated. */
function isRepetitive(text: string): boolean {
  return /^(.{1,4})\1+$/su.test(text);
}

/** "12345678", "abcdefgh", "87654321", "zyxwvuts": each character one above (or below) the last. */
function isSequential(text: string): boolean {
  const codes = Array.from(text, (c) => c.codePointAt(0) ?? 0);
  if (codes.length < 3) return false;
  const step = (codes[1] ?? 0) - (codes[0] ?? 0);
  if (step !== 1 && step !== -1) return false;
  return codes.every((code, k) => k === 0 || code - (codes[k - 1] ?? 0) === step);
}

const predictable = (text: string): boolean => isRepetitive(text) || isSequential(text);

/**
 * A common word with digits or symbols around it: "Password2024!", "123qwerty", "p@ssw0rd1".
 * The word must be in the list; the affix must be short, or itself repetitive or sequential.
 */
function isDecoratedCommonWord(lower: string, common: ReadonlySet<string>): boolean {
  const match = /^([\d\W_]*)(.*?)([\d\W_]*)$/su.exec(lower);
  if (match === null) return false;
  const [, before = '', core = '', after = ''] = match;
  const affix = before + after;
  if (affix === '' || core.length < 3) return false;
  const inList = common.has(core) || common.has(foldLeet(core));
  return inList && (affix.length <= MAX_PREDICTABLE_AFFIX || predictable(before) || predictable(after));
}

/** Whether `password` may be someone's personal password; the message is safe to show to the user. */
export function checkPassword(
  password: string,
  context: PasswordContext,
  common: ReadonlySet<string>,
): PasswordCheck {
  const length = Array.from(password).length;
  if (length < PASSWORD_MIN_LENGTH)
    return { ok: false, problem: 'TOO_SHORT', message: `must be at least ${PASSWORD_MIN_LENGTH} characters` };
  if (length > PASSWORD_MAX_LENGTH)
    return { ok: false, problem: 'TOO_LONG', message: `must be at most ${PASSWORD_MAX_LENGTH} characters` };
  const lower = password.toLowerCase();
  if (common.has(lower) || common.has(foldLeet(lower)) || isDecoratedCommonWord(lower, common))
    return {
      ok: false,
      problem: 'COMMON',
      message: 'is too common: choose a password that is hard to guess',
    };
  if (predictable(lower))
    return {
      ok: false,
      problem: 'PREDICTABLE',
      message: 'must not be repeated or sequential characters',
    };
  const identities = [context.username, context.email, context.email?.split('@')[0]]
    .map((s) => s?.trim().toLowerCase() ?? '')
    .filter((s) => s.length >= 4);
  if (identities.some((identity) => lower.includes(identity)))
    return {
      ok: false,
      problem: 'CONTAINS_IDENTITY',
      message: 'must not contain your username or email address',
    };
  return { ok: true };
}
