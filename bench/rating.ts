/**
 * The rating engine: quotes priced (and underwritten) per second on one core.
 *
 *   npm run bench -- rating [seconds per loop, default 3]
 *
 * Generates 5,000 varied quotes (ages, licences, groups, values, postcodes from a 2,000-district table,
 * no-claims years, mileage, plans) and times, on the worked example's rate book with that district
 * table, `rate` (exact decimals, the full breakdown), `rate` + `decide`, and an impact test's work on
 * one policy (its terms as JSON text parsed, underwritten and re-rated: `policyImpact`), against the
 * baseline in the same run: the same lookups and arithmetic in binary floating point with no
 * breakdown, the shortcut the engine refuses. Passes alternate for about `seconds` each; the figures are the best
 * pass, with the median beside it. What it tells: how long re-rating a book takes (impact testing).
 */
import {
  decide,
  policyImpact,
  EXAMPLE_QUOTE_INPUT,
  EXAMPLE_RATE_BOOK,
  rate,
  type QuoteInput,
  type RateBookContent,
  type RatingFactor,
  type StoredTerms,
} from '../src/modules/rating/rules/index.ts';
import { seededRandom } from './support.ts';

const QUOTES = 5000;
const secondsPerLoop = Number(process.argv[2] ?? 3);
const ON = '2025-06-01';
const random = seededRandom(20261128);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));

const AREAS = [
  'AB',
  'B',
  'BS',
  'CF',
  'E',
  'EC',
  'G',
  'L',
  'LS',
  'M',
  'N',
  'NE',
  'NW',
  'S',
  'SE',
  'SW',
  'W',
  'WC',
];
const districts = Array.from(
  { length: 2000 },
  (_, i) => `${AREAS[i % AREAS.length]!}${String(1 + Math.floor(i / AREAS.length))}`,
);
const book: RateBookContent = {
  ...EXAMPLE_RATE_BOOK,
  factors: EXAMPLE_RATE_BOOK.factors.map((factor): RatingFactor =>
    factor.kind === 'keys' && factor.name === 'area'
      ? { ...factor, rows: districts.map((key, i) => ({ key, factor: String(0.8 + (i % 50) / 100) })) }
      : factor,
  ),
};

const date = (year: number) =>
  `${String(year)}-${String(between(1, 12)).padStart(2, '0')}-${String(between(1, 28)).padStart(2, '0')}`;
const quotes: QuoteInput[] = Array.from({ length: QUOTES }, () => {
  const born = between(1940, 2007);
  return {
    ...EXAMPLE_QUOTE_INPUT,
    policy: {
      ...EXAMPLE_QUOTE_INPUT.policy,
      voluntary_excess: pick([0, 100, 250, 500]),
      usage: pick(['sdp', 'sdp_commuting', 'business']),
    },
    proposer: {
      ...EXAMPLE_QUOTE_INPUT.proposer,
      dob: date(born),
      licence_issued_date: date(born + 18),
      ncd: between(0, 9),
    },
    vehicle: {
      ...EXAMPLE_QUOTE_INPUT.vehicle,
      group_rating_50: between(1, 50),
      current_value: between(1000, 60_000),
      manufacture_date: date(between(2005, 2024)),
      overnight_postcode: `${pick(districts)} 1AA`,
      estimated_yearly_mileage: between(1000, 25_000),
    },
    additional_drivers: random() < 0.4 ? (EXAMPLE_QUOTE_INPUT.additional_drivers ?? []) : [],
    installment_plan: pick(['single', 'monthly'] as const),
  };
});

/** Each quote as an impact test reads a policy's terms: JSON text with the pricing it holds. */
const termsText = new Map(
  quotes.map((q) => [
    q,
    JSON.stringify({
      ...q,
      pricing: { base_premium: 512.34, upfront_premium: 0, subscription_premium: 0, usage_rate: 0.0512 },
    }),
  ]),
);

interface FloatFactor {
  readonly factor: RatingFactor;
  readonly keys: ReadonlyMap<string, number>;
  readonly bands: readonly { from: number; to: number; value: number }[];
  readonly fallback: number;
}
/** The baseline's tables, compiled once as the engine's are: keys in maps, factors as floats. */
const floatFactors: FloatFactor[] = book.factors.map((factor) => ({
  factor,
  keys: new Map(factor.kind === 'keys' ? factor.rows.map((r) => [r.key, Number(r.factor)]) : []),
  bands:
    factor.kind === 'bands'
      ? factor.rows.map((r) => ({ from: r.from ?? -Infinity, to: r.to ?? Infinity, value: Number(r.factor) }))
      : [],
  fallback: Number(factor.default ?? 1),
}));

