import type { QuoteInput, RateBookContent } from './rate-book.ts';

/*
 * The worked example of docs/api.md ("Rating: how a price is made"): a rate book with each kind of
 * factor (bands, keys, a postcode area, a default; fixed, per unit, both) and a quote rated on it. The
 * doc shows these same values, and rate.test.ts asserts the doc's figures against `rate`. Also a
 * realistic starting point for tests and OpenAPI examples. Deeply frozen: clone before changing.
 */

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

export const EXAMPLE_RATE_BOOK: RateBookContent = deepFreeze({
  usage_unit: 'mile',
  base_fixed_premium_pence: 30_000,
  base_rate_per_unit: '0.04',
  factors: [
    {
      name: 'driver-age',
      source: 'driver_age',
      kind: 'bands',
      applies_to: 'both',
      customer_visible: true,
      rows: [
        { from: 17, to: 21, factor: '2.2' },
        { from: 21, to: 25, factor: '1.6' },
        { from: 25, to: 30, factor: '1.2' },
        { from: 30, to: 70, factor: '1' },
        { from: 70, to: null, factor: '1.25' },
      ],
    },
    {
      name: 'area',
      source: 'postcode_district',
      kind: 'keys',
      applies_to: 'fixed',
      default: '1',
      rows: [
        { key: 'EC1A', factor: '1.3' },
        { key: 'M1', factor: '1.2' },
        { key: 'SW', factor: '1.15' },
      ],
    },
    {
      name: 'vehicle-group',
      source: 'vehicle_group',
      kind: 'bands',
      applies_to: 'fixed',
      rows: [
        { from: 1, to: 11, factor: '0.9' },
        { from: 11, to: 21, factor: '1.05' },
        { from: 21, to: 31, factor: '1.2' },
        { from: 31, to: 41, factor: '1.4' },
        { from: 41, to: 51, factor: '1.65' },
      ],
    },
    {
      name: 'no-claims',
      source: 'no_claims_years',
      kind: 'bands',
      applies_to: 'fixed',
      default: '1',
      customer_visible: true,
      rows: [
        { from: 0, to: 1, factor: '1' },
        { from: 1, to: 3, factor: '0.9' },
        { from: 3, to: 5, factor: '0.8' },
        { from: 5, to: null, factor: '0.7' },
      ],
    },
    {
      name: 'use',
      source: 'use',
      kind: 'keys',
      applies_to: 'both',
      rows: [
        { key: 'sdp', factor: '1' },
        { key: 'sdp_commuting', factor: '1.1' },
        { key: 'business', factor: '1.25' },
      ],
    },
    {
      name: 'convictions',
      source: 'convictions_in_5_years',
      kind: 'keys',
      applies_to: 'per_unit',
      default: '1.5',
      rows: [
        { key: '0', factor: '1' },
        { key: '1', factor: '1.125' },
      ],
    },
    {
      name: 'annual-distance',
      source: 'estimated_annual_distance',
      kind: 'bands',
      applies_to: 'per_unit',
      rows: [
        { from: 0, to: 3000, factor: '1.1' },
        { from: 3000, to: 8000, factor: '1' },
        { from: 8000, to: null, factor: '0.95' },
      ],
    },
    {
      name: 'voluntary-excess',
      source: 'voluntary_excess',
      kind: 'keys',
      applies_to: 'fixed',
      default: '1',
      customer_visible: true,
      rows: [
        { key: '0', factor: '1' },
        { key: '100', factor: '0.97' },
        { key: '250', factor: '0.93' },
      ],
    },
  ],
  min_fixed_premium_pence: 15_000,
  max_fixed_premium_pence: 250_000,
  fees: {
    admin_fee_pence: 2500,
    adjustment_fee_pence: 2000,
    cancellation_fee_pence: 5000,
    deposit_fee_pence: 0,
  },
  ipt_rate: '12',
  commission_rate: '15',
  installment_plans: [{ kind: 'single' }, { kind: 'monthly', installments: 12, loading_rate: '0.06' }],
  underwriting_rules: [
    {
      outcome: 'decline',
      reason: 'Every driver must be at least 17.',
      when: { field: 'youngest_driver_age', op: 'lt', value: 17 },
    },
    {
      outcome: 'decline',
      reason: 'We do not insure vehicles above insurance group 45.',
      when: { field: 'vehicle_group', op: 'gt', value: 45 },
    },
    {
      outcome: 'decline',
      reason: 'A driver was banned from driving in the last three years.',
      when: { field: 'bans_in_3_years', op: 'gt', value: 0 },
    },
    {
      outcome: 'refer',
      reason: 'The estimated distance is above the product’s annual cap of 20,000 miles.',
      when: { field: 'estimated_annual_distance', op: 'gt', value: 20_000 },
    },
    {
      outcome: 'refer',
      reason: 'Imported or modified vehicles are reviewed by an underwriter.',
      when: {
        any: [
          { field: 'vehicle.is_import', op: 'eq', value: true },
          { field: 'modification_count', op: 'gt', value: 0 },
        ],
      },
    },
  ],
});

/** The example's quote: Amelia Clarke's Golf (the OpenAPI policy example without `pricing`), monthly. */
export const EXAMPLE_QUOTE_INPUT: QuoteInput = deepFreeze({
  policy: {
    compulsory_excess: 250,
    voluntary_excess: 100,
    address: {
      line_1: 'Flat 3',
      line_2: '12 Station Road',
      city: 'London',
      country: 'GB',
      postcode: 'EC1A 1BB',
    },
    usage: 'sdp_commuting',
    cover: 'comprehensive',
    start_date: 1_748_732_400, // 2025-06-01T00:00:00+01:00
    end_date: 1_780_268_399, // 2026-05-31T23:59:59+01:00
    product_reference: 'pay-by-mile-car',
    policy_year: 1,
  },
  proposer: {
    first_names: 'Amelia Rose',
    last_names: 'Clarke',
    email: 'amelia.clarke@example.com',
    ncd: 4,
    dob: '1988-03-14',
    licence_issued_date: '2006-07-02',
    convictions: [{ code: 'SP30', date: '2022-09-18', points: 3, ban: 0 }],
    claims: [{ code: 'windscreen', date: '2023-01-09', at_fault: false, ncd_lost: false }],
  },
  vehicle: {
    reg: 'AB12 CDE',
    make: 'Volkswagen',
    model: 'Golf 1.5 TSI Life',
    group_rating_50: 19,
    estimated_yearly_mileage: 6000,
    manufacture_date: '2017-09-01',
    current_value: 11_500,
    is_import: false,
    overnight_postcode: 'EC1A 1BB',
    modifications: [],
  },
  additional_drivers: [
    {
      first_names: 'Daniel',
      last_names: 'Clarke',
      email: 'daniel.clarke@example.com',
      dob: '2004-11-02',
      relationship: 'son',
      licence_issued_date: '2022-05-20',
      convictions: [],
      claims: [],
    },
  ],
  installment_plan: 'monthly',
});
