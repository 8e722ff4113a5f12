import { Type, type Static } from 'typebox';
import { LOGO_MAX_BYTES } from './template-logo.ts';

const REFERENCE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$';
const DATE_PATTERN = '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$';
/** Base64 of LOGO_MAX_BYTES, with its padding. */
const LOGO_BASE64_MAX = Math.ceil(LOGO_MAX_BYTES / 3) * 4;

const MediaTypeSchema = Type.Union([Type.Literal('image/png'), Type.Literal('image/svg+xml')], {
  description: 'The logo’s format: a PNG image or an SVG drawing.',
});

export const DocumentLogoSchema = Type.Object(
  {
    media_type: MediaTypeSchema,
    sha256: Type.String({ description: 'SHA-256 of the logo’s bytes, lowercase hex.' }),
    size_bytes: Type.Integer({ description: 'The logo file’s size in bytes.' }),
    width_px: Type.Integer({ description: 'Width: pixels of a PNG, user units of an SVG’s viewBox.' }),
    height_px: Type.Integer({ description: 'Height, in the same units as `width_px`.' }),
    url: Type.String({ description: 'Where to read the logo (client credentials, or a staff session).' }),
  },
  { additionalProperties: false },
);

export const DocumentTemplateSchema = Type.Object(
  {
    version: Type.Integer({
      description:
        'The version’s number, unique in the company and environment; each issued document records the version it was made with.',
    }),
    product_reference: Type.Union([Type.String(), Type.Null()], {
      description: 'The product this version is for; null for the company-wide template.',
    }),
    effective_from: Type.String({
      format: 'date',
      description: 'The Europe/London day from which documents are made with this version.',
    }),
    company_name: Type.String({ description: 'The name documents show the company by.' }),
    insurer_name: Type.String({
      description: 'The authorised insurer named on certificates (the certification of cover).',
    }),
    colour_hex: Type.String({ description: 'The documents’ accent colour, `#rrggbb`.' }),
    logo: Type.Union([DocumentLogoSchema, Type.Null()]),
    in_effect: Type.Boolean({
      description:
        'Whether documents made today for its scope (its product, or the company-wide scope) use this version.',
    }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'DocumentTemplate', additionalProperties: false },
);
export type DocumentTemplate = Static<typeof DocumentTemplateSchema>;

export const DocumentTemplateListSchema = Type.Object(
  {
    templates: Type.Array(Type.Ref('DocumentTemplate'), { description: 'Newest version first.' }),
    defaults: Type.Object(
      {
        company_name: Type.String(),
        insurer_name: Type.String(),
        colour_hex: Type.String(),
      },
      {
        additionalProperties: false,
        description: 'What documents show while no version is in effect: from the company’s own name.',
      },
    ),
  },
  { additionalProperties: false },
);
export type DocumentTemplateList = Static<typeof DocumentTemplateListSchema>;

const name = (description: string) => Type.String({ minLength: 1, maxLength: 120, description });

export const CreateDocumentTemplateSchema = Type.Object(
  {
    product_reference: Type.Optional(
      Type.Union([Type.String({ pattern: REFERENCE_PATTERN }), Type.Null()], {
        description:
          'A registered product’s reference, for that product’s documents alone; absent or null for the company-wide template.',
      }),
    ),
    effective_from: Type.Optional(
      Type.String({
        pattern: DATE_PATTERN,
        description:
          'The Europe/London day from which it applies (`YYYY-MM-DD`; default today); never before the latest version of the same scope.',
      }),
    ),
    company_name: name('The name documents show the company by.'),
    insurer_name: name('The authorised insurer named on certificates.'),
    colour_hex: Type.String({
      pattern: '^#[0-9A-Fa-f]{6}$',
      description: 'The accent colour as `#rrggbb`.',
    }),
    logo: Type.Optional(
      Type.Union(
        [
          Type.Object(
            {
              media_type: MediaTypeSchema,
              data_base64: Type.String({
                minLength: 1,
                maxLength: LOGO_BASE64_MAX,
                description: `The file, base64 (at most ${String(LOGO_MAX_BYTES)} bytes decoded).`,
              }),
            },
            { additionalProperties: false },
          ),
          Type.Null(),
        ],
        {
          description:
            'The logo: a PNG (checked by its signature and decoded in full; at most 2,600 pixels a side) or an SVG (refused if it holds a script, an event handler, a `foreignObject`, a reference outside the file or a DOCTYPE); absent or null for none.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type CreateDocumentTemplateInput = Static<typeof CreateDocumentTemplateSchema>;

export const DocumentTemplateParamsSchema = Type.Object(
  { version: Type.String({ pattern: '^[1-9][0-9]{0,8}$', description: 'A version number.' }) },
  { additionalProperties: false },
);
