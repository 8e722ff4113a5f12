import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { createTestApp, type TestApp } from '../../support/app.ts';

/*
 * Routes authenticate before the body is read: a caller without valid credentials is answered 401 while
 * its body is still arriving, so it cannot make the server hold (and parse) up to a route's body limit.
 * Over a real socket, since an injected request hands Fastify its whole body at once.
 */

const MIB = 1024 * 1024;
/** Long enough for a loaded machine; a server waiting for the declared body never answers. */
const ANSWER_WITHIN_MS = 10_000;

interface Answer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly problem: { status: number; code: string };
}

let t: TestApp;
let port: number;
before(async () => {
  t = await createTestApp({ listen: true });
  const address = t.app.server.address();
  assert.ok(address !== null && typeof address === 'object');
  port = address.port;
});
after(() => t.close());

/**
 * Declares a body of `declaredBytes`, sends only `firstChunk` of it and never ends: the answer that
 * arrives is one given before the body was read. Rejects when none comes within ANSWER_WITHIN_MS.
 */
function answerToUnfinishedBody(
  method: string,
  path: string,
  declaredBytes: number,
  headers: Record<string, string>,
  firstChunk: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: '127.0.0.1',
      port,
      method,
      path,
      agent: false,
      headers: { ...headers, 'content-length': String(declaredBytes) },
    });
    const timer = setTimeout(() => {
      request.destroy();
      reject(
        new Error(`${method} ${path}: no answer within ${String(ANSWER_WITHIN_MS)} ms of a partial body`),
      );
    }, ANSWER_WITHIN_MS);
    let settled = false;
    const settle = (error: Error | undefined, answer?: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      if (answer === undefined) reject(error ?? new Error('no answer'));
      else resolve(answer);
    };
    request.on('error', settle);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', settle);
      response.on('end', () => {
        settle(undefined, {
          status: response.statusCode ?? 0,
          contentType: response.headers['content-type'],
          problem: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer['problem'],
        });
      });
    });
    request.write(firstChunk);
  });
}

const json = { 'content-type': 'application/json' };

describe('a request without valid credentials is refused before its body is read', () => {
  test('a claim photo (16 MiB of bytes): 401 problem+json while the body is unsent', async () => {
    const answer = await answerToUnfinishedBody(
      'POST',
      '/policys/P-1/claims/C-1/photos',
      16 * MIB,
      { 'content-type': 'image/jpeg' },
      '\xff\xd8\xff\xe0',
    );
    assert.equal(answer.status, 401);
    assert.match(answer.contentType ?? '', /^application\/problem\+json/);
    assert.equal(answer.problem.code, 'INVALID_CLIENT_CREDENTIALS');
  });

  test('a claim photo with an access token that is not one: 401 INVALID_TOKEN', async () => {
    const answer = await answerToUnfinishedBody(
      'POST',
      '/policys/P-1/claims/C-1/photos',
      16 * MIB,
      { 'content-type': 'image/jpeg', authorization: 'Bearer not-a-token' },
      '\xff\xd8\xff\xe0',
    );
    assert.equal(answer.status, 401);
    assert.equal(answer.problem.code, 'INVALID_TOKEN');
  });

  test('a batch of journeys (16 MiB of JSON): 401', async () => {
    const answer = await answerToUnfinishedBody('POST', '/journeys/batch', 16 * MIB, json, '{"journeys":[');
    assert.equal(answer.status, 401);
    assert.match(answer.contentType ?? '', /^application\/problem\+json/);
    assert.equal(answer.problem.code, 'INVALID_CLIENT_CREDENTIALS');
  });

  test('a journey with a wrong client secret (1.28 MB): 401', async () => {
    const answer = await answerToUnfinishedBody(
      'POST',
      '/journeys',
      1_280_000,
      { ...json, client_id: 'no-such-client', client_secret: 'wrong' },
      '{"route":"',
    );
    assert.equal(answer.status, 401);
    assert.equal(answer.problem.code, 'INVALID_CLIENT_CREDENTIALS');
  });

  test('a device’s positions (4 MiB): 401', async () => {
    const answer = await answerToUnfinishedBody(
      'POST',
      '/telematics/positions',
      4 * MIB,
      json,
      '{"positions":[',
    );
    assert.equal(answer.status, 401);
    assert.equal(answer.problem.code, 'INVALID_CLIENT_CREDENTIALS');
  });

  test('a rate book version (16 MiB) with a staff session cookie that names no session: 401', async () => {
    const answer = await answerToUnfinishedBody(
      'POST',
      '/rate-books/RB-1/versions',
      16 * MIB,
      { ...json, cookie: 'milepost_staff=no-such-session', client_id: 'no-such-client' },
      '{"content":',
    );
    assert.equal(answer.status, 401);
    assert.equal(answer.problem.code, 'UNAUTHENTICATED');
  });

  test('an admin route (the default 1 MiB limit) without the admin key: 401', async () => {
    const answer = await answerToUnfinishedBody('POST', '/admin/companies', MIB, json, '{"name":"');
    assert.equal(answer.status, 401);
    assert.equal(answer.problem.code, 'UNAUTHENTICATED');
  });
});
