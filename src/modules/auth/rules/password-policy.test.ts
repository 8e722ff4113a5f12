import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { loadCommonPasswords } from '../common-passwords.ts';
import { checkPassword, parseCommonPasswords, PASSWORD_MAX_LENGTH } from './password-policy.ts';

const common = loadCommonPasswords();
const problem = (password: string, context = {}) => {
  const check = checkPassword(password, context, common);
  return check.ok ? 'ok' : check.problem;
};

test('the shipped list parses, lower case, comments skipped', () => {
  assert.ok(common.size > 1000, `${common.size} entries`);
  assert.ok(common.has('password') && common.has('qwerty123') && common.has('iloveyou'));
  assert.ok(![...common].some((e) => e.startsWith('#') || e !== e.toLowerCase() || e.trim() !== e));
  assert.deepEqual([...parseCommonPasswords('# c\nAbc\n\n abc \nxyz\n')], ['abc', 'xyz']);
});

test('length: 8 to 128 characters, counted as characters (not UTF-16 units)', () => {
  assert.equal(problem('Zq7#mV2'), 'TOO_SHORT');
  assert.equal(problem('Zq7#mV2x'), 'ok');
  assert.equal(problem('🚗🚙🚕🚓🚑🚒🚐'), 'TOO_SHORT', '7 characters, 14 UTF-16 units');
  assert.equal(problem('x9'.repeat(PASSWORD_MAX_LENGTH / 2) + 'y'), 'TOO_LONG');
  assert.equal(problem('correct horse battery staple'), 'ok');
});

test('common passwords, any case, leet spellings and decorated common words are refused', () => {
  for (const password of [
    'password',
    'PASSWORD',
    '12345678',
    'qwertyuiop',
    'iloveyou',
    'P@ssw0rd',
    'Password1',
    'Password2024!',
    'football123',
    '123qwerty',
    '!!Liverpool1',
    'monkey12345',
    'dragon123456789',
  ])
    assert.equal(problem(password), 'COMMON', password);
});

test('repeated or sequential characters are refused', () => {
  for (const password of ['aaaaaaaa', 'abababab', 'abcabcabc', '98765432', 'abcdefghij', 'zyxwvuts'])
    assert.ok(['COMMON', 'PREDICTABLE'].includes(problem(password)), password);
});

test('the username and the email (or its local part) are refused inside the password', () => {
  const context = { username: 'aclarke4821', email: 'amelia.clarke@example.com' };
  assert.equal(problem('my-aclarke4821-pw', context), 'CONTAINS_IDENTITY');
  assert.equal(problem('Amelia.Clarke!99', context), 'CONTAINS_IDENTITY');
  assert.equal(problem('Tangerine-Kettle-42', context), 'ok');
});

test('property: a random passphrase of 4 words of 5+ letters is accepted', () => {
  const word = fc.string({
    unit: fc.constantFrom(...Array.from('bcdfghjklmnpqrstvwxz')),
    minLength: 5,
    maxLength: 9,
  });
  fc.assert(
    fc.property(fc.array(word, { minLength: 4, maxLength: 4 }), (words) => {
      const password = words.join('-');
      return problem(password) === 'ok' || /^(.{1,4})\1+$/.test(password);
    }),
  );
});
