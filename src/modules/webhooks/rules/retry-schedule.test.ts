import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../../config.ts';
import {
  DEFAULT_RETRY_SCHEDULE_MS,
  DISABLE_AFTER_FAILING_MS,
  isDelivered,
  nextAttemptAt,
  shouldDisableEndpoint,
} from './retry-schedule.ts';

const at = new Date('2025-06-01T12:00:00Z');
const HOUR_MS = 3_600_000;

test('the default schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then give up (about a day in all)', () => {
  const offsets = [1, 2, 3, 4, 5, 6, 7].map(
    (n) => (nextAttemptAt(n, at, DEFAULT_RETRY_SCHEDULE_MS)?.getTime() ?? 0) - at.getTime(),
  );
  assert.deepEqual(offsets, [
    5_000,
    300_000,
    1_800_000,
    2 * HOUR_MS,
    5 * HOUR_MS,
    10 * HOUR_MS,
    10 * HOUR_MS,
  ]);
  assert.equal(nextAttemptAt(8, at, DEFAULT_RETRY_SCHEDULE_MS), null, '8 attempts, then failed');
  const totalHours = DEFAULT_RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0) / HOUR_MS;
  assert.ok(totalHours > 24 && totalHours < 30, `${totalHours} h`);
});

test('the configuration’s default schedule is this one', () => {
  assert.deepEqual(loadConfig({}).webhookRetryScheduleMs, DEFAULT_RETRY_SCHEDULE_MS);
  assert.deepEqual(loadConfig({ WEBHOOKS_RETRY_SCHEDULE: '100ms, 2s,1m,1h' }).webhookRetryScheduleMs, [
    100,
    2000,
    60_000,
    HOUR_MS,
  ]);
  assert.throws(() => loadConfig({ WEBHOOKS_RETRY_SCHEDULE: '5s,soon' }), /WEBHOOKS_RETRY_SCHEDULE/);
});

test('a manual retry past the schedule is a single attempt', () => {
  assert.equal(nextAttemptAt(9, at, DEFAULT_RETRY_SCHEDULE_MS), null);
  assert.equal(nextAttemptAt(1, at, []), null, 'an empty schedule never retries');
});

test('an endpoint is disabled after 3 days of nothing but failures', () => {
  assert.equal(DISABLE_AFTER_FAILING_MS, 72 * HOUR_MS);
  assert.equal(shouldDisableEndpoint(null, at), false, 'the last attempt succeeded');
  assert.equal(shouldDisableEndpoint(new Date(at.getTime() - 71 * HOUR_MS), at), false);
  assert.equal(shouldDisableEndpoint(new Date(at.getTime() - 72 * HOUR_MS), at), true);
});

test('only 2xx counts as delivered; redirects are failures', () => {
  assert.deepEqual([199, 200, 201, 204, 299, 300, 301, 302, 304, 400, 410, 500].map(isDelivered), [
    false,
    true,
    true,
    true,
    true,
    false,
    false,
    false,
    false,
    false,
    false,
    false,
  ]);
});
