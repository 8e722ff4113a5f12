import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Place } from '../../../integrations/geocoding/index.ts';
import { endNames } from './end-names.ts';

const place = (name: string | null, locality?: string | null, town?: string | null): Place => ({
  postcode: null,
  name,
  ...(locality === undefined ? {} : { locality }),
  ...(town === undefined ? {} : { town }),
});

describe('a journey’s end names', () => {
  const cases: ReadonlyArray<[string, Place, Place, [string | null, string | null]]> = [
    [
      'both ends in one town: each by its locality',
      place('London', 'Camden Town'),
      place('London', 'Westminster'),
      ['Camden Town', 'Westminster'],
    ],
    [
      'one town, the same locality: still the finer name',
      place('London', 'Soho'),
      place('London', 'Soho'),
      ['Soho', 'Soho'],
    ],
    [
      'one town, one end without a locality: that end keeps the town',
      place('London', 'Camden Town'),
      place('London', null),
      ['Camden Town', 'London'],
    ],
    [
      'the same small town: localities within it',
      place('Camden Town', 'Chalk Farm', 'London'),
      place('Camden Town', null, 'London'),
      ['Chalk Farm', 'Camden Town'],
    ],
    [
      'one town and a geocoder that gives no localities: the town twice',
      place('Leeds'),
      place('Leeds'),
      ['Leeds', 'Leeds'],
    ],
    [
      'two towns: the towns, whatever their localities',
      place('London', 'Camden Town'),
      place('Oxford', 'Jericho'),
      ['London', 'Oxford'],
    ],
    [
      'a town within the town and the town itself: the town’s end by its locality',
      place('Camden Town', null, 'London'),
      place('London', 'Westminster', 'London'),
      ['Camden Town', 'Westminster'],
    ],
    [
      'two towns within one town: their own names',
      place('Croydon', 'Addiscombe', 'London'),
      place('Bromley', 'Shortlands', 'London'),
      ['Croydon', 'Bromley'],
    ],
    [
      'one town by name, in different towns (two Newports): each by its locality',
      place('Newport', 'Maindee', 'Newport'),
      place('Newport', 'Barton', 'Newport'),
      ['Maindee', 'Barton'],
    ],
    [
      'different towns, the same conurbation unknown: the names',
      place('Salford', null, 'Manchester'),
      place('Manchester', 'Ancoats', null),
      ['Salford', 'Manchester'],
    ],
    ['no name at either end (at sea): none', place(null, null, null), place(null, null, null), [null, null]],
    ['one end unnamed', place(null), place('Dover', 'Castle'), [null, 'Dover']],
  ];
  for (const [name, start, end, [startName, endName]] of cases)
    test(name, () => {
      assert.deepEqual(endNames(start, end), { start: startName, end: endName });
    });
});
