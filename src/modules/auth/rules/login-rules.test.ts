import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  afterCorrectPassword,
  idpStatus,
  mayResendTemporaryPassword,
  normaliseResetCode,
  temporaryPasswordExpired,
} from './login-rules.ts';

const now = new Date('2025-06-01T12:00:00Z');
const temporary = (expiresAt: string) => ({
  passwordIsTemporary: true,
  temporaryPasswordExpiresAt: new Date(expiresAt),
});
const personal = { passwordIsTemporary: false, temporaryPasswordExpiresAt: null };

test('idp status and the outcome of a correct password', () => {
  assert.equal(idpStatus(personal), 'CONFIRMED');
  assert.equal(idpStatus(temporary('2025-07-01T00:00:00Z')), 'FORCE_CHANGE_PASSWORD');
  assert.equal(afterCorrectPassword(personal, now), 'DONE');
  assert.equal(afterCorrectPassword(temporary('2025-06-01T12:00:01Z'), now), 'NEW_PASSWORD_REQUIRED');
  assert.equal(afterCorrectPassword(temporary('2025-06-01T12:00:00Z'), now), 'TEMPORARY_PASSWORD_EXPIRED');
  assert.equal(temporaryPasswordExpired(personal, now), false);
});

test('RESEND_PASSWORD: a new temporary password only for an account that has not chosen its own', () => {
  assert.equal(mayResendTemporaryPassword(temporary('2025-05-01T00:00:00Z')), true);
  assert.equal(mayResendTemporaryPassword(personal), false);
  assert.equal(mayResendTemporaryPassword(undefined), false);
});

test('reset codes as clients send them', () => {
  assert.equal(normaliseResetCode('042917'), '042917');
  assert.equal(normaliseResetCode(' 042-917 '), '042917');
  assert.equal(normaliseResetCode(42917), '042917');
  for (const bad of ['12345', '1234567', 'abcdef', '', 1_000_000, -1, 1.5])
    assert.equal(normaliseResetCode(bad), undefined);
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 999_999 }),
      (n) => normaliseResetCode(n) === normaliseResetCode(String(n).padStart(6, '0')),
    ),
  );
});
