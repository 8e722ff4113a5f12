import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { deriveValues, wholeYears, withinYears } from './derived-values.ts';
import { EXAMPLE_QUOTE_INPUT } from './example-rate-book.ts';

describe('derived values', () => {
  test('whole years: birthdays, the day before, and 29 February in a common year', () => {
    assert.equal(wholeYears('1988-03-14', '2025-03-13'), 36);
    assert.equal(wholeYears('1988-03-14', '2025-03-14'), 37);
    assert.equal(wholeYears('2008-02-29', '2025-02-28'), 16);
    assert.equal(wholeYears('2008-02-29', '2025-03-01'), 17);
    assert.equal(wholeYears('2008-02-29', '2024-02-29'), 16);
    assert.equal(wholeYears('2026-01-01', '2025-06-01'), -1);
  });

  test('within years: the day five years before counts, the day before it does not, nor the future', () => {
    assert.equal(withinYears('2020-06-01', 5, '2025-06-01'), true);
    assert.equal(withinYears('2020-05-31', 5, '2025-06-01'), false);
    assert.equal(withinYears('2025-06-02', 5, '2025-06-01'), false);
  });

  test('the example quote on its start date', () => {
    const values = deriveValues(EXAMPLE_QUOTE_INPUT, '2025-06-01');
    assert.deepEqual(values, {
      postcodeDistrict: 'EC1A',
      postcodeArea: 'EC',
      vehicleGroup: 19,
      vehicleValue: 11_500,
      vehicleAge: 7,
      drivers: [
        { path: 'proposer', age: 37, yearsLicensed: 18 },
        { path: 'additional_drivers[0]', age: 20, yearsLicensed: 3 },
      ],
      noClaimsYears: 4,
      claimsIn5Years: 1,
      atFaultClaimsIn5Years: 0,
      convictionsIn5Years: 1,
      pointsIn5Years: 3,
      bansIn3Years: 0,
      estimatedAnnualDistance: 6000,
      use: 'sdp_commuting',
      cover: 'comprehensive',
      voluntaryExcess: 100,
      policyYear: 1,
      modificationCount: 0,
    });
  });

  test('the policy address when no overnight postcode is given; counts across every driver', () => {
    const { overnight_postcode: _, ...vehicle } = EXAMPLE_QUOTE_INPUT.vehicle;
    const values = deriveValues(
      {
        ...EXAMPLE_QUOTE_INPUT,
        policy: { ...EXAMPLE_QUOTE_INPUT.policy, address: { line_1: '1 High St', postcode: 'M1 1AE' } },
        vehicle,
        additional_drivers: [
          {
            ...EXAMPLE_QUOTE_INPUT.additional_drivers![0]!,
            claims: [{ code: 'accident', date: '2024-01-01', at_fault: true }],
            convictions: [{ code: 'DR10', date: '2023-01-01', points: 10, ban: 12 }],
          },
        ],
      },
      '2025-06-01',
    );
    assert.deepEqual(
      [values.postcodeDistrict, values.postcodeArea, values.claimsIn5Years, values.atFaultClaimsIn5Years],
      ['M1', 'M', 2, 1],
    );
    assert.deepEqual([values.convictionsIn5Years, values.pointsIn5Years, values.bansIn3Years], [2, 13, 1]);
  });
});
