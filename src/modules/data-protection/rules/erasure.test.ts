import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  decideErasure,
  ERASED_DATE,
  ERASED_NAME,
  ERASED_TEXT,
  erasedEmail,
  needleMatcher,
  personalValues,
  pseudonymiseSnapshot,
  scrubJson,
  scrubText,
} from './erasure.ts';

const DAY_MS = 86_400_000;

describe('decideErasure', () => {
  const end = new Date('2025-05-31T23:00:00Z');
  const after = (days: number) => new Date(end.getTime() + days * DAY_MS);
  test('allowed from the last end plus the retention days, and not a millisecond before', () => {
    const base = { policyEnds: [new Date('2024-01-01T00:00:00Z'), end], retentionDays: 2190, force: false };
    assert.deepEqual(decideErasure({ ...base, now: after(2190) }), { ok: true });
    assert.deepEqual(decideErasure({ ...base, now: new Date(after(2190).getTime() - 1) }), {
      ok: false,
      reason: 'RETENTION_NOT_PASSED',
      allowedFrom: after(2190),
    });
  });
  test('a policy still running: not allowed, whatever the retention', () => {
    const decision = decideErasure({ policyEnds: [end], now: after(-10), retentionDays: 0, force: false });
    assert.equal(decision.ok, false);
  });
  test('force, or no policy at all: allowed now', () => {
    assert.deepEqual(
      decideErasure({ policyEnds: [end], now: after(-10), retentionDays: 2190, force: true }),
      {
        ok: true,
      },
    );
    assert.deepEqual(decideErasure({ policyEnds: [], now: end, retentionDays: 2190, force: false }), {
      ok: true,
    });
  });
});

const snapshot = {
  policy: {
    start_date: 1748732400,
    address: {
      line_1: '7 Quillfeather Row',
      line_2: 'Flat 2',
      city: 'Bath',
      country: 'GB',
      postcode: 'BA1 1AA',
    },
  },
  proposer: {
    title: 'Ms',
    first_names: 'Zephyrine',
    last_names: 'Quillfeather',
    email: 'zephyrine@example.com',
    dob: '1979-04-12',
    phone_number: '07700 900123',
    licence_type: 'full',
    licence_issued_date: '1998-06-01',
    occupation: 'Cartographer',
    convictions: [{ code: 'SP30', date: '2019-01-01' }],
    ncd: 5,
  },
  additional_drivers: [
    { first_names: 'Orrin', last_names: 'Quillfeather', dob: '1980-02-02', email: 'orrin@example.com' },
  ],
  vehicle: {
    reg: 'AB12 CDE',
    vin: 'WVWZZZ1KZAW000001',
    make: 'VW',
    model: 'Golf',
    overnight_postcode: 'BA1 1AB',
    parked_location: 'driveway',
  },
  pricing: { upfront_premium: 120, ipt_rate: 12 },
  custom: { nickname: 'Zeph' },
  payment: { provider_payment_reference: 'pi_1' },
};

describe('pseudonymiseSnapshot', () => {
  const erased = pseudonymiseSnapshot(snapshot, 'U-ABC') as typeof snapshot;
  test('people keep only pseudonymous required fields', () => {
    assert.deepEqual(erased.proposer, {
      first_names: ERASED_NAME,
      last_names: ERASED_NAME,
      email: erasedEmail('U-ABC'),
      dob: ERASED_DATE,
    });
    assert.deepEqual(erased.additional_drivers, [
      { first_names: ERASED_NAME, last_names: ERASED_NAME, dob: ERASED_DATE },
    ]);
  });
  test('the address keeps its country and district; the vehicle its reg and model, not its VIN', () => {
    assert.deepEqual(erased.policy.address, { line_1: ERASED_NAME, country: 'GB', postcode: 'BA1' });
    assert.equal(erased.policy.start_date, 1748732400);
    assert.deepEqual(erased.vehicle, {
      reg: 'AB12 CDE',
      make: 'VW',
      model: 'Golf',
      overnight_postcode: 'BA1',
    });
    assert.equal(erased.custom, undefined);
    assert.deepEqual(erased.pricing, snapshot.pricing, 'financial terms stay');
    assert.deepEqual(erased.payment, snapshot.payment);
  });
  test('idempotent, and finds nothing personal afterwards', () => {
    assert.deepEqual(pseudonymiseSnapshot(erased, 'U-ABC'), erased);
    const account = {
      email: erasedEmail('U-ABC'),
      username: 'erased-u-abc',
      firstNames: ERASED_NAME,
      lastNames: ERASED_NAME,
    };
    assert.deepEqual(personalValues(account, [erased]), []);
  });
});

describe('personalValues and the scrub', () => {
  const account = {
    email: 'zephyrine@example.com',
    username: 'zephyrinequillfeather42',
    firstNames: 'Zephyrine',
    lastNames: 'Quillfeather',
  };
  const values = personalValues(account, [snapshot]);
  test('names, emails, phones, address lines, full postcodes (with and without space), dates, VIN', () => {
    for (const value of [
      'Zephyrine',
      'Quillfeather',
      'Zephyrine Quillfeather',
      'Orrin Quillfeather',
      'zephyrine@example.com',
      'orrin@example.com',
      'zephyrinequillfeather42',
      '07700 900123',
      '7 Quillfeather Row',
      'Flat 2',
      'BA1 1AA',
      'BA11AA',
      'BA1 1AB',
      '1979-04-12',
      '1998-06-01',
      'WVWZZZ1KZAW000001',
    ])
      assert.ok(values.includes(value), value);
    assert.ok(!values.includes('BA1'), 'a district is no personal value');
    assert.ok(!values.includes('AB12 CDE'), 'the registration stays (bordereau)');
  });
  test('free text and JSON are scrubbed case-insensitively, longest match first', () => {
    const matcher = needleMatcher(values);
    assert.equal(
      scrubText('Goodwill for ZEPHYRINE quillfeather (zephyrine@example.com)', matcher),
      `Goodwill for ${ERASED_TEXT} (${ERASED_TEXT})`,
    );
    const scrubbed = scrubJson({ a: ['call 07700 900123'], b: 3, c: { d: 'ba11aa' }, e: 'nothing' }, matcher);
    assert.equal(scrubbed.changed, true);
    assert.deepEqual(scrubbed.value, {
      a: [`call ${ERASED_TEXT}`],
      b: 3,
      c: { d: ERASED_TEXT },
      e: 'nothing',
    });
    const untouched = { e: 'nothing' };
    assert.equal(scrubJson(untouched, matcher).value, untouched);
    assert.equal(scrubJson(untouched, matcher).changed, false);
  });
  test('no needles: nothing changes', () => {
    assert.equal(needleMatcher([]), undefined);
    assert.equal(scrubText('Zephyrine', undefined), 'Zephyrine');
  });
});
