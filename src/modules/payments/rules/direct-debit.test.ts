import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { isWorkingDay, workingDaysBetween } from '../../../platform/working-days.ts';
import { collectionDay, movedCollectionDay, returnedCollection } from './direct-debit.ts';

describe('collectionDay', () => {
  test('the notice period in England and Wales working days, across clock changes and bank holidays', () => {
    const table: Array<[string, number, string]> = [
      // Across the spring clock change (29 March 2026) and Easter (Good Friday 3, Easter Monday 6 April).
      ['2026-03-20', 10, '2026-04-07'],
      // Across the early May bank holiday (4 May 2026).
      ['2026-04-20', 10, '2026-05-05'],
      // Across the autumn clock change (26 October 2025).
      ['2025-10-20', 10, '2025-11-03'],
      // Across Christmas, Boxing Day and New Year's Day.
      ['2025-12-19', 10, '2026-01-07'],
      // Announced on a Saturday: counted from the next working day.
      ['2026-03-21', 3, '2026-03-25'],
    ];
    for (const [noticeOn, days, expected] of table)
      assert.equal(collectionDay(noticeOn, days), expected, `${noticeOn} + ${String(days)}`);
  });

  test('never fewer than the scheme’s 3 working days, whatever is asked', () => {
    assert.equal(collectionDay('2026-03-16', 1), '2026-03-19');
    assert.equal(collectionDay('2026-03-16', 0), '2026-03-19');
  });

  test('always a working day, at least the notice period of working days after the notice', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('2019-01-01T00:00:00Z'),
          max: new Date('2027-11-30T00:00:00Z'),
          noInvalidDate: true,
        }),
        fc.integer({ min: 3, max: 30 }),
        (at, days) => {
          const noticeOn = at.toISOString().slice(0, 10);
          const on = collectionDay(noticeOn, days);
          assert.ok(isWorkingDay(on), on);
          assert.ok(workingDaysBetween(noticeOn, on) >= days, `${noticeOn} → ${on}`);
        },
      ),
    );
  });
});

describe('movedCollectionDay', () => {
  test('a new mandate takes the day announced, or its own first collection if that is later', () => {
    // Set up on Christmas Eve 2027: the bank holidays of 27 and 28 December and 3 January 2028 pass first.
    assert.equal(movedCollectionDay('2027-12-29', '2027-12-24', 10), '2028-01-12');
    assert.equal(movedCollectionDay('2028-01-20', '2027-12-24', 10), '2028-01-20');
    assert.equal(movedCollectionDay('2028-01-12', '2027-12-24', 10), '2028-01-12');
  });
});

describe('returnedCollection', () => {
  test('insufficient funds is presented once more, then asks for a new method', () => {
    assert.deepEqual(returnedCollection('insufficient_funds', 1), { action: 'retry' });
    assert.deepEqual(returnedCollection('insufficient_funds', 2), {
      action: 'update_method',
      mandateEnded: false,
    });
  });

  test('a cancelled instruction or closed account ends the mandate and asks for a new method', () => {
    for (const code of ['debit_not_authorized', 'account_closed', 'no_account', 'bank_ownership_changed'])
      assert.deepEqual(returnedCollection(code, 1), { action: 'update_method', mandateEnded: true }, code);
  });

  test('other failures ask for a new method and keep the mandate', () => {
    for (const code of ['charge_exceeds_weekly_limit', 'generic_could_not_process', null])
      assert.deepEqual(returnedCollection(code, 1), { action: 'update_method', mandateEnded: false });
  });
});
