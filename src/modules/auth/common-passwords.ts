import fs from 'node:fs';
import path from 'node:path';
import { checkPassword, parseCommonPasswords, type PasswordContext } from './rules/password-policy.ts';

const FILE = path.join(import.meta.dirname, 'data', 'common-passwords.txt');

/** The list of common passwords shipped with the module (data/common-passwords.txt), read once per service. */
export function loadCommonPasswords(): ReadonlySet<string> {
  return parseCommonPasswords(fs.readFileSync(FILE, 'utf8'));
}

let shipped: ReadonlySet<string> | undefined;

/** Why a new personal password is refused (undefined: accepted), by the policyholders' rules. */
export function checkNewPassword(password: string, context: PasswordContext): string | undefined {
  shipped ??= loadCommonPasswords();
  const check = checkPassword(password, context, shipped);
  return check.ok ? undefined : check.message;
}