/** The baseline: the same lookups and arithmetic in binary floating point, no breakdown, no rules. */
function floatRate(content: RateBookContent, input: QuoteInput): number {
  let fixed = content.base_fixed_premium_pence;
  let unit = 0.04;
  const postcode = (input.vehicle.overnight_postcode ?? '').split(' ')[0] ?? '';
  const ages = [input.proposer, ...(input.additional_drivers ?? [])].map(
    (d) => 2025 - Number(d.dob.slice(0, 4)),
  );
  const values: Record<string, number | string> = {
    postcode_district: postcode,
    vehicle_group: input.vehicle.group_rating_50 ?? 0,
    no_claims_years: input.proposer.ncd ?? 0,
    use: input.policy.usage,
    convictions_in_5_years: input.proposer.convictions?.length ?? 0,
    estimated_annual_distance: input.vehicle.estimated_yearly_mileage ?? 0,
    voluntary_excess: input.policy.voluntary_excess ?? 0,
  };
  for (const { factor, keys, bands, fallback } of floatFactors) {
    let value: number;
    if (factor.kind === 'bands') {
      const v = factor.source === 'driver_age' ? Math.min(...ages) : Number(values[factor.source]);
      value = bands.find((band) => band.from <= v && v < band.to)?.value ?? fallback;
    } else {
      value = keys.get(String(values[factor.source])) ?? fallback;
    }
    if (factor.applies_to !== 'per_unit') fixed *= value;
    if (factor.applies_to !== 'fixed') unit *= value;
  }
  fixed = Math.min(Math.max(fixed, content.min_fixed_premium_pence), content.max_fixed_premium_pence) * 1.12;
  return Math.round(fixed) + Math.round(unit * 1.12 * 10_000);
}

const loops: [string, (quote: QuoteInput) => number][] = [
  ['rate', (q) => (rate(book, q, ON).ok ? 1 : 0)],
  [
    'rate + decide',
    (q) => (rate(book, q, ON).ok ? 1 : 0) + (decide(book, q, ON).decision === 'accept' ? 1 : 0),
  ],
  [
    'impact test: parse + decide + rate',
    (q) => (policyImpact(book, JSON.parse(termsText.get(q) ?? '') as StoredTerms).kind === 'rated' ? 1 : 0),
  ],
  ['baseline (floats, no breakdown)', (q) => (floatRate(book, q) > 0 ? 1 : 0)],
];

function pass(measure: (quote: QuoteInput) => number): number {
  let checksum = 0;
  const started = process.hrtime.bigint();
  for (const quote of quotes) checksum += measure(quote);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (checksum === 0) throw new Error('nothing rated');
  return quotes.length / seconds;
}

for (const quote of quotes.slice(0, 500)) for (const [, measure] of loops) measure(quote); // warm the JIT
const rates = loops.map((): number[] => []);
let spent = 0;
while (spent < loops.length * secondsPerLoop) {
  loops.forEach(([, measure], k) => {
    const perSecond = pass(measure);
    rates[k]?.push(perSecond);
    spent += quotes.length / perSecond;
  });
}
const figures = rates.map((passes) => {
  const sorted = passes.toSorted((a, b) => a - b);
  return { best: sorted.at(-1) ?? 0, median: sorted[sorted.length >> 1] ?? 0 };
});
const baseline = figures[3]!.best;
loops.forEach(([name], k) => {
  const { best, median } = figures[k]!;
  process.stdout.write(
    `${name.padEnd(32)} ${Math.round(best).toLocaleString('en-GB').padStart(9)} quotes/s (median ${Math.round(median).toLocaleString('en-GB')}), ${(1e6 / best).toFixed(1)} µs each, ${(best / baseline).toFixed(2)}× the baseline\n`,
  );
});
process.stdout.write(
  `1,000,000 policies re-rated by rate alone: ${(1e6 / figures[0]!.best).toFixed(0)} s of one core; by an impact test's threads: ${(1e6 / figures[2]!.best).toFixed(0)} s\n`,
);
