import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkCardDetails, passesLuhn } from './card-details.ts';

const NOW = new Date('2026-11-26T12:00:00Z');
const card = (overrides: Partial<Parameters<typeof checkCardDetails>[0]>) =>
  checkCardDetails(
    { number: '4242424242424242', expMonth: '11', expYear: '2026', cvc: '123', ...overrides },
    NOW,
  );

test('the Luhn checksum', () => {
  for (const good of ['4242424242424242', '5555555555554444', '378282246310005', '4000000000009995'])
    assert.ok(passesLuhn(good), good);
  for (const bad of ['4242424242424241', '5555555555554445']) assert.ok(!passesLuhn(bad), bad);
});

test('card details: each refusal with Stripe’s code and parameter', () => {
  const cases: Array<[Partial<Parameters<typeof checkCardDetails>[0]>, string | undefined]> = [
    [{}, undefined],
    [{ number: '4242 4242 4242 4242' }, undefined],
    [{ expYear: '26' }, undefined],
    [{ cvc: undefined }, undefined],
    [{ cvc: '1234' }, undefined],
    [{ number: '4242424242424241' }, 'incorrect_number'],
    [{ number: '4242x' }, 'invalid_number'],
    [{ number: '42424242424' }, 'invalid_number'],
    [{ expMonth: '0' }, 'invalid_expiry_month'],
    [{ expMonth: '13' }, 'invalid_expiry_month'],
    [{ expMonth: '10' }, 'invalid_expiry_month'],
    [{ expYear: '2025' }, 'invalid_expiry_year'],
    [{ expYear: '2077' }, 'invalid_expiry_year'],
    [{ expYear: '202' }, 'invalid_expiry_year'],
    [{ cvc: '12' }, 'invalid_cvc'],
    [{ cvc: '12a' }, 'invalid_cvc'],
    [{ number: '4111111111111111' }, 'card_declined'],
  ];
  for (const [overrides, code] of cases) {
    const checked = card(overrides);
    assert.equal(checked.ok ? undefined : checked.code, code, JSON.stringify(overrides));
  }
});

test('a test number names its test card; two-digit years are this century’s', () => {
  const checked = card({ number: '4000000000009995', expMonth: '2', expYear: '31' });
  assert.ok(checked.ok);
  assert.equal(checked.card.testCard.last4, '9995');
  assert.deepEqual([checked.card.expMonth, checked.card.expYear], [2, 2031]);
});
