import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attemptOutcome } from './attempt-outcome.ts';
import { TEST_CARDS, type CardBehaviour, type IntentStatus } from './objects.ts';

const behaviourOf = (token: string): CardBehaviour => {
  const card = TEST_CARDS[token];
  assert.ok(card !== undefined, token);
  return card.behaviour;
};
const fresh = { status: 'requires_confirmation' as IntentStatus, paymentMethodId: null };
const waitingFor = (paymentMethodId: string) => ({
  status: 'requires_action' as IntentStatus,
  paymentMethodId,
});

test('a card that pays succeeds, on or off session', () => {
  for (const offSession of [false, true])
    assert.deepEqual(attemptOutcome(fresh, 'pm_1', behaviourOf('pm_card_visa'), offSession), {
      kind: 'succeed',
    });
});

test('a declined card fails with its issuer’s codes, after a charge the issuer saw', () => {
  assert.deepEqual(
    attemptOutcome(fresh, 'pm_1', behaviourOf('pm_card_chargeDeclinedInsufficientFunds'), true),
    {
      kind: 'fail',
      failure: {
        code: 'card_declined',
        declineCode: 'insufficient_funds',
        message: 'Your card has insufficient funds.',
      },
      charged: true,
    },
  );
  const expired = attemptOutcome(fresh, 'pm_1', behaviourOf('pm_card_chargeDeclinedExpiredCard'), false);
  assert.equal(expired.kind === 'fail' && expired.failure.code, 'expired_card');
});

test('3-D Secure: on session the intent waits; confirmed again with the same card it succeeds', () => {
  const threeDs = behaviourOf('pm_card_authenticationRequired');
  assert.deepEqual(attemptOutcome(fresh, 'pm_1', threeDs, false), { kind: 'require_action' });
  assert.deepEqual(attemptOutcome(waitingFor('pm_1'), 'pm_1', threeDs, false), { kind: 'succeed' });
  // Another card of the same kind has not been authenticated: it waits in turn.
  assert.deepEqual(attemptOutcome(waitingFor('pm_1'), 'pm_2', threeDs, false), { kind: 'require_action' });
});

test('3-D Secure off session: authentication_required, with no charge, even while the intent waits', () => {
  const threeDs = behaviourOf('pm_card_authenticationRequired');
  for (const intent of [fresh, waitingFor('pm_1')]) {
    const outcome = attemptOutcome(intent, 'pm_1', threeDs, true);
    assert.equal(outcome.kind, 'fail');
    assert.equal(outcome.charged, false);
    assert.equal(outcome.failure.code, 'authentication_required');
    assert.equal(outcome.failure.declineCode, 'authentication_required');
  }
});
