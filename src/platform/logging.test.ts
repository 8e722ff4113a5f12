import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLogger, createRequestLogger } from './logging.ts';

const capture = (level: string) => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger(level, {
    write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  return { logger, lines };
};

describe('createRequestLogger', () => {
  test('logs at enabled levels with the request bindings, redacted as the parent redacts', () => {
    const { logger, lines } = capture('info');
    const child = createRequestLogger(logger, { reqId: 'r1' }, {});
    child.info({ req: { headers: { authorization: 'Bearer secret' } } }, 'incoming');
    child.debug('not shown');
    assert.equal(lines.length, 1);
    const [line] = lines;
    assert.ok(line !== undefined);
    assert.equal(line['reqId'], 'r1');
    assert.equal(line['msg'], 'incoming');
    assert.deepEqual(line['req'], { headers: { authorization: '[redacted]' } });
  });

  test('a route level raises or lowers the threshold; child() keeps the bindings', () => {
    const { logger, lines } = capture('info');
    const quiet = createRequestLogger(logger, { reqId: 'r2' }, { level: 'warn' });
    quiet.info('probe');
    quiet.warn('slow probe');
    assert.equal(quiet.level, 'warn');
    assert.equal(quiet.isLevelEnabled('info'), false);
    const verbose = createRequestLogger(logger, { reqId: 'r3' }, { level: 'debug' });
    verbose.debug('detail');
    verbose.child({ step: 'x' }).info('nested');
    assert.deepEqual(
      lines.map((l) => [l['reqId'], l['msg'], l['step']]),
      [
        ['r2', 'slow probe', undefined],
        ['r3', 'detail', undefined],
        ['r3', 'nested', 'x'],
      ],
    );
  });
});
