import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asTenant } from '../companies/index.ts';
import type { RateBookVersionRecord, VersionInForce } from './rate-book-repository.ts';
import { EXAMPLE_RATE_BOOK } from './rules/index.ts';
import { createVersionMemo } from './version-memo.ts';

const acme = asTenant('c-acme', 'sandbox');
const acmeLive = asTenant('c-acme', 'production');
const rateBook = { id: 'b-1', reference: 'car-rates', productId: 'p-1', name: 'Car', createdAt: new Date(0) };

function version(
  id: string,
  effectiveFrom: string | null,
  status: 'approved' | 'draft' = 'approved',
): VersionInForce {
  const record: RateBookVersionRecord = {
    id,
    rateBookId: rateBook.id,
    number: Number(id.slice(1)),
    status,
    content: EXAMPLE_RATE_BOOK,
    effectiveFrom: effectiveFrom === null ? null : new Date(effectiveFrom),
    author: 'integration',
    authorStaffId: null,
    contributorStaffIds: [],
    contributors: [],
    approver: null,
    approverStaffId: null,
    approvedAt: null,
    createdAt: new Date(0),
    updatedAt: new Date(0),
  };
  return { rateBook, version: record };
}

const on = (iso: string) => new Date(iso);

test('the candidate is the remembered version latest in effect at the date, none before the first', () => {
  const memo = createVersionMemo();
  assert.equal(memo.candidate(acme, 'car', on('2025-06-01T00:00:00Z')), undefined, 'nothing remembered');
  memo.remember(acme, 'car', 'p-1', version('v2', '2025-06-01T00:00:00Z'));
  memo.remember(acme, 'car', 'p-1', version('v1', '2025-01-01T00:00:00Z'));
  memo.remember(acme, 'car', 'p-1', version('v3', '2025-09-01T00:00:00Z'));
  const cases: Array<[string, string | undefined]> = [
    ['2024-12-31T23:59:59Z', undefined],
    ['2025-01-01T00:00:00Z', 'v1'],
    ['2025-05-31T23:59:59Z', 'v1'],
    ['2025-06-01T00:00:00Z', 'v2'],
    ['2025-08-31T00:00:00Z', 'v2'],
    ['2026-01-01T00:00:00Z', 'v3'],
  ];
  for (const [date, expected] of cases)
    assert.equal(memo.candidate(acme, 'car', on(date))?.version.id, expected, date);
  assert.equal(memo.candidate(acme, 'car', on('2026-01-01T00:00:00Z'))?.productId, 'p-1');
});

test('products and environments are apart; drafts are never remembered; a version once', () => {
  const memo = createVersionMemo();
  memo.remember(acme, 'car', 'p-1', version('v1', '2025-01-01T00:00:00Z'));
  memo.remember(acme, 'car', 'p-1', version('v1', '2025-01-01T00:00:00Z'));
  memo.remember(acme, 'van', 'p-2', version('v9', null, 'draft'));
  const later = on('2026-01-01T00:00:00Z');
  assert.equal(memo.candidate(acme, 'van', later), undefined);
  assert.equal(memo.candidate(acmeLive, 'car', later), undefined);
  assert.equal(memo.candidate(acme, 'car', later)?.version.id, 'v1');
});

test('past its limits the memo starts again rather than grow', () => {
  const memo = createVersionMemo({ products: 2, versionsPerProduct: 2 });
  memo.remember(acme, 'car', 'p-1', version('v1', '2025-01-01T00:00:00Z'));
  memo.remember(acme, 'car', 'p-1', version('v2', '2025-02-01T00:00:00Z'));
  memo.remember(acme, 'car', 'p-1', version('v3', '2025-03-01T00:00:00Z'));
  assert.equal(memo.candidate(acme, 'car', on('2025-02-15T00:00:00Z')), undefined, 'v1 and v2 forgotten');
  assert.equal(memo.candidate(acme, 'car', on('2025-03-15T00:00:00Z'))?.version.id, 'v3');
  memo.remember(acme, 'van', 'p-2', version('v4', '2025-01-01T00:00:00Z'));
  memo.remember(acme, 'bike', 'p-3', version('v5', '2025-01-01T00:00:00Z'));
  assert.equal(memo.candidate(acme, 'car', on('2025-03-15T00:00:00Z')), undefined, 'started again');
  assert.equal(memo.candidate(acme, 'bike', on('2025-03-15T00:00:00Z'))?.version.id, 'v5');
});
