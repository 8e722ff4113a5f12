import fs from 'node:fs';
import path from 'node:path';
import { parseCommonPasswords } from './rules/password-policy.ts';

const FILE = path.join(import.meta.dirname, 'data', 'common-passwords.txt');

/** The list of common passwords shipped with the module (data/common-passwords.txt), read once per service. */
export function loadCommonPasswords(): ReadonlySet<string> {
  return parseCommonPasswords(fs.readFileSync(FILE, 'utf8'));
}
