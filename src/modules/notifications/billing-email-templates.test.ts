import assert from 'node:assert/strict';
import { test } from 'node:test';
import { paymentFailedEmail, statementIssuedEmail, webhookEndpointDisabledEmail } from './email-templates.ts';

test('statement issued: period, distance and amounts in pounds, in both parts', () => {
  const email = statementIssuedEmail({
    firstNames: 'Amelia',
    policyReference: 'amber-falcon-river',
    periodStartOn: '2025-06-01',
    periodEndOn: '2025-06-30',
    journeyCount: 12,
    distanceMiles: 321.06,
    usagePremiumPence: 1284,
    subscriptionPremiumPence: 2500,
    totalPremiumPence: 3784,
    billedPremiumPence: 123456,
    currency: 'GBP',
  });
  assert.equal(email.subject, 'Your statement for 2025-06-01 to 2025-06-30');
  for (const line of [
    'Journeys: 12',
    'Distance: 321.1 miles',
    'Usage premium: £12.84',
    'Total premium: £37.84',
    'Amount to pay: £1,234.56',
  ])
    assert.ok(email.text.includes(line), line);
  assert.match(email.html, /Amount to pay: <strong>£1,234\.56<\/strong>/);
});

test('payment failed: the reason and the next attempt, or what to do when none is left', () => {
  const retrying = paymentFailedEmail({
    firstNames: 'Oliver',
    policyReference: 'amber-falcon-river',
    amountPence: 3784,
    currency: 'GBP',
    reason: 'Your card was declined.',
    nextAttemptOn: '2025-07-03',
  });
  assert.ok(retrying.text.includes('Amount: £37.84'));
  assert.ok(retrying.text.includes('Reason: Your card was declined.'));
  assert.ok(retrying.text.includes('We will try again on: 2025-07-03'));
  const final = paymentFailedEmail({
    firstNames: 'Oliver',
    policyReference: 'amber-falcon-river',
    amountPence: 3784,
    currency: 'GBP',
    reason: 'Your card has expired.',
    nextAttemptOn: null,
  });
  assert.ok(final.text.includes('add a new card or contact us'));
});

test('endpoint disabled: names the endpoint, and user values are escaped in HTML', () => {
  const email = webhookEndpointDisabledEmail({
    companyName: 'Acme <Mutual>',
    endpointId: 'we_123',
    url: 'https://hooks.example.com/x?a=1&b=2',
    environment: 'production',
    failingSince: '2025-06-01T12:00:00.000Z',
    lastError: 'the endpoint answered 500',
  });
  assert.equal(email.subject, 'Webhook endpoint disabled (production)');
  assert.ok(email.text.includes('Endpoint: we_123'));
  assert.ok(email.html.includes('Acme &lt;Mutual&gt;'));
  assert.ok(email.html.includes('a=1&amp;b=2'));
});

test('statement issued: it says the card is charged only when a charge was recorded, else how to pay', () => {
  const base = {
    firstNames: 'Amelia',
    policyReference: 'amber-falcon-river',
    periodStartOn: '2025-06-01',
    periodEndOn: '2025-06-30',
    journeyCount: 0,
    distanceMiles: 0,
    usagePremiumPence: 0,
    subscriptionPremiumPence: 2500,
    totalPremiumPence: 2500,
    billedPremiumPence: 2500,
    currency: 'GBP',
  };
  assert.match(statementIssuedEmail({ ...base, payment: 'card' }).text, /charged to your card on file/);
  const none = statementIssuedEmail({ ...base, payment: 'none' }).text;
  assert.doesNotMatch(none, /charged/);
  assert.match(none, /no card on file for this policy: add a card in your app, or contact us to pay/);
  const carried = statementIssuedEmail({
    ...base,
    billedPremiumPence: 21,
    totalPremiumPence: 21,
    payment: 'carried',
    carriedForwardPence: 21,
  }).text;
  assert.match(
    carried,
    /£0\.21 is below the smallest card payment we can take, so it will be added to your next statement/,
  );
  assert.match(statementIssuedEmail({ ...base, billedPremiumPence: 0 }).text, /nothing to pay/);
});
