import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BORDEREAU_BATCH_ROWS,
  BORDEREAU_BATCH_TEXT_CHARACTERS,
  BORDEREAU_MIN_BATCH_ROWS,
  bordereauBatchRows,
} from './bordereau-batch.ts';

test('the first batch, with no row written yet, is the most a query reads', () => {
  assert.equal(bordereauBatchRows(0, 0), BORDEREAU_BATCH_ROWS);
  assert.equal(bordereauBatchRows(120, 0), BORDEREAU_BATCH_ROWS);
});

test('a batch holds about the text target: wide rows are read fewer a query', () => {
  // JSON rows of about 700 characters: 1 MiB is 1,497 of them.
  assert.equal(bordereauBatchRows(700 * 1_000, 1_000), Math.floor(BORDEREAU_BATCH_TEXT_CHARACTERS / 700));
  assert.ok(bordereauBatchRows(700 * 1_000, 1_000) < BORDEREAU_BATCH_ROWS);
});

test('narrow rows stop at the cap, very wide ones at the floor', () => {
  assert.equal(bordereauBatchRows(230 * 2_000, 2_000), BORDEREAU_BATCH_ROWS);
  assert.equal(bordereauBatchRows(100_000 * 10, 10), BORDEREAU_MIN_BATCH_ROWS);
});
