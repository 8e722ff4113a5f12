import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import {
  examplePolicyInput,
  policyBodyErrors,
  schemaErrors,
  ukPostcode,
  validPolicyInput,
  type PolicyOverrides,
} from '../../../../test/support/policy-arbitraries.ts';
import { POLICY_INPUT_EXAMPLE, type PolicyInput } from './policy-object-schemas.ts';
import {
  ISO_3166_ALPHA2,
  ageOn,
  decimalPlaces,
  defaultBillingDay,
  isCalendarDate,
  isUkPostcode,
  londonDateOf,
  normaliseEmail,
  normalisePolicyInput,
  normalisePostcode,
  validatePolicyInput,
} from './policy-validation.ts';

/** 2025-06-01T00:00:00+01:00: the example's start, and 2025-05-31 in UTC. */
const START = POLICY_INPUT_EXAMPLE.policy.start_date;
const END = POLICY_INPUT_EXAMPLE.policy.end_date;

const errorsFor = (overrides: PolicyOverrides) => validatePolicyInput(examplePolicyInput(overrides));

/** Asserts exactly these `[path, message-fragment]` errors (paths without the `/body` prefix). */
function assertErrors(overrides: PolicyOverrides, expected: [path: string, fragment: string][]): void {
  const errors = errorsFor(overrides);
  assert.equal(errors.length, expected.length, JSON.stringify(errors));
  expected.forEach(([path, fragment], i) => {
    const error = errors[i];
    assert.ok(error !== undefined);
    assert.equal(error.path, `/body${path}`, JSON.stringify(errors));
    assert.ok(error.message.includes(fragment), `${error.message} should mention "${fragment}"`);
  });
}

// ── Helpers ─────────────────────────────────────────────────────────────────────────────────────

test('isCalendarDate accepts days that exist and nothing else', () => {
  for (const ok of ['2024-02-29', '2000-02-29', '2023-12-31', '1800-01-01', '2199-12-31', '2025-04-30'])
    assert.ok(isCalendarDate(ok), ok);
  for (const bad of [
    '2023-02-29',
    '1900-02-29',
    '2023-02-30',
    '2025-04-31',
    '2025-13-01',
    '2025-00-10',
    '2025-01-00',
    '1799-12-31',
    '2200-01-01',
    '2025-1-01',
    '20250101',
    '',
  ]) {
    assert.ok(!isCalendarDate(bad), bad);
  }
});

test('londonDateOf uses the Europe/London calendar (BST and GMT)', () => {
  assert.equal(londonDateOf(START), '2025-06-01'); // 23:00Z on 31 May is midnight in BST
  assert.equal(londonDateOf(Date.UTC(2025, 0, 31, 23, 30) / 1000), '2025-01-31'); // GMT: same as UTC
  assert.equal(londonDateOf(Date.UTC(2025, 2, 30, 0, 59) / 1000), '2025-03-30');
  assert.equal(defaultBillingDay(START), 1);
  assert.equal(defaultBillingDay(Date.UTC(2025, 0, 31, 12) / 1000), 31);
});

test('ageOn counts whole years; a 29 February birthday comes round on 1 March in other years', () => {
  assert.equal(ageOn('2009-06-01', '2025-06-01'), 16);
  assert.equal(ageOn('2009-06-02', '2025-06-01'), 15);
  assert.equal(ageOn('2008-02-29', '2024-02-29'), 16);
  assert.equal(ageOn('2008-02-29', '2025-02-28'), 16);
  assert.equal(ageOn('2009-02-28', '2025-02-28'), 16);
  assert.equal(ageOn('2008-02-29', '2023-02-28'), 14);
  assert.equal(ageOn('2008-02-29', '2023-03-01'), 15);
});

test('decimalPlaces reads the number as JSON wrote it', () => {
  const cases: [number, number][] = [
    [0, 0],
    [12, 0],
    [95.5, 1],
    [29.99, 2],
    [0.045, 3],
    [1e21, 0],
    [1e-7, 7],
    [1.5e-7, 8],
    [0.1 + 0.2, 17],
    [-10.25, 2],
    [123456.789012, 6],
  ];
  for (const [value, places] of cases) assert.equal(decimalPlaces(value), places, String(value));
  assert.equal(decimalPlaces(Number.NaN), Number.POSITIVE_INFINITY);
});

