import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { billedThrough, nextTerm, statusAt, termsAt } from './policy-versions.ts';

const seconds = (iso: string): number => Date.parse(iso) / 1000;
const iso = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString();
const LONDON = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/London',
  dateStyle: 'short',
  timeStyle: 'medium',
});
const london = (unixSeconds: number): string => LONDON.format(new Date(unixSeconds * 1000));

test('a renewed term starts 1 s after the last one ends and ends on the same London anniversary', () => {
  // 2025-06-01 00:00 BST to 2026-05-31 23:59:59 BST.
  let term = { startDate: seconds('2025-05-31T23:00:00Z'), endDate: seconds('2026-05-31T22:59:59Z') };
  for (let year = 0; year < 10; year++) {
    const next = nextTerm(term, {});
    assert.equal(next.startDate, term.endDate + 1, 'continuous: no overlap, no gap');
    assert.match(london(next.startDate), /^01\/06\/\d{4}, 00:00:00$/);
    assert.match(
      london(next.endDate),
      /^31\/05\/\d{4}, 23:59:59$/,
      `year ${String(year)}: ${iso(next.endDate)}`,
    );
    term = next;
  }
  assert.equal(iso(term.endDate), '2036-05-31T22:59:59.000Z');
});

test('terms across GMT: a winter term keeps its wall-clock end; 29 February falls on the 28th', () => {
  const winter = nextTerm(
    { startDate: seconds('2025-01-15T00:00:00Z'), endDate: seconds('2026-01-14T23:59:59Z') },
    {},
  );
  assert.equal(iso(winter.endDate), '2027-01-14T23:59:59.000Z');
  const leap = nextTerm(
    { startDate: seconds('2023-03-01T00:00:00Z'), endDate: seconds('2024-02-29T23:59:59Z') },
    {},
  );
  assert.equal(iso(leap.startDate), '2024-03-01T00:00:00.000Z');
  assert.equal(iso(leap.endDate), '2025-02-28T23:59:59.000Z');
});

test('a year from 29 February renews for a year, not for its 365 or 366 days, and never drifts', () => {
  // Cover to the end of 27 February 2025 (the anniversary falling on the 28th): then 28 February to 28 February.
  let term = { startDate: seconds('2024-02-29T00:00:00Z'), endDate: seconds('2025-02-27T23:59:59Z') };
  for (const end of ['2026-02-27', '2027-02-27', '2028-02-27', '2029-02-27']) {
    term = nextTerm(term, {});
    assert.equal(iso(term.endDate), `${end}T23:59:59.000Z`);
  }
  // Cover to the end of 28 February 2025 (the anniversary falling on 1 March): then 1 March to 1 March.
  term = { startDate: seconds('2024-02-29T00:00:00Z'), endDate: seconds('2025-02-28T23:59:59Z') };
  for (const end of ['2026-02-28', '2027-02-28', '2028-02-29', '2029-02-28']) {
    term = nextTerm(term, {});
    assert.equal(iso(term.endDate), `${end}T23:59:59.000Z`);
  }
  // A month from 31 January (to the end of February) is followed by March, then April, whole.
  term = { startDate: seconds('2024-01-31T00:00:00Z'), endDate: seconds('2024-02-29T23:59:59Z') };
  term = nextTerm(term, {});
  assert.deepEqual(
    [iso(term.startDate), iso(term.endDate)],
    ['2024-03-01T00:00:00.000Z', '2024-03-31T22:59:59.000Z'],
  );
});

test('requested dates win; a term of no whole months keeps its length', () => {
  const current = { startDate: seconds('2025-06-01T09:30:00Z'), endDate: seconds('2025-06-20T17:00:00Z') };
  const odd = nextTerm(current, {});
  assert.equal(odd.startDate, current.endDate + 1);
  assert.equal(odd.endDate - odd.startDate, current.endDate - current.startDate);
  assert.deepEqual(nextTerm(current, { startDate: 100, endDate: 200 }), { startDate: 100, endDate: 200 });
});

