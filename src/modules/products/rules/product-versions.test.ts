import assert from 'node:assert/strict';
import { test } from 'node:test';
import { productVersionAt } from './product-versions.ts';

const v = (sequence: number, iso: string) => ({ sequence, effectiveFrom: new Date(iso) });

test('the version in force: latest effective time not after the moment, ties to the later written', () => {
  const versions = [v(1, '2025-01-01T00:00:00Z'), v(2, '2025-06-01T00:00:00Z'), v(3, '2025-06-01T00:00:00Z')];
  assert.equal(
    productVersionAt(versions, new Date('2024-12-31T00:00:00Z'))?.sequence,
    1,
    'before: the first',
  );
  assert.equal(productVersionAt(versions, new Date('2025-03-01T00:00:00Z'))?.sequence, 1);
  assert.equal(productVersionAt(versions, new Date('2025-06-01T00:00:00Z'))?.sequence, 3);
  const none = productVersionAt<{ sequence: number; effectiveFrom: Date }>([], new Date());
  assert.equal(none, undefined);
});