test('normalisePostcode and isUkPostcode', () => {
  assert.equal(normalisePostcode('sw1a1aa'), 'SW1A 1AA');
  assert.equal(normalisePostcode('  ec1a   1bb '), 'EC1A 1BB');
  assert.equal(normalisePostcode('M11AE'), 'M1 1AE');
  assert.equal(normalisePostcode('gir0aa'), 'GIR 0AA');
  for (const ok of [
    'SW1A 1AA',
    'sw1a1aa',
    'M1 1AE',
    'B33 8TH',
    'CR2 6XH',
    'DN55 1PT',
    'W1A 0AX',
    'EC1A 1BB',
    'GIR 0AA',
    ' LS1 4AP ',
    'JE2 3AB',
    'IM1 1AF',
    'GY1 1AA',
    'BT1 5GS',
  ])
    assert.ok(isUkPostcode(ok), ok);
  for (const bad of [
    'SW1A 1A',
    'SW1A  1AA',
    'Q1 1AA',
    'V1 1AA',
    'X1 1AA',
    'AI1 1AA',
    'W1I 1AA',
    'SW1A 1CA',
    'SW1A 1AI',
    '12345',
    'D02 X285',
    'SW1A-1AA',
    '',
  ])
    assert.ok(!isUkPostcode(bad), bad);
});

test('normaliseEmail trims and lower-cases the whole address (the account-matching key)', () => {
  assert.equal(normaliseEmail('  Amelia.Clarke@Example.COM '), 'amelia.clarke@example.com');
});

test('the country list is ISO 3166-1 alpha-2: 249 codes, no reserved ones', () => {
  assert.equal(ISO_3166_ALPHA2.size, 249);
  for (const code of ['GB', 'IE', 'JE', 'GG', 'IM', 'US', 'FR', 'SS', 'BQ', 'AX'])
    assert.ok(ISO_3166_ALPHA2.has(code), code);
  for (const code of ['UK', 'XX', 'EU', 'XK', 'AN', 'ZZ']) assert.ok(!ISO_3166_ALPHA2.has(code), code);
});

test(
  'every live GB postcode in the ONS data is accepted',
  {
    skip: !existsSync(
      new URL('../../../../../shared/data/uk-postcodes/gb-postcodes.csv.gz', import.meta.url),
    ),
  },
  () => {
    const csv = gunzipSync(
      readFileSync(new URL('../../../../../shared/data/uk-postcodes/gb-postcodes.csv.gz', import.meta.url)),
    ).toString('latin1');
    let count = 0;
    const rejected: string[] = [];
    for (const line of csv.split('\n').slice(1)) {
      const postcode = line.slice(0, line.indexOf(','));
      if (postcode === '') continue;
      count += 1;
      if (
        !isUkPostcode(postcode) ||
        !isUkPostcode(postcode.replace(' ', '').toLowerCase()) ||
        normalisePostcode(postcode.replace(' ', '')) !== postcode
      ) {
        rejected.push(postcode);
      }
    }
    assert.ok(count > 1_000_000, `only ${count} postcodes read`);
    assert.deepEqual(rejected.slice(0, 10), []);
  },
);

// ── Cross-field rules ───────────────────────────────────────────────────────────────────────────

test('the example has no cross-field errors', () => {
  assert.deepEqual(validatePolicyInput(POLICY_INPUT_EXAMPLE), []);
});

