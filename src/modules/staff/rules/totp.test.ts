import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { acceptedStep, enrolmentFor, newTotpSecret } from './totp.ts';

// RFC 6238 appendix B: the SHA-1 secret "12345678901234567890", whose 8-digit codes end in these 6.
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const at = (seconds: number) => new Date(seconds * 1000);

describe('TOTP', () => {
  test('the RFC 6238 test vectors, as 6-digit codes', () => {
    assert.equal(acceptedStep(RFC_SECRET, '287082', at(59)), 1);
    assert.equal(acceptedStep(RFC_SECRET, '081804', at(1_111_111_109)), 37_037_036);
    assert.equal(acceptedStep(RFC_SECRET, '005924', at(1_234_567_890)), 41_152_263);
  });

  test('one step either side is accepted, and says which step it was; further is not', () => {
    assert.equal(acceptedStep(RFC_SECRET, '287082', at(59 + 30)), 1, 'typed as the code changed');
    assert.equal(acceptedStep(RFC_SECRET, '287082', at(59 + 60)), undefined);
  });

  test('codes are six digits; spaces are forgiven; anything else is refused', () => {
    assert.equal(acceptedStep(RFC_SECRET, '287 082', at(59)), 1);
    for (const code of ['', '28708', '2870820', 'abcdef', '28708x'])
      assert.equal(acceptedStep(RFC_SECRET, code, at(59)), undefined, code);
  });

  test('an enrolment carries the secret, an otpauth URI with the issuer, and a QR code', async () => {
    const secret = newTotpSecret();
    assert.match(secret, /^[A-Z2-7]{32}$/, '160 bits in base32');
    const enrolment = await enrolmentFor(secret, 'ada@insurer.example', 'Acme Mutual');
    assert.match(enrolment.otpauth_uri, /^otpauth:\/\/totp\/Acme%20Mutual:ada%40insurer\.example\?/);
    assert.match(enrolment.otpauth_uri, new RegExp(`secret=${secret}`));
    assert.match(enrolment.qr_svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  });
});
