import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import {
  EVENT_CATALOGUE,
  openApiWebhooks,
  SUBSCRIBABLE_EVENT_TYPES,
  TEST_EVENT_TYPE,
} from './event-catalogue.ts';

const SRC = path.resolve(import.meta.dirname, '../../..');
const API_DOCS = path.resolve(SRC, '../docs/api.md');

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

async function emittedTypes(): Promise<Set<string>> {
  const emitted = new Set<string>();
  for (const file of await sourceFiles(SRC)) {
    const text = await fs.readFile(file, 'utf8');
    for (const call of text.matchAll(/recordEvent\(([^;]*?)\)/gs)) {
      // The type is the first dotted string literal among the arguments.
      const literal = /'([a-z_]+\.[a-z_]+)'/.exec(call[1] ?? '');
      if (literal?.[1] !== undefined) emitted.add(literal[1]);
    }
  }
  return emitted;
}

test('every event type written with recordEvent is in the catalogue', async () => {
  const catalogued = new Set(EVENT_CATALOGUE.map((e) => e.type));
  const emitted = await emittedTypes();
  assert.ok(emitted.has('policy.created'), 'the scan finds the policy events');
  const missing = [...emitted].filter((type) => !catalogued.has(type));
  assert.deepEqual(missing, [], `add these to EVENT_CATALOGUE: ${missing.join(', ')}`);
});

test('types are unique, named family.past_tense, and only the test event is not subscribable', () => {
  const types = EVENT_CATALOGUE.map((e) => e.type);
  assert.equal(new Set(types).size, types.length);
  for (const type of types) assert.match(type, /^[a-z]+\.[a-z_]+$/);
  assert.deepEqual(
    types.filter((t) => !SUBSCRIBABLE_EVENT_TYPES.has(t)),
    [TEST_EVENT_TYPE],
  );
  for (const family of ['policy', 'account', 'journey', 'statement', 'payment'])
    assert.ok(
      types.some((t) => t.startsWith(`${family}.`)),
      family,
    );
});

test('the OpenAPI webhooks section has a signed POST with a body schema for each type', () => {
  const webhooks = openApiWebhooks() as Record<
    string,
    {
      post: {
        parameters: Array<{ name: string }>;
        requestBody: { content: Record<string, { schema: unknown }> };
      };
    }
  >;
  assert.deepEqual(Object.keys(webhooks).sort(), EVENT_CATALOGUE.map((e) => e.type).sort());
  for (const [type, item] of Object.entries(webhooks)) {
    assert.deepEqual(
      item.post.parameters.map((p) => p.name),
      ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
    );
    const schema = item.post.requestBody.content['application/json']?.schema as {
      properties: Record<string, unknown>;
      required: string[];
    };
    assert.deepEqual(schema.required.sort(), ['created', 'data', 'environment', 'id', 'type'], type);
  }
});

test('the API docs list every event type', async () => {
  const readme = await fs.readFile(API_DOCS, 'utf8');
  const missing = EVENT_CATALOGUE.map((e) => e.type).filter((type) => !readme.includes(`\`${type}\``));
  assert.deepEqual(missing, []);
});
