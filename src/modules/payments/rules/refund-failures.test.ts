import assert from 'node:assert/strict';
import { test } from 'node:test';
import { refundFailureMessage } from './refund-failures.ts';

test('each of Stripe’s refund failure reasons reads as what happened; an unknown or missing one says none was given', () => {
  const cases: ReadonlyArray<[string | null, RegExp]> = [
    ['expired_or_canceled_card', /expired or been cancelled/],
    ['lost_or_stolen_card', /lost or stolen/],
    ['declined', /issuer declined/],
    ['unknown', /gave no reason/],
    [null, /gave no reason/],
    ['__proto__', /gave no reason/],
  ];
  for (const [reason, expected] of cases) {
    const message = refundFailureMessage(reason);
    assert.match(message, expected, String(reason));
    assert.match(message, /owed to the policyholder/);
  }
});