test('dates must exist', () => {
  assertErrors({ proposer: { dob: '1988-02-30' } }, [['/proposer/dob', 'must be a date that exists']]);
  assertErrors({ proposer: { dob: '1987-02-29' } }, [['/proposer/dob', 'must be a date that exists']]);
  assertErrors({ proposer: { dob: '1988-02-29' } }, []);
  assertErrors({ proposer: { licence_issued_date: '2006-13-01' } }, [
    ['/proposer/licence_issued_date', 'exists'],
  ]);
  assertErrors({ proposer: { residency_date: '1988-04-31' } }, [['/proposer/residency_date', 'exists']]);
  assertErrors({ proposer: { convictions: [{ code: 'SP30', date: '2022-09-31' }] } }, [
    ['/proposer/convictions/0/date', 'exists'],
  ]);
  assertErrors({ proposer: { claims: [{ code: 'theft', date: '2023-02-29' }] } }, [
    ['/proposer/claims/0/date', 'exists'],
  ]);
  assertErrors({ vehicle: { purchase_date: '2021-06-31', manufacture_date: '0017-09-01' } }, [
    ['/vehicle/purchase_date', 'exists'],
    ['/vehicle/manufacture_date', 'years 1800–2199'],
  ]);
  assertErrors({ additional_drivers: [{ first_names: 'Ava', last_names: 'Clarke', dob: '2001-02-30' }] }, [
    ['/additional_drivers/0/dob', 'exists'],
  ]);
});

test('end_date is after start_date', () => {
  assertErrors({ policy: { end_date: START } }, [['/policy/end_date', 'must be after start_date']]);
  assertErrors({ policy: { end_date: START - 1 } }, [['/policy/end_date', 'must be after start_date']]);
  assertErrors({ policy: { end_date: START + 1 } }, []);
});

test('inception_date is not after start_date (a renewal keeps the first term’s inception)', () => {
  assertErrors({ policy: { inception_date: START + 1 } }, [
    ['/policy/inception_date', 'must not be after start_date'],
  ]);
  assertErrors({ policy: { inception_date: START } }, []);
  assertErrors({ policy: { inception_date: START - 3 * 365 * 86_400, policy_year: 4 } }, []);
});

test('effective_date falls within the term, ends included', () => {
  assertErrors({ effective_date: START - 1 }, [['/effective_date', 'within the policy term']]);
  assertErrors({ effective_date: END + 1 }, [['/effective_date', 'within the policy term']]);
  assertErrors({ effective_date: START }, []);
  assertErrors({ effective_date: END }, []);
  // With a broken term only the term is reported.
  assertErrors({ effective_date: START, policy: { end_date: START - 10 } }, [
    ['/policy/end_date', 'after start_date'],
  ]);
});

test('every driver is at least 16 on the start date in Europe/London, and at most 120', () => {
  // START is 2025-06-01 in London but still 2025-05-31 in UTC: this proposer turns 16 that day.
  assertErrors(
    { proposer: { dob: '2009-06-01', licence_issued_date: '2025-05-01', residency_date: '2009-06-01' } },
    [],
  );
  assertErrors(
    { proposer: { dob: '2009-06-02', licence_issued_date: '2025-05-01', residency_date: '2009-06-02' } },
    [['/proposer/dob', 'at least 16 on the policy start date (2025-06-01)']],
  );
  assertErrors(
    { proposer: { dob: '2030-01-01', licence_issued_date: undefined, residency_date: undefined } },
    [['/proposer/dob', 'at least 16']],
  );
  assertErrors(
    { proposer: { dob: '1904-06-01', licence_issued_date: '1930-01-01', residency_date: undefined } },
    [['/proposer/dob', 'more than 120 years']],
  );
  assertErrors(
    { proposer: { dob: '1904-06-02', licence_issued_date: '1930-01-01', residency_date: undefined } },
    [],
  );
  assertErrors(
    {
      additional_drivers: [
        { first_names: 'Ava', last_names: 'Clarke', dob: '2012-01-01', relationship: 'child' },
      ],
    },
    [['/additional_drivers/0/dob', 'at least 16']],
  );
});

test('a licence is issued after birth and not after the policy starts', () => {
  assertErrors({ proposer: { licence_issued_date: '1988-03-14' } }, [
    ['/proposer/licence_issued_date', 'must be after dob'],
  ]);
  assertErrors({ proposer: { licence_issued_date: '1980-01-01' } }, [
    ['/proposer/licence_issued_date', 'must be after dob'],
  ]);
  assertErrors({ proposer: { licence_issued_date: '2025-06-02' } }, [
    ['/proposer/licence_issued_date', 'must not be after the policy start date'],
  ]);
  assertErrors({ proposer: { licence_issued_date: '2025-06-01' } }, []);
  assertErrors({ proposer: { residency_date: '1988-03-13' } }, [
    ['/proposer/residency_date', 'must not be before dob'],
  ]);
});

