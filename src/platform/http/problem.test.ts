import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import Fastify from 'fastify';
import { AppError } from '../errors.ts';
import { installProblemHandling, resourceExhaustion } from './problem.ts';

test('a full disk (ENOSPC from the file system) answers 503 problem+json with Retry-After', async () => {
  const app = Fastify();
  installProblemHandling(app);
  // /dev/full takes no byte: every write fails with ENOSPC, as on a file system that is full.
  app.post('/write', async () => {
    await writeFile('/dev/full', 'a journey');
    return { written: true };
  });
  app.post('/wrapped', async () => {
    try {
      await writeFile('/dev/full', 'an export');
    } catch (error) {
      throw new Error('the export could not be written', { cause: error });
    }
  });
  for (const url of ['/write', '/wrapped']) {
    const r = await app.inject({ method: 'POST', url });
    assert.equal(r.statusCode, 503, r.body);
    assert.equal(r.headers['retry-after'], '60');
    assert.match(String(r.headers['content-type']), /application\/problem\+json/);
    assert.equal(r.json<{ code: string }>().code, 'SERVICE_UNAVAILABLE');
  }
  await app.close();
});

test('PostgreSQL’s class 53 is an exhausted resource; a client error that mentions one is not', () => {
  const pgError = (code: string) => Object.assign(new Error('insufficient resources'), { code });
  assert.equal(resourceExhaustion(pgError('53100'))?.retryAfterSeconds, 60);
  assert.equal(resourceExhaustion(pgError('53300'))?.retryAfterSeconds, 5);
  for (const code of ['53000', '53200', '53400', '53XYZ'])
    assert.notEqual(resourceExhaustion(pgError(code)), undefined, code);
  for (const code of ['23505', '08006', '5310', 'E53100', 'FST_ERR_CTP_BODY_TOO_LARGE'])
    assert.equal(resourceExhaustion(pgError(code)), undefined, code);
  assert.equal(resourceExhaustion(undefined), undefined);
  assert.equal(resourceExhaustion(new AppError('NOT_FOUND', 'x')), undefined);
});
