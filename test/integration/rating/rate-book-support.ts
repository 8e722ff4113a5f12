import assert from 'node:assert/strict';
import type { RateBookContent } from '../../../src/modules/rating/rules/index.ts';
import { EXAMPLE_RATE_BOOK } from '../../../src/modules/rating/rules/example-rate-book.ts';
import type { TestApp } from '../../support/app.ts';

export type { RateBookContent };

export interface Problem {
  code: string;
  errors?: Array<{ path: string; message: string }>;
}

export interface RateBookVersionSummary {
  version_number: number;
  status: 'draft' | 'approved' | 'in_force' | 'superseded';
  effective_from: string | null;
  author: string;
  approver: string | null;
  approved_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface RateBookVersion extends RateBookVersionSummary {
  rate_book_reference: string;
  product_reference: string;
  contributors: string[];
  content: RateBookContent;
}

export interface RateBook {
  rate_book_reference: string;
  product_reference: string;
  name: string;
  version_in_force: number | null;
  versions: RateBookVersionSummary[];
  created_at: string;
}

type Headers = Record<string, string>;

/** Rate books and products made through the real routes. */
export const make = {
  /** A pay-per-mile product of the tenant. */
  async product(t: TestApp, headers: Headers, reference: string): Promise<void> {
    const created = await t.app.inject({
      method: 'POST',
      url: '/products',
      headers,
      payload: { product_reference: reference, name: `Product ${reference}`, usage_unit: 'mile' },
    });
    assert.equal(created.statusCode, 201, created.body);
  },

  /** A product and its rate book, without versions. */
  async rateBook(
    t: TestApp,
    headers: Headers,
    productReference: string,
    reference: string,
  ): Promise<RateBook> {
    await make.product(t, headers, productReference);
    const created = await t.app.inject({
      method: 'POST',
      url: '/rate-books',
      headers,
      payload: {
        rate_book_reference: reference,
        product_reference: productReference,
        name: `Rates ${reference}`,
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    return created.json<RateBook>();
  },

  /** A draft written by `author` and approved by `approver` (two staff sessions' headers). */
  async approvedVersion(
    t: TestApp,
    reference: string,
    author: Headers,
    approver: Headers,
    content: RateBookContent,
    effectiveFrom?: string,
  ): Promise<RateBookVersion> {
    const drafted = await t.app.inject({
      method: 'POST',
      url: `/rate-books/${reference}/versions`,
      headers: author,
      payload: { content, ...(effectiveFrom === undefined ? {} : { effective_from: effectiveFrom }) },
    });
    assert.equal(drafted.statusCode, 201, drafted.body);
    const { version_number: number } = drafted.json<RateBookVersion>();
    const approved = await t.app.inject({
      method: 'POST',
      url: `/rate-books/${reference}/versions/${number}/approve`,
      headers: approver,
    });
    assert.equal(approved.statusCode, 200, approved.body);
    return approved.json<RateBookVersion>();
  },
};

/** The worked example's rate book: each kind of factor, limits, fees, plans and underwriting rules. */
export const exampleRateBookContent = (): RateBookContent =>
  structuredClone<RateBookContent>(EXAMPLE_RATE_BOOK);

/** `content` with three bad cells: a negative factor, a rate sent as a number, a minimum above the maximum. */
export function badCells(content: RateBookContent): unknown {
  const copy = structuredClone(content) as unknown as {
    factors: Array<{ rows: Array<{ factor: unknown }> }>;
    base_rate_per_unit: unknown;
    min_fixed_premium_pence: number;
    max_fixed_premium_pence: number;
  };
  copy.factors[0]!.rows[1]!.factor = '-1';
  copy.base_rate_per_unit = 0.04;
  copy.min_fixed_premium_pence = copy.max_fixed_premium_pence + 1;
  return copy;
}

/** Where `badCells` breaks the content, as the 422 names them. */
export const BAD_CELL_PATHS = [
  '/body/content/factors/0/rows/1/factor',
  '/body/content/base_rate_per_unit',
  '/body/content/min_fixed_premium_pence',
];

/** The example's first factor (driver age bands) as CSV, with its first band's factor doubled. */
export const withFirstFactorDoubled = (csv: string): string => csv.replace(/^(17,21,)2\.2\r\n/m, '$14.4\r\n');

/** The CSV with a factor that is not a number and a band that ends before it starts. */
export const badCsv = (csv: string): string =>
  csv.replace(/^17,21,2\.2\r\n/m, '17,21,abc\r\n').replace(/^21,25,/m, '21,19,');