test('property: yearly renewals never drift, whatever the start day', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 2001, max: 2080 }),
      fc.constantFrom(1, 2, 11, 12),
      fc.integer({ min: 1, max: 28 }),
      (year, month, day) => {
        // A winter start (GMT), so the first term is exactly twelve calendar months in London too.
        const startDate = Date.UTC(year, month - 1, day) / 1000;
        let term = { startDate, endDate: Date.UTC(year + 1, month - 1, day) / 1000 - 1 };
        const endings = new Set<string>();
        for (let i = 0; i < 6; i++) {
          term = nextTerm(term, {});
          const [date = '', time = ''] = london(term.endDate).split(', ');
          endings.add(`${date.slice(0, 5)} ${time}`);
        }
        assert.equal(endings.size, 1, [...endings].join(' | '));
      },
    ),
  );
});

test('termsAt: the latest term started, a renewal stored after it, superseded versions left out', () => {
  const mark = (
    sequence: number,
    versionType: 'nb' | 'mta' | 'rn' | 'st' | 'cn',
    term: number | null,
    start: string,
    superseded = false,
  ) => ({
    sequence,
    versionType,
    term,
    supersededAt: superseded ? new Date('2025-09-01T00:00:00Z') : null,
    start: seconds(start),
  });
  const versions = [
    mark(1, 'nb', 1, '2025-06-01T00:00:00Z'),
    mark(2, 'st', null, '2025-06-01T00:00:00Z'),
    mark(3, 'rn', 2, '2026-06-01T00:00:00Z', true),
    mark(4, 'rn', 2, '2026-06-01T00:00:00Z'),
    // An adjustment of the first term written after the renewal: it belongs to term 1.
    mark(5, 'mta', 1, '2025-06-01T00:00:00Z'),
  ];
  const at = (when: string) => termsAt(versions, new Date(when), (v) => v.start);
  const before = at('2025-05-01T00:00:00Z');
  assert.equal(before?.current.term, 1, 'before any start: the first term');
  const during = at('2025-09-15T00:00:00Z')!;
  assert.deepEqual(
    during.current.versions.map((v) => v.sequence),
    [1, 5],
  );
  assert.equal(during.current.latest.sequence, 5);
  assert.deepEqual(
    during.next?.versions.map((v) => v.sequence),
    [4],
    'the superseded renewal is gone',
  );
  const after = at('2026-06-02T00:00:00Z')!;
  assert.equal(after.current.latest.sequence, 4);
  assert.equal(after.next, undefined);
  assert.equal(
    termsAt([mark(1, 'cn', 1, '2025-06-01T00:00:00Z')], new Date(), (v) => v.start),
    undefined,
  );
});

test('statusAt: pending before the start, lapsed after the end unless a next term follows', () => {
  const term = { start_date: seconds('2025-06-01T00:00:00Z'), end_date: seconds('2026-05-31T23:59:59Z') };
  const at = (when: string, continues = false) => statusAt('active', term, new Date(when), continues);
  assert.equal(at('2025-05-31T00:00:00Z'), 'pending');
  assert.equal(at('2025-09-01T00:00:00Z'), 'active');
  assert.equal(at('2026-05-31T23:59:59Z'), 'active', 'the last second is in the term');
  assert.equal(at('2026-06-01T00:00:00Z'), 'lapsed');
  assert.equal(at('2026-06-01T00:00:00Z', true), 'active');
  assert.equal(statusAt('cancelled', term, new Date('2025-09-01T00:00:00Z'), true), 'cancelled');
});

test('billedThrough: the end of the latest statement period, whatever the order; none before a statement', () => {
  const version = (versionType: 'nb' | 'st' | 'cn', end: string | null) => ({
    versionType,
    statementEndAt: end === null ? null : new Date(end),
    supersededAt: null,
  });
  assert.equal(billedThrough([version('nb', null)]), undefined);
  assert.deepEqual(
    billedThrough([
      version('nb', null),
      version('st', '2025-09-14T22:59:59Z'),
      version('st', '2025-08-14T22:59:59Z'),
      version('cn', null),
    ]),
    new Date('2025-09-14T22:59:59Z'),
  );
});
