import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { postcodeDistrict } from './postcodes.ts';

describe('postcodeDistrict', () => {
  test('a full postcode keeps its outward code, in either case, with or without the space', () => {
    for (const [postcode, district] of [
      ['SW1A 1AA', 'SW1A'],
      ['sw1a1aa', 'SW1A'],
      ['M1 1AE', 'M1'],
      ['B33 8TH', 'B33'],
      ['EC1A 1BB', 'EC1A'],
      [' cr2 6xh ', 'CR2'],
    ] as const)
      assert.equal(postcodeDistrict(postcode), district, postcode);
  });
  test('a district stays as it is; so does anything else up to its first space', () => {
    for (const [postcode, district] of [
      ['SW1A', 'SW1A'],
      ['M1', 'M1'],
      ['10115 Berlin', '10115'],
      ['!!0AA !', '!!0AA'],
      ['SW1A1AA flat 2', 'SW1A'],
      ['', ''],
    ] as const)
      assert.equal(postcodeDistrict(postcode), district, postcode);
  });
  test('idempotent', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 12 }),
          fc.stringMatching(/^[A-Za-z!]{1,2}[0-9][A-Za-z0-9 ]{0,3}[0-9][A-Za-z]{2}[ !]?$/),
        ),
        (text) => {
          const once = postcodeDistrict(text);
          assert.equal(postcodeDistrict(once), once);
        },
      ),
    );
  });
});
