import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mileageBudgetExceededEmail } from './email-templates.ts';

test('mileage budget exceeded: the month by name, the budget and the distance so far, in both parts', () => {
  const email = mileageBudgetExceededEmail({
    firstNames: 'Amelia',
    policyReference: 'amber-falcon-river',
    month: '2025-09',
    budget: '150 miles',
    distanceSoFar: '202.3 miles',
  });
  assert.equal(email.subject, 'You have passed your mileage budget for September 2025');
  for (const line of [
    'Hello Amelia,',
    'Month: September 2025',
    'Your budget: 150 miles',
    'Driven so far this month: 202.3 miles',
  ])
    assert.ok(email.text.includes(line), line);
  assert.match(email.text, /have not changed/, 'says the bill is not affected');
  assert.match(email.html, /Your budget: <strong>150 miles<\/strong>/);
});