test('country codes are real ISO 3166-1 alpha-2 codes, either case', () => {
  assertErrors({ policy: { address: { country: 'XX', postcode: '12345' } } }, [
    ['/policy/address/country', 'ISO 3166-1 alpha-2'],
  ]);
  assertErrors({ policy: { address: { country: 'UK' } } }, [
    ['/policy/address/country', 'the United Kingdom is GB'],
  ]);
  assertErrors({ policy: { address: { country: 'gb' } } }, []);
  assertErrors({ policy: { address: { country: 'IE', postcode: 'D02 X285' } } }, []);
});

test('UK postcodes where the address country uses them: GB (also when absent), JE, GG, IM', () => {
  assertErrors({ policy: { address: { postcode: 'SW1A 1A' } } }, [
    ['/policy/address/postcode', 'is not a UK postcode'],
  ]);
  assertErrors({ policy: { address: { country: undefined, postcode: '75001' } } }, [
    ['/policy/address/postcode', 'is not a UK postcode'],
  ]);
  assertErrors({ policy: { address: { country: 'JE', postcode: 'D02 X285' } } }, [
    ['/policy/address/postcode', 'is not a UK postcode'],
  ]);
  assertErrors({ policy: { address: { country: 'JE', postcode: 'je2 3ab' } } }, []);
  assertErrors({ policy: { address: { postcode: 'ec1a1bb' } } }, []);
  assertErrors(
    { policy: { address: { country: 'FR', postcode: '75001' } }, vehicle: { overnight_postcode: '75008' } },
    [],
  );
  assertErrors({ vehicle: { overnight_postcode: 'nowhere' } }, [
    ['/vehicle/overnight_postcode', 'is not a UK postcode'],
  ]);
  assertErrors({ vehicle: { overnight_postcode: 'm11ae' } }, []);
});

test('money has at most 2 decimal places and rates at most 6, judged on the number as sent', () => {
  assertErrors({ pricing: { upfront_premium: 95.505 } }, [
    ['/pricing/upfront_premium', 'at most 2 decimal places'],
  ]);
  assertErrors({ pricing: { subscription_premium: 0.1 + 0.2 } }, [
    ['/pricing/subscription_premium', 'at most 2 decimal places'],
  ]);
  assertErrors({ pricing: { subscription_premium: 0.3 } }, []);
  assertErrors({ policy: { voluntary_excess: 100.001 }, vehicle: { current_value: 11_500.5 } }, [
    ['/policy/voluntary_excess', '2 decimal'],
  ]);
  assertErrors({ payment: { payment_amount: -10.555 } }, [['/payment/payment_amount', '2 decimal']]);
  assertErrors({ pricing: { mta_fee: 20.001, cancel_fee: 1e-7 } }, [
    ['/pricing/mta_fee', '2 decimal'],
    ['/pricing/cancel_fee', '2 decimal'],
  ]);
  assertErrors({ pricing: { usage_rate: 0.0412345 } }, [['/pricing/usage_rate', 'at most 6 decimal places']]);
  assertErrors({ pricing: { usage_rate: 0.041234, ipt_rate: 12.5, commission_rate: 1e-7 } }, [
    ['/pricing/commission_rate', '6 decimal'],
  ]);
});

test('custom keys are 1 to 64 characters, named in the path (as a JSON pointer)', () => {
  const long = 'k'.repeat(65);
  assertErrors({ custom: { [long]: 1 } }, [[`/custom/${long}`, '1 to 64 characters']]);
  assertErrors({ custom: { [`a/b~c${'x'.repeat(60)}`]: 1, '': 2, 'a/b': 3 } }, [
    [`/custom/a~1b~0c${'x'.repeat(60)}`, '1 to 64'],
    ['/custom/', '1 to 64'],
  ]);
  assertErrors({ custom: { [`${'k'.repeat(62)}😀`]: 1 } }, []); // 63 code points
});

