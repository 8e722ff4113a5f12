import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { around, distance } from 'geokdbush';
import { DEFAULT_DATA_DIR } from './offline-geocoder.ts';
import {
  encodePostcodeFile,
  inwardNumber,
  inwardText,
  kdOrder,
  PostcodeFileReader,
  postcodeText,
  readPostcodeFile,
  type PostcodeColumns,
} from './postcode-file.ts';

/** Deterministic synthetic postcodes spread over Great Britain's box (enough to need 32-bit ids). */
function syntheticColumns(count: number): PostcodeColumns {
  let seed = 12345;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const columns = {
    count,
    outwardCodes: ['AB1', 'SW1A', 'ZE3', 'G12'],
    latUnits: new Int32Array(count),
    lngUnits: new Int32Array(count),
    outwardIndex: new Uint16Array(count),
    inwardCode: new Uint16Array(count),
  };
  for (let i = 0; i < count; i++) {
    columns.latUnits[i] = Math.round((49.9 + random() * 8.8) * 1e5);
    columns.lngUnits[i] = Math.round((-8.2 + random() * 10) * 1e5);
    columns.outwardIndex[i] = Math.floor(random() * 4);
    columns.inwardCode[i] = Math.floor(random() * 6760);
  }
  return columns;
}

describe('postcode file', () => {
  const columns = syntheticColumns(70_000);
  const file = encodePostcodeFile(columns);

  test('inward codes number 0..6759 and back', () => {
    for (let code = 0; code < 6760; code++) assert.equal(inwardNumber(inwardText(code)), code);
    assert.equal(inwardText(inwardNumber('1AA')), '1AA');
    assert.equal(postcodeText(['SW1A'], inwardNumber('1AA')), 'SW1A 1AA');
  });

  test('reads back every record, whatever the chunking', () => {
    const order = kdOrder(columns);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 20 }), (sizes) => {
        const reader = new PostcodeFileReader();
        let at = 0;
        for (let k = 0; at < file.length; k++) {
          const size = sizes[k % sizes.length] ?? 1;
          reader.push(file.subarray(at, at + size));
          at += size;
        }
        const { index, outwardCodes } = reader.finish();
        assert.deepEqual(outwardCodes, columns.outwardCodes);
        for (let k = 0; k < columns.count; k += 97) {
          const i = order[k] ?? -1;
          assert.equal(index.ids[k], (columns.outwardIndex[i] ?? 0) * 65536 + (columns.inwardCode[i] ?? 0));
          assert.equal(index.coords[2 * k], Math.fround((columns.lngUnits[i] ?? 0) / 1e5));
          assert.equal(index.coords[2 * k + 1], Math.fround((columns.latUnits[i] ?? 0) / 1e5));
        }
      }),
      { numRuns: 5 },
    );
  });

  test('is a valid KDBush tree after the reordering inside leaves: searches match a full scan', () => {
    const { index } = readPostcodeFile(file);
    const box = fc.tuple(
      fc.double({ min: 49.9, max: 58.7, noNaN: true }),
      fc.double({ min: -8.2, max: 1.8, noNaN: true }),
    );
    fc.assert(
      fc.property(box, fc.double({ min: 0.001, max: 0.5, noNaN: true }), ([lat, lng], size) => {
        const found = index.range(lng, lat, lng + size, lat + size).sort((a, b) => a - b);
        const expected: number[] = [];
        for (let k = 0; k < index.numItems; k++) {
          const x = index.coords[2 * k] ?? NaN;
          const y = index.coords[2 * k + 1] ?? NaN;
          if (x >= lng && x <= lng + size && y >= lat && y <= lat + size) expected.push(index.ids[k] ?? -1);
        }
        assert.deepEqual(
          found,
          expected.sort((a, b) => a - b),
        );
      }),
      { numRuns: 40 },
    );
  });

  test('refuses a file that is not one, truncated or too long', () => {
    assert.throws(
      () => readPostcodeFile(Uint8Array.from([1, 2, 3, 4, 1, 0, 64, 0, 0, 0, 1, 0, 0, 0, 0, 0])),
      /not a Milepost postcode file/,
    );
    assert.throws(() => readPostcodeFile(file.subarray(0, file.length - 10)), /truncated/);
    const longer = new Uint8Array(file.length + 1);
    longer.set(file);
    assert.throws(() => readPostcodeFile(longer), /trailing bytes/);
  });

  test('the shipped file picks the same nearest postcode as a scan of all 1.74 million', () => {
    const shipped = path.join(DEFAULT_DATA_DIR, 'uk-postcodes/gb-postcodes.kd');
    const { index, outwardCodes } = readPostcodeFile(fs.readFileSync(shipped));
    assert.equal(index.numItems, 1_743_823);
    const points: [number, number][] = [
      [51.501, -0.1416],
      [55.8609, -4.2514],
      [57.4778, -4.2247],
      [50.1188, -5.5376],
      [52.6309, 1.2974],
      [53.4084, -2.9916],
    ];
    const found = points.map(([lat, lng]) => around(index, lng, lat, 1)[0] ?? -1);
    const best = points.map(() => Infinity);
    const foundKilometres = points.map(() => NaN);
    for (let k = 0; k < index.numItems; k++) {
      const x = index.coords[2 * k] ?? NaN;
      const y = index.coords[2 * k + 1] ?? NaN;
      points.forEach(([lat, lng], p) => {
        const kilometres = distance(lng, lat, x, y);
        if (kilometres < (best[p] ?? NaN)) best[p] = kilometres;
        if (index.ids[k] === found[p]) foundKilometres[p] = kilometres;
      });
    }
    // Postcodes may share a position, so compare distances, not which of the equals came first.
    assert.deepEqual(foundKilometres, best, found.map((packed) => postcodeText(outwardCodes, packed)).join());
  });
});
