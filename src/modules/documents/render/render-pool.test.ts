/**
 * The render pool gives the bytes the process itself gives: its threads parse the fonts from the pool's
 * shared bytes and draw the map from the pool's packed outline, and the PDF they move back is whole.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  EXAMPLE_BRANDING,
  EXAMPLE_IDS,
  examplePolicy,
  HOSTILE_BRANDING,
  HOSTILE_IDS,
  hostilePolicy,
  statementFor,
} from '../../../../test/support/documents.ts';
import type { DocumentInput, LonLat } from '../document-content.ts';
import { documentFontBytes } from './font-bytes.ts';
import { renderDocument } from './index.ts';
import { packDocument, unpackDocument } from './packed-routes.ts';
import { brandingForThread, createRenderPool } from './render-pool.ts';
import { packedUkOutline, ukOutline } from './uk-outline.ts';

test('a render thread gives the same bytes as the process, for statements with and without routes', async () => {
  const inputs: DocumentInput[] = [
    { kind: 'statement', content: statementFor(examplePolicy(), EXAMPLE_IDS) },
    { kind: 'statement', content: statementFor(hostilePolicy(), HOSTILE_IDS, 0) },
  ];
  const brandings = [EXAMPLE_BRANDING, HOSTILE_BRANDING];
  const pool = createRenderPool(1);
  try {
    for (const [i, input] of inputs.entries()) {
      const branding = brandings[i] ?? EXAMPLE_BRANDING;
      const [threaded, again] = await Promise.all([
        pool.render(input, branding),
        pool.render(input, branding),
      ]);
      const local = await renderDocument(input, branding);
      assert.ok(local.length > 10_000, 'a statement embeds its fonts');
      assert.deepEqual(Buffer.from(threaded), Buffer.from(local));
      assert.deepEqual(Buffer.from(again), Buffer.from(local));
      assert.equal(threaded.byteLength, threaded.buffer.byteLength, 'the PDF is a buffer of its own');
    }
  } finally {
    await pool.close();
  }
});

test('the shared data is in shared memory, and the outline unpacks to its rings', () => {
  const { regular, bold } = documentFontBytes();
  const outline = packedUkOutline();
  for (const shared of [regular.buffer, bold.buffer, outline.buffer])
    assert.ok(shared instanceof SharedArrayBuffer);
  assert.ok(regular.length > 500_000 && bold.length > 500_000);
  const rings = ukOutline();
  assert.equal(rings.length, outline[0]);
  const points = rings.reduce((sum, ring) => sum + ring.points.length / 2, 0);
  assert.ok(points > 1_000, `${String(points)} points`);
  for (const ring of rings) {
    assert.equal(ring.points.length, ring.mercator.length);
    assert.equal(ring.points.buffer, outline.buffer, 'a view on the packed outline, not a copy');
    for (let i = 0; i < ring.points.length; i += 2) {
      const lng = ring.points[i] ?? NaN;
      const lat = ring.points[i + 1] ?? NaN;
      assert.ok(lng >= ring.west && lng <= ring.east && lat >= ring.south && lat <= ring.north);
      assert.ok(
        lng > -11 && lng < 2 && lat > 49 && lat < 61,
        `${String(lng)}, ${String(lat)} is in the isles`,
      );
    }
  }
});

test('a thread is handed the logo in a buffer of its own, not the larger buffer it may be a view on', async () => {
  const logo = EXAMPLE_BRANDING.logo;
  assert.ok(logo !== undefined);
  const large = new Uint8Array(4 * 1024 * 1024);
  large.set(logo.bytes, 1000);
  const viewed = {
    ...EXAMPLE_BRANDING,
    logo: { ...logo, bytes: large.subarray(1000, 1000 + logo.bytes.length) },
  };
  const handed = brandingForThread(viewed).logo;
  assert.ok(handed !== undefined);
  assert.equal(handed.bytes.buffer.byteLength, logo.bytes.length);
  assert.deepEqual(Buffer.from(handed.bytes), Buffer.from(logo.bytes));
  const own = { ...EXAMPLE_BRANDING, logo: { ...logo, bytes: new Uint8Array(logo.bytes) } };
  assert.equal(brandingForThread(own), own, 'a logo of its own is handed as it is');
  const input: DocumentInput = { kind: 'statement', content: statementFor(examplePolicy(), EXAMPLE_IDS) };
  const pool = createRenderPool(1);
  try {
    const threaded = await pool.render(input, viewed);
    assert.deepEqual(Buffer.from(threaded), Buffer.from(await renderDocument(input, EXAMPLE_BRANDING)));
  } finally {
    await pool.close();
  }
});

test("a statement's routes reach a thread packed and come out as they went in", () => {
  const content = statementFor(examplePolicy(), EXAMPLE_IDS);
  const routes: LonLat[][] = [
    ...content.routes.map((route) => [...route]),
    [],
    [
      [-0, 51.5],
      [Infinity, -Infinity],
    ],
  ];
  const input: DocumentInput = { kind: 'statement', content: { ...content, routes } };
  const packed = packDocument(input);
  assert.ok(packed.routes instanceof Object && packed.routes.points instanceof Float64Array);
  assert.equal(packed.input.kind === 'statement' ? packed.input.content.routes.length : -1, 0);
  assert.deepEqual(unpackDocument(packed), input);
  const nan = unpackDocument(
    packDocument({ kind: 'statement', content: { ...content, routes: [[[NaN, 1]]] } }),
  );
  assert.ok(nan.kind === 'statement' && Number.isNaN(nan.content.routes[0]?.[0]?.[0]));
});
