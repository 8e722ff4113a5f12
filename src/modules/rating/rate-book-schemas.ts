import { Type, type Static } from 'typebox';

const REFERENCE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$';

/** The format name an exported version carries, and an import checks. */
export const EXPORT_FORMAT = 'milepost.rate-book-version';
export const EXPORT_FORMAT_VERSION = 1;

const isoTime = (description: string) => Type.String({ format: 'date-time', description });

const ContentSchema = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'The version’s tables, as `docs/api.md` ("Rate books") describes them: base premium and rate per unit, rating factors (bands or keys, each cell a decimal factor), minimum and maximum fixed premium, fees, IPT and commission rates, installment plans and underwriting rules. Every bad cell answers 422 naming its path, e.g. `/body/content/factors/2/rows/5/factor`.',
});

const EffectiveFromSchema = Type.Union([isoTime(''), Type.Null()], {
  description:
    'When the version comes into force once approved (ISO 8601). Absent or null: at its approval. It may not be in the past, nor at or before an approved version’s.',
});

export const RateBookParamsSchema = Type.Object({
  rate_book_reference: Type.String({ pattern: REFERENCE_PATTERN }),
});

export const VersionParamsSchema = Type.Object({
  rate_book_reference: Type.String({ pattern: REFERENCE_PATTERN }),
  version_number: Type.String({ pattern: '^[1-9][0-9]{0,8}$', description: 'The version’s number, from 1.' }),
});

export const FactorParamsSchema = Type.Object({
  rate_book_reference: Type.String({ pattern: REFERENCE_PATTERN }),
  version_number: Type.String({ pattern: '^[1-9][0-9]{0,8}$' }),
  factor_name: Type.String({ minLength: 1, maxLength: 100, description: 'The rating factor’s `name`.' }),
});

export const CreateRateBookSchema = Type.Object(
  {
    rate_book_reference: Type.String({
      pattern: REFERENCE_PATTERN,
      description: 'Your reference for the rate book: letters, digits, `.`, `_`, `-`; up to 100.',
      examples: ['ppm-motor-rates'],
    }),
    product_reference: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'The product it rates (one rate book per product).',
      examples: ['ppm-motor'],
    }),
    name: Type.String({ minLength: 1, maxLength: 200, examples: ['Pay-per-mile motor rates'] }),
  },
  { additionalProperties: false },
);
export type CreateRateBookInput = Static<typeof CreateRateBookSchema>;

const statusSchema = (description?: string) =>
  Type.Union(
    [Type.Literal('draft'), Type.Literal('approved'), Type.Literal('in_force'), Type.Literal('superseded')],
    description === undefined ? {} : { description },
  );

const versionSummaryProperties = {
  version_number: Type.Integer({ minimum: 1 }),
  status: statusSchema(
    '`draft` (may change; not used), `approved` (never changes; in force from `effective_from`, still to come), `in_force` (the approved version with the latest `effective_from` that has come), `superseded` (approved, and a later one is in force). Only draft and approved are stored; the rest are read from the dates at the time of the answer.',
  ),
  effective_from: Type.Union([isoTime('When it comes or came into force.'), Type.Null()]),
  author: Type.String({ description: '`staff:<email>`, or `integration` for client credentials.' }),
  approver: Type.Union([Type.String({ description: '`staff:<email>`.' }), Type.Null()]),
  approved_at: Type.Union([isoTime(''), Type.Null()]),
  created_at: isoTime(''),
  updated_at: isoTime(''),
};

export const RateBookVersionSummarySchema = Type.Object(versionSummaryProperties, {
  $id: 'RateBookVersionSummary',
});
export type RateBookVersionSummary = Static<typeof RateBookVersionSummarySchema>;

export const RateBookVersionSchema = Type.Object(
  {
    rate_book_reference: Type.String(),
    product_reference: Type.String(),
    ...versionSummaryProperties,
    contributors: Type.Array(Type.String(), {
      description: 'The staff who wrote the draft (`staff:<email>`): none of them may approve it.',
    }),
    content: ContentSchema,
  },
  { $id: 'RateBookVersion' },
);
export type RateBookVersionView = Static<typeof RateBookVersionSchema>;

export const RateBookSchema = Type.Object(
  {
    rate_book_reference: Type.String(),
    product_reference: Type.String(),
    name: Type.String(),
    version_in_force: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The number of the version in force now; null before the first takes effect.',
    }),
    versions: Type.Array(Type.Ref('RateBookVersionSummary'), { description: 'Oldest first.' }),
    created_at: isoTime(''),
  },
  { $id: 'RateBook' },
);
export type RateBookView = Static<typeof RateBookSchema>;

export const RateBookListSchema = Type.Object({ rate_books: Type.Array(Type.Ref('RateBook')) });

export const CreateVersionSchema = Type.Object(
  { effective_from: Type.Optional(EffectiveFromSchema), content: ContentSchema },
  { additionalProperties: false },
);
export type CreateVersionInput = Static<typeof CreateVersionSchema>;

export const RateBookExportSchema = Type.Object(
  {
    format: Type.Literal(EXPORT_FORMAT),
    format_version: Type.Literal(EXPORT_FORMAT_VERSION),
    rate_book_reference: Type.String(),
    product_reference: Type.String(),
    version_number: Type.Integer(),
    status: statusSchema(),
    effective_from: Type.Union([isoTime(''), Type.Null()]),
    exported_at: isoTime(''),
    content: ContentSchema,
  },
  {
    $id: 'RateBookExport',
    description:
      'A version as a file: what `POST …/versions/import` takes back, in this rate book or another (from sandbox to production).',
  },
);
export type RateBookExport = Static<typeof RateBookExportSchema>;

export const ImportVersionSchema = Type.Object(
  {
    format: Type.Literal(EXPORT_FORMAT),
    format_version: Type.Literal(EXPORT_FORMAT_VERSION),
    rate_book_reference: Type.Optional(Type.String({ description: 'Where it was exported from (ignored).' })),
    product_reference: Type.Optional(
      Type.String({ description: 'Ignored: the rate book’s product rates it.' }),
    ),
    version_number: Type.Optional(Type.Integer({ description: 'Ignored: the draft takes the next number.' })),
    status: Type.Optional(Type.String({ description: 'Ignored: an import is always a draft.' })),
    exported_at: Type.Optional(Type.String()),
    effective_from: Type.Optional(EffectiveFromSchema),
    content: ContentSchema,
  },
  { additionalProperties: false },
);
export type ImportVersionInput = Static<typeof ImportVersionSchema>;

export const FactorCsvSchema = Type.String({
  description:
    'One rating factor’s table, RFC 4180 with a header row: for bands `from,to,factor` (`to` empty for the last, open band), for keys `key,factor`.',
});