test('mobile_number, the alias, must equal phone_number when both are sent', () => {
  assertErrors({ proposer: { mobile_number: '+447700900999' } }, [
    ['/proposer/mobile_number', 'alias of phone_number'],
  ]);
  assertErrors({ proposer: { mobile_number: '+447700900123' } }, []);
  assertErrors(
    {
      additional_drivers: [
        {
          first_names: 'Ava',
          last_names: 'Clarke',
          dob: '2001-02-03',
          phone_number: '+447700900001',
          mobile_number: '+447700900002',
        },
      ],
    },
    [['/additional_drivers/0/mobile_number', 'alias']],
  );
});

test('required text is not blank', () => {
  assertErrors({ proposer: { first_names: '   ' }, vehicle: { reg: ' ' }, policy: { cover: '\t' } }, [
    ['/policy/cover', 'must not be blank'],
    ['/proposer/first_names', 'must not be blank'],
    ['/vehicle/reg', 'must not be blank'],
  ]);
});

test('cross-field errors and schema errors come in one list without repeats', () => {
  const body = examplePolicyInput({
    policy: { end_date: START - 1, start_date: START },
    proposer: { dob: '1988-02-30', email: 'nope' },
  });
  const errors = policyBodyErrors(body);
  assert.deepEqual(errors.map((e) => e.path).sort(), [
    '/body/policy/end_date',
    '/body/proposer/dob',
    '/body/proposer/email',
  ]);
  // A value Ajv already rejects for its type or shape is not reported again.
  const typed = policyBodyErrors(
    examplePolicyInput({
      policy: { start_date: '2025' as unknown as number },
      proposer: { dob: '14/03/1988' },
      pricing: { upfront_premium: '9.999' as unknown as number },
    }),
  );
  assert.deepEqual(typed.map((e) => e.path).sort(), [
    '/body/policy/start_date',
    '/body/pricing/upfront_premium',
    '/body/proposer/dob',
  ]);
});

test('validatePolicyInput never throws, whatever it is given', () => {
  for (const junk of [
    null,
    undefined,
    'policy',
    42,
    [],
    { policy: 'x' },
    { policy: { address: 7 }, proposer: [], additional_drivers: {}, custom: 'x' },
  ]) {
    assert.ok(Array.isArray(validatePolicyInput(junk)));
  }
  fc.assert(
    fc.property(
      fc.anything({ withNullPrototype: true, withBoxedValues: true, withSparseArray: true }),
      (junk) => {
        validatePolicyInput(junk);
        validatePolicyInput({
          ...POLICY_INPUT_EXAMPLE,
          proposer: junk,
          policy: { ...POLICY_INPUT_EXAMPLE.policy, address: junk },
        });
      },
    ),
    { numRuns: 300 },
  );
});

// ── Properties over the arbitrary ───────────────────────────────────────────────────────────────

test('every policy from the arbitrary passes Ajv and validatePolicyInput', () => {
  fc.assert(
    fc.property(validPolicyInput(), (body) => {
      assert.deepEqual(schemaErrors(body), []);
      assert.deepEqual(validatePolicyInput(body), []);
    }),
    { numRuns: 500 },
  );
});

test('the arbitrary covers the optional shapes it promises', () => {
  const samples = fc.sample(validPolicyInput(), { numRuns: 400, seed: 7 });
  const share = (p: (b: PolicyInput) => boolean) => samples.filter(p).length / samples.length;
  assert.ok(share((b) => b.additional_drivers !== undefined && b.additional_drivers.length > 0) > 0.2);
  assert.ok(share((b) => b.custom !== undefined) > 0.5);
  assert.ok(share((b) => b.payment === undefined) > 0.1);
  assert.ok(share((b) => b.proposer.mobile_number !== undefined) > 0.05);
  assert.ok(share((b) => b.policy.address.country === undefined) > 0.05);
  assert.ok(
    share((b) => !['GB', 'gb', 'JE', 'GG', 'IM', undefined].includes(b.policy.address.country)) > 0.05,
  );
  assert.ok(
    share(
      (b) =>
        b.policy.end_date - b.policy.start_date >= 365 * 86_400 - 1 &&
        b.policy.end_date - b.policy.start_date <= 366 * 86_400,
    ) > 0.6,
  );
});

