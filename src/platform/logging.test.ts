import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from './logging.ts';

test('secrets are redacted before anything is written, in children too', () => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger('info', {
    write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  const child = logger.child({ reqId: 'r1' });
  child.info({ req: { headers: { authorization: 'Bearer secret' } }, body: { password: 'hunter22' } }, 'x');
  child.debug('not shown');
  assert.equal(lines.length, 1);
  const line = lines[0] ?? {};
  assert.equal(line['reqId'], 'r1');
  assert.deepEqual(line['req'], { headers: { authorization: '[redacted]' } });
  assert.deepEqual(line['body'], { password: '[redacted]' });
});
