import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import {
  formatSecret,
  messageBody,
  secretKey,
  sign,
  signedHeaders,
  signingSecrets,
  type WebhookEvent,
} from './message.ts';

test('the Standard Webhooks reference vector', () => {
  // From the Standard Webhooks specification's test suite.
  assert.equal(
    sign(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    ),
    'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  );
});

test('secrets round-trip through their whsec_ form', () => {
  const key = Buffer.alloc(32, 7);
  const secret = formatSecret(key);
  assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  assert.deepEqual(secretKey(secret), key);
});

const event: WebhookEvent = {
  id: '0195f1c8-1f43-7000-8000-000000000001',
  type: 'policy.created',
  environment: 'sandbox',
  createdAt: new Date('2025-06-01T12:00:00.999Z'),
  data: { policy_reference: 'amber-falcon-river', note: 'ünïcode ✓' },
};

test('the body is {id, type, created, environment, data} with created in UNIX seconds', () => {
  assert.deepEqual(JSON.parse(messageBody(event)), {
    id: event.id,
    type: 'policy.created',
    created: 1748779200,
    environment: 'sandbox',
    data: event.data,
  });
});

test('an independent implementation (the standardwebhooks package) verifies every signature, with either secret during a rotation', () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.string(),
      (k1, k2, note) => {
        const [current, previous] = [formatSecret(k1), formatSecret(k2)];
        const body = messageBody({ ...event, data: { note } });
        const now = new Date();
        const headers = signedHeaders(event, body, [current, previous], now);
        assert.equal(headers['webhook-id'], event.id);
        assert.equal(headers['webhook-timestamp'], String(Math.floor(now.getTime() / 1000)));
        assert.equal(headers['webhook-signature']?.split(' ').length, 2);
        for (const secret of [current, previous])
          assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
        assert.throws(
          () => new Webhook(formatSecret(Buffer.alloc(32, 1))).verify(body, headers),
          /No matching signature/,
        );
        assert.throws(() => new Webhook(current).verify(`${body} `, headers), /No matching signature/);
      },
    ),
    { numRuns: 50 },
  );
});

test('after a rotation the previous secret signs too, until it expires', () => {
  const expiresAt = new Date('2025-06-02T12:00:00Z');
  const endpoint = { secret: 'whsec_new', previousSecret: 'whsec_old', previousSecretExpiresAt: expiresAt };
  assert.deepEqual(signingSecrets(endpoint, new Date('2025-06-02T11:59:59Z')), ['whsec_new', 'whsec_old']);
  assert.deepEqual(signingSecrets(endpoint, expiresAt), ['whsec_new']);
  assert.deepEqual(
    signingSecrets({ secret: 'whsec_only', previousSecret: null, previousSecretExpiresAt: null }, expiresAt),
    ['whsec_only'],
  );
});