test('the postcode arbitrary gives only valid UK postcodes', () => {
  fc.assert(
    fc.property(
      ukPostcode(),
      (postcode) => isUkPostcode(postcode) && isUkPostcode(normalisePostcode(postcode)),
    ),
  );
});

test('a money field with a third decimal place is always caught', () => {
  const moneyPaths = [
    ['policy', 'compulsory_excess'],
    ['pricing', 'upfront_premium'],
    ['pricing', 'subscription_premium'],
    ['pricing', 'admin_fee'],
    ['vehicle', 'current_value'],
  ] as const;
  fc.assert(
    fc.property(
      validPolicyInput(),
      fc.constantFrom(...moneyPaths),
      fc.integer({ min: 0, max: 9_999_999 }).filter((n) => n % 10 !== 0),
      (body, [block, field], mills) => {
        const broken = structuredClone(body) as unknown as Record<string, Record<string, unknown>>;
        broken[block] = { ...broken[block], [field]: mills / 1000 };
        const errors = validatePolicyInput(broken);
        return errors.some((e) => e.path === `/body/${block}/${field}` && e.message.includes('2 decimal'));
      },
    ),
    { numRuns: 200 },
  );
});

// ── Normalisation ───────────────────────────────────────────────────────────────────────────────

test('normalisePolicyInput folds the alias, normalises postcodes and fills the defaults', () => {
  const input = examplePolicyInput({
    policy: { address: { country: undefined, postcode: ' ec1a1bb ' }, billing_day_date: undefined },
    vehicle: { overnight_postcode: 'sw1a1aa' },
    proposer: {
      phone_number: undefined,
      mobile_number: '+447700900999',
      email: ' Amelia.Clarke@Example.com ',
    },
    additional_drivers: [
      {
        first_names: 'Ava',
        last_names: 'Clarke',
        dob: '2001-02-03',
        phone_number: '+447700900001',
        mobile_number: '+447700900001',
      },
    ],
    pricing: { usage_unit: undefined },
  });
  const before = structuredClone(input);
  const out = normalisePolicyInput(input);
  assert.deepEqual(input, before, 'the input is not changed');
  assert.equal(out.policy.address.country, 'GB');
  assert.equal(out.policy.address.postcode, 'EC1A 1BB');
  assert.equal(out.vehicle.overnight_postcode, 'SW1A 1AA');
  assert.equal(out.policy.billing_day_date, 1);
  assert.equal(out.pricing.usage_unit, 'mile');
  assert.equal(out.proposer.phone_number, '+447700900999');
  assert.equal('mobile_number' in out.proposer, false);
  assert.equal(out.proposer.email, 'Amelia.Clarke@Example.com');
  const driver = out.additional_drivers?.[0];
  assert.ok(driver !== undefined);
  assert.equal(driver.phone_number, '+447700900001');
  assert.equal('mobile_number' in driver, false);
});

test('normalisePolicyInput leaves non-UK postcodes alone but for spaces, and keeps what is set', () => {
  const out = normalisePolicyInput(
    examplePolicyInput({
      policy: { address: { country: 'ie', postcode: ' D02 X285 ' }, billing_day_date: 15 },
      vehicle: { overnight_postcode: 'd02x285' },
      pricing: { usage_unit: 'km' },
    }),
  );
  assert.equal(out.policy.address.country, 'IE');
  assert.equal(out.policy.address.postcode, 'D02 X285');
  assert.equal(out.vehicle.overnight_postcode, 'd02x285');
  assert.equal(out.policy.billing_day_date, 15);
  assert.equal(out.pricing.usage_unit, 'km');
});

test('normalised policies stay valid, and normalising twice changes nothing', () => {
  fc.assert(
    fc.property(validPolicyInput(), (body) => {
      const once = normalisePolicyInput(body);
      assert.deepEqual(policyBodyErrors(once), []);
      assert.deepEqual(normalisePolicyInput(once), once);
      assert.equal(once.proposer.mobile_number, undefined);
      assert.ok(
        once.policy.billing_day_date !== undefined &&
          once.policy.address.country !== undefined &&
          once.pricing.usage_unit !== undefined,
      );
    }),
    { numRuns: 200 },
  );
});
