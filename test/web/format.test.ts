import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  formatDate,
  formatDateTime,
  formatDay,
  formatDistance,
  formatMoney,
  formatRate,
  formatTime,
} from '../../web/shared/format.ts';

// The web apps' en-GB formats (web/shared/format.ts), written without Intl so that a first page does not
// load ICU: each must read exactly as Intl's en-GB does, which these check against ICU itself.

const LONDON = 'Europe/London';
const icu = {
  money: new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'GBP' }),
  rate: new Intl.NumberFormat('en-GB', {
    style: 'currency',
    currency: 'GBP',
    minimumFractionDigits: 2,
    maximumFractionDigits: 4,
  }),
  number: new Intl.NumberFormat('en-GB', { maximumFractionDigits: 1 }),
  date: new Intl.DateTimeFormat('en-GB', {
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    timeZone: LONDON,
  }),
  day: new Intl.DateTimeFormat('en-GB', {
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    timeZone: LONDON,
  }),
  time: new Intl.DateTimeFormat('en-GB', {
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZone: LONDON,
  }),
};

/** Amounts as the API sends them (whole pence), and any double, ties and signs included. */
const amounts = fc.oneof(
  fc.integer({ min: -10_000_000_000, max: 10_000_000_000 }).map((pence) => pence / 100),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e12, max: 1e12 }),
  fc.integer({ min: -2_000_000, max: 2_000_000 }).map((n) => n / 1000 + 0.0005),
  fc.constantFrom(0, -0, 0.005, 1.005, -0.004, 0.045, 1e-7, 1e21, -1e21, Number.NaN, Infinity, -Infinity),
);

describe('money and numbers, as Intl en-GB writes them', () => {
  test('money: £1,234.50', () => {
    fc.assert(
      fc.property(amounts, (pounds) => {
        assert.equal(formatMoney(pounds), icu.money.format(pounds));
      }),
      { numRuns: 5_000 },
    );
    assert.equal(formatMoney(1234.5), '£1,234.50');
    assert.equal(formatMoney(-0.004), '-£0.00');
  });

  test('a rate, two to four decimals: £0.045 a mile', () => {
    fc.assert(
      fc.property(amounts, fc.constantFrom<'mile' | 'km'>('mile', 'km'), (pounds, unit) => {
        const words = unit === 'km' ? 'kilometre' : 'mile';
        assert.equal(formatRate(pounds, unit), `${icu.rate.format(pounds)} a ${words}`);
      }),
      { numRuns: 5_000 },
    );
    assert.equal(formatRate(0.045, 'mile'), '£0.045 a mile');
  });

  test('a distance, at most one decimal: 1,234.6 kilometres', () => {
    fc.assert(
      fc.property(amounts, (value) => {
        assert.equal(formatDistance(value, 'km').replace(/ kilometres?$/, ''), icu.number.format(value));
      }),
      { numRuns: 5_000 },
    );
    assert.equal(formatDistance(1234.56, 'km'), '1,234.6 kilometres');
    assert.equal(formatDistance(1, 'mile'), '1 mile');
  });
});

describe("dates and times on London's clock, as Intl en-GB writes them", () => {
  const checkInstant = (at: Date) => {
    assert.equal(formatDate(at), icu.date.format(at), at.toISOString());
    assert.equal(formatDay(at), icu.day.format(at), at.toISOString());
    assert.equal(formatTime(at), icu.time.format(at), at.toISOString());
  };

  test('any instant from 1990 to 2105 (the summer-time rule written out for 1996–2099, Intl beyond)', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2105, 0, 1) }), (ms) => {
        checkInstant(new Date(ms));
      }),
      { numRuns: 20_000 },
    );
  });

  test('each clock change of 1996–2099, the millisecond before and the one at it', () => {
    for (let year = 1996; year <= 2099; year++)
      for (const month of [2, 9]) {
        const lastDay = Date.UTC(year, month + 1, 0, 1);
        const change = lastDay - new Date(lastDay).getUTCDay() * 86_400_000;
        for (const ms of [change - 1, change, change + 3_600_000 - 1, change + 3_600_000])
          checkInstant(new Date(ms));
      }
  });

  test('what the API sends: UNIX seconds, ISO instants and dates', () => {
    assert.equal(formatDate(1_748_732_400), '1 June 2025');
    assert.equal(formatDate('2025-06-01'), '1 June 2025');
    assert.equal(formatDay('2026-06-30T23:30:00Z'), 'Wednesday, 1 July 2026');
    assert.equal(formatDateTime('2026-03-29T01:00:00Z'), '29 March 2026 at 02:00');
    assert.equal(formatDateTime('2026-10-25T01:00:00Z'), '25 October 2026 at 01:00');
    assert.throws(() => formatDate('not a date'), RangeError);
  });
});
