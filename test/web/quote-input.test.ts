import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { EXAMPLE_QUOTE_INPUT } from '../../src/modules/rating/rules/example-rate-book.ts';
import { applicantOf, exactPounds } from '../../web/console/src/quote-input.ts';

// What the console's quote page reads of a quote (web/console/src/quote-input.ts): exact pence shown as
// pounds with every digit, and the applicant read from an input that may lack any field.

describe('exactPounds', () => {
  const cases: ReadonlyArray<[string | number, string]> = [
    [30000, '£300.00'],
    [0, '£0.00'],
    [5, '£0.05'],
    [123456789, '£1,234,567.89'],
    ['31234.5678', '£312.345678'],
    ['31234.5000', '£312.345'],
    ['-150', '-£1.50'],
    ['7.25', '£0.0725'],
    ['1e-7', '1e-7'],
  ];
  for (const [pence, shown] of cases)
    test(`${String(pence)} pence is ${shown}`, () => {
      assert.equal(exactPounds(pence), shown);
    });

  test('the digits shown are the amount divided by 100, exactly', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.nat({ max: 6 }), (scaled, places) => {
        const written =
          places === 0
            ? String(scaled)
            : `${String(scaled / 10n ** BigInt(places))}.${String(scaled % 10n ** BigInt(places)).padStart(places, '0')}`;
        const shown = exactPounds(written).replace(/[£,]/g, '');
        // pounds × 10^(places + 2) is the amount's digits again.
        const [whole = '', fraction = ''] = shown.split('.');
        const digits = BigInt(`${whole}${fraction.padEnd(places + 2, '0')}`);
        assert.equal(digits, scaled);
      }),
    );
  });
});

describe('applicantOf', () => {
  test('the worked example: names, drivers, vehicle, address, term and mileage', () => {
    const applicant = applicantOf(EXAMPLE_QUOTE_INPUT);
    assert.deepEqual(applicant, {
      name: 'Amelia Rose Clarke',
      email: 'amelia.clarke@example.com',
      drivers: ['Amelia Rose Clarke', 'Daniel Clarke'],
      vehicle: 'Volkswagen Golf 1.5 TSI Life',
      reg: 'AB12 CDE',
      valuePounds: 11500,
      address: 'Flat 3, 12 Station Road, London, EC1A 1BB',
      cover: 'comprehensive',
      startAt: 1_748_732_400,
      endAt: 1_780_268_399,
      yearlyMileage: 6000,
    });
  });

  test('an input without its blocks (or not an object) reads as empty, never throws', () => {
    for (const input of [
      undefined,
      null,
      'x',
      7,
      [],
      {},
      { proposer: [], vehicle: 'car', additional_drivers: {} },
    ])
      assert.deepEqual(applicantOf(input), {
        name: '',
        email: '',
        drivers: [],
        vehicle: '',
        reg: '',
        valuePounds: undefined,
        address: '',
        cover: '',
        startAt: undefined,
        endAt: undefined,
        yearlyMileage: undefined,
      });
  });
});
