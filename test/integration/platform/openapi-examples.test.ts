import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';

// Years after the examples were written: they must still work as copied.
const clock = fixedClock('2031-03-01T12:00:00Z');
let t: TestApp;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
});
after(() => t.close());

interface Document {
  paths: Record<string, { post: { requestBody: { content: Record<string, Record<string, unknown>> } } }>;
  components: { schemas: Record<string, unknown> };
}

test("the OpenAPI document's policy and journey examples work on the day it is read", async () => {
  const company = await createCompany(t.app);
  const doc = (await t.app.inject({ url: '/openapi.json' })).json<Document>();
  const policy = structuredClone(
    doc.paths['/policys']!.post.requestBody.content['application/json']!['example'],
  ) as {
    proposer: { email: string };
  };
  policy.proposer.email = 'copied.example@example.com';
  const created = await t.app.inject({
    method: 'POST',
    url: '/policys',
    headers: company.sandbox,
    payload: policy,
  });
  assert.equal(created.statusCode, 201, created.body);
  const body = created.json<{ policy_reference: string; status: string }>();
  assert.equal(body.status, 'active');

  const journey = doc.paths['/journeys']!.post.requestBody.content['application/json']!['schema'] as {
    properties: Record<string, { examples?: unknown[] }>;
  };
  const example = (name: string) => journey.properties[name]?.examples?.[0];
  const posted = await t.app.inject({
    method: 'POST',
    url: '/journeys',
    headers: company.sandbox,
    payload: {
      policy_reference: body.policy_reference,
      route: example('route'),
      start_time: example('start_time'),
      end_time: example('end_time'),
    },
  });
  assert.equal(posted.statusCode, 201, posted.body);
});
