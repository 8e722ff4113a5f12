import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { addDays } from './london-calendar.ts';
import {
  addWorkingDays,
  bankHolidays,
  firstWorkingDayFrom,
  isBankHoliday,
  isWorkingDay,
  workingDaysBetween,
} from './working-days.ts';

// gov.uk's bank holidays for England and Wales (www.gov.uk/bank-holidays, its `england-and-wales`
// list), every year it has published since 2018: the substitute days, 2020's VE Day move, 2022's
// moved Spring bank holiday with the Platinum Jubilee and the State Funeral, 2023's Coronation.
const GOV_UK_ENGLAND_AND_WALES: Readonly<Record<number, readonly string[]>> = {
  2018: ['01-01', '03-30', '04-02', '05-07', '05-28', '08-27', '12-25', '12-26'],
  2019: ['01-01', '04-19', '04-22', '05-06', '05-27', '08-26', '12-25', '12-26'],
  2020: ['01-01', '04-10', '04-13', '05-08', '05-25', '08-31', '12-25', '12-28'],
  2021: ['01-01', '04-02', '04-05', '05-03', '05-31', '08-30', '12-27', '12-28'],
  2022: ['01-03', '04-15', '04-18', '05-02', '06-02', '06-03', '08-29', '09-19', '12-26', '12-27'],
  2023: ['01-02', '04-07', '04-10', '05-01', '05-08', '05-29', '08-28', '12-25', '12-26'],
  2024: ['01-01', '03-29', '04-01', '05-06', '05-27', '08-26', '12-25', '12-26'],
  2025: ['01-01', '04-18', '04-21', '05-05', '05-26', '08-25', '12-25', '12-26'],
  2026: ['01-01', '04-03', '04-06', '05-04', '05-25', '08-31', '12-25', '12-28'],
  2027: ['01-01', '03-26', '03-29', '05-03', '05-31', '08-30', '12-27', '12-28'],
};

describe('bank holidays of England and Wales', () => {
  for (const [year, days] of Object.entries(GOV_UK_ENGLAND_AND_WALES)) {
    test(`${year} is gov.uk's list, no more and no less`, () => {
      assert.deepEqual(
        bankHolidays(Number(year)),
        days.map((d) => `${year}-${d}`),
      );
    });
  }
  test('the moved and extra days are holidays; the days they replaced are working days', () => {
    for (const on of ['2020-05-08', '2022-06-02', '2022-06-03', '2022-09-19', '2023-05-08']) {
      assert.equal(isBankHoliday(on), true, on);
      assert.equal(isWorkingDay(on), false, on);
    }
    // 2020's early May bank holiday moved from Monday 4 to Friday 8 May; 2022's Spring one from 30 May.
    assert.equal(isWorkingDay('2020-05-04'), true);
    assert.equal(isWorkingDay('2022-05-30'), true);
  });
  test('a holiday at a weekend is replaced by its substitute; the weekend day is no bank holiday', () => {
    assert.equal(isBankHoliday('2022-01-01'), false); // Saturday
    assert.equal(isBankHoliday('2022-01-03'), true); // its substitute Monday
    assert.equal(isWorkingDay('2021-12-27'), false);
    assert.equal(isWorkingDay('2021-12-28'), false);
    assert.equal(isWorkingDay('2021-12-29'), true);
  });
  test('Scotland-only and Northern Ireland-only days are working days here', () => {
    assert.equal(isWorkingDay('2025-01-02'), true); // 2 January (Scotland)
    assert.equal(isWorkingDay('2025-03-17'), true); // St Patrick's Day (Northern Ireland)
    assert.equal(isWorkingDay('2025-08-04'), true); // Summer bank holiday (Scotland)
    assert.equal(isWorkingDay('2025-07-14'), true); // Battle of the Boyne, substitute (Northern Ireland)
  });
});

describe('working days', () => {
  test('weekends are never working days', () => {
    assert.equal(isWorkingDay('2026-11-28'), false); // Saturday
    assert.equal(isWorkingDay('2026-11-29'), false); // Sunday
    assert.equal(isWorkingDay('2026-11-30'), true);
  });
  test('adding working days steps over weekends and bank holidays', () => {
    assert.equal(addWorkingDays('2026-11-27', 1), '2026-11-30'); // Friday → Monday
    assert.equal(addWorkingDays('2026-11-28', 1), '2026-11-30'); // from a Saturday
    assert.equal(addWorkingDays('2026-12-23', 3), '2026-12-30'); // over Christmas and the Boxing Day substitute
    assert.equal(addWorkingDays('2023-05-05', 1), '2023-05-09'); // over the Coronation
    assert.equal(addWorkingDays('2022-05-31', 2), '2022-06-06'); // over the Jubilee's two days
    assert.equal(addWorkingDays('2026-12-18', 10), '2027-01-06'); // ten working days' Bacs advance notice
    assert.equal(addWorkingDays('2026-12-30', -3), '2026-12-23');
    assert.equal(addWorkingDays('2026-11-28', 0), '2026-11-28');
  });
  test('the first working day from a date', () => {
    assert.equal(firstWorkingDayFrom('2026-12-30'), '2026-12-30');
    assert.equal(firstWorkingDayFrom('2026-12-25'), '2026-12-29');
    assert.equal(firstWorkingDayFrom('2027-01-01'), '2027-01-04');
  });
  test('working days between two dates count the later one and not the earlier', () => {
    assert.equal(workingDaysBetween('2026-11-27', '2026-11-30'), 1);
    assert.equal(workingDaysBetween('2026-11-30', '2026-11-30'), 0);
    assert.equal(workingDaysBetween('2026-12-18', '2027-01-06'), 10);
    assert.equal(workingDaysBetween('2026-12-30', '2026-12-23'), -3);
    // A clock change is no concern of London dates: 29 March 2026 (clocks forward) is an ordinary Sunday.
    assert.equal(workingDaysBetween('2026-03-27', '2026-03-30'), 1);
  });
  test('not a calendar date is a RangeError, not a guess', () => {
    for (const bad of ['2026-02-30', '2026-2-3', '26-02-03', 'tomorrow', '2026-13-01'])
      assert.throws(() => isWorkingDay(bad), RangeError, bad);
    assert.throws(() => addWorkingDays('2026-01-05', 1.5), RangeError);
  });

  const dates = fc.date({ min: new Date('2018-01-01'), max: new Date('2030-12-31'), noInvalidDate: true });
  const day = dates.map((d) => d.toISOString().slice(0, 10));
  test('property: workingDaysBetween inverts addWorkingDays (backwards from a working day)', () => {
    fc.assert(
      fc.property(day, fc.integer({ min: -40, max: 40 }), (on, n) => {
        const to = addWorkingDays(on, n);
        if (n !== 0) assert.equal(isWorkingDay(to), true);
        if (n >= 0 || isWorkingDay(on)) assert.equal(workingDaysBetween(on, to), n);
        else assert.equal(workingDaysBetween(on, to), n + 1);
      }),
    );
  });
  test('property: between is additive and antisymmetric', () => {
    fc.assert(
      fc.property(day, fc.integer({ min: -30, max: 30 }), fc.integer({ min: -30, max: 30 }), (a, i, j) => {
        const b = addDays(a, i);
        const c = addDays(b, j);
        assert.equal(workingDaysBetween(a, b) + workingDaysBetween(b, a), 0);
        assert.equal(workingDaysBetween(a, b) + workingDaysBetween(b, c), workingDaysBetween(a, c));
      }),
    );
  });
});
