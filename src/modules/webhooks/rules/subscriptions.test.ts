import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normaliseSubscription, subscribes } from './subscriptions.ts';

const known = new Set(['policy.created', 'policy.cancelled', 'payment.failed']);

test('null subscribes to everything; a list to exactly its types', () => {
  assert.equal(subscribes(null, 'policy.created'), true);
  assert.equal(subscribes(['policy.created'], 'policy.created'), true);
  assert.equal(subscribes(['policy.created'], 'policy.cancelled'), false);
  assert.equal(subscribes(['policy'], 'policy.created'), false, 'no prefix matching');
});

test('lists are sorted and deduplicated; unknown types are named with their index', () => {
  assert.deepEqual(normaliseSubscription(['policy.created', 'payment.failed', 'policy.created'], known), {
    ok: true,
    eventTypes: ['payment.failed', 'policy.created'],
  });
  assert.deepEqual(normaliseSubscription(['policy.created', 'policy.creatd', 'webhook.test'], known), {
    ok: false,
    unknown: [
      { index: 1, type: 'policy.creatd' },
      { index: 2, type: 'webhook.test' },
    ],
  });
});
