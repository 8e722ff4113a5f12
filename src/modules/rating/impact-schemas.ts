import { Type } from 'typebox';
import { IMPACT_BANDS } from './rules/index.ts';

/*
 * The impact report's shape: the console charts it, so fields are added, never renamed or removed.
 * Money is pounds (two places); rates per unit are pounds (four places, six for a policy's stored rate).
 */

const pounds = (description: string) => Type.Number({ description: `Pounds. ${description}` });
const nullablePercent = (description: string) =>
  Type.Union([Type.Number(), Type.Null()], {
    description: `${description} Percent, two places, half to even; null when the current premium is 0.`,
  });
const meanRate = (description: string) =>
  Type.Union([Type.Number(), Type.Null()], {
    description: `${description} Pounds per unit, four places, half to even; null with no policies.`,
  });

const Amounts = {
  policies: Type.Integer({ minimum: 0 }),
  current_premium: pounds('The fixed premiums of the terms in force (incl. IPT), summed.'),
  new_premium: pounds('The same policies’ fixed premiums on the version (incl. IPT), summed.'),
  change: pounds('new_premium − current_premium.'),
  change_percent: nullablePercent('change ÷ current_premium.'),
  current_usage_rate_mean: meanRate('The mean of the policies’ current rates per unit (incl. IPT).'),
  new_usage_rate_mean: meanRate('The mean of their rates per unit on the version (incl. IPT).'),
};

export const ImpactProgressSchema = Type.Object({
  in_force: Type.Integer({ description: 'Policies in force when the test began.' }),
  done: Type.Integer(),
  rated: Type.Integer(),
  declined: Type.Integer(),
  unrated: Type.Integer(),
});

export const ImpactRequestSchema = Type.Object(
  {
    company_reference: Type.String({ minLength: 1, maxLength: 100 }),
    environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')]),
  },
  { additionalProperties: false },
);

export const ImpactReportSchema = Type.Object(
  {
    rate_book_reference: Type.String(),
    version_number: Type.Integer(),
    version_status: Type.Union([Type.Literal('draft'), Type.Literal('approved')]),
    product_reference: Type.String(),
    as_at: Type.String({
      format: 'date-time',
      description: 'The instant the policies in force were taken at.',
    }),
    threads: Type.Integer({ description: 'Threads the policies were re-rated on.' }),
    policies: Type.Integer({ description: 'Policies in force read: rated + declined + unrated.' }),
    rated: Type.Integer(),
    referred: Type.Integer({ description: 'Of the rated, those an underwriting rule would refer.' }),
    bands: Type.Array(
      Type.Object({
        band: Type.Union(
          IMPACT_BANDS.map((b) => Type.Literal(b)),
          {
            description: 'By the change of the fixed premium; exactly ±5 % or ±10 % is in the band nearer 0.',
          },
        ),
        ...Amounts,
      }),
      { description: 'Always the seven bands, in order, empty ones with 0 policies.' },
    ),
    total: Type.Object(Amounts, { description: 'Every rated policy.' }),
    declined: Type.Object({
      policies: Type.Integer(),
      reasons: Type.Array(Type.Object({ reason: Type.String(), policies: Type.Integer() }), {
        description: 'The version’s decline rules that matched, most policies first.',
      }),
    }),
    unrated: Type.Object({
      policies: Type.Integer(),
      reasons: Type.Array(
        Type.Object({ path: Type.String(), message: Type.String(), policies: Type.Integer() }),
        { description: 'What the terms lack for the version, by path (one message as an example).' },
      ),
    }),
    movers: Type.Array(
      Type.Object({
        policy_reference: Type.String(),
        current_premium: pounds('The fixed premium of the term in force (incl. IPT).'),
        new_premium: pounds('On the version (incl. IPT).'),
        change: pounds('new_premium − current_premium.'),
        change_percent: nullablePercent('change ÷ current_premium.'),
        current_usage_rate: Type.Number({ description: 'Pounds per unit (incl. IPT).' }),
        new_usage_rate: Type.Number({ description: 'Pounds per unit on the version (incl. IPT).' }),
      }),
      {
        description: 'The 20 largest changes of the fixed premium in pounds, either way; ties by reference.',
      },
    ),
  },
  { $id: 'RateBookImpact' },
);
