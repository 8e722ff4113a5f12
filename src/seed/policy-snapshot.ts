import { sql, type RawBuilder } from 'kysely';
import { POLICY_INPUT_EXAMPLE } from '../modules/policies/index.ts';

/** The snapshot naming `productReference`, when there is one. */
export function productSnapshot(
  snapshot: RawBuilder<unknown>,
  productReference: string | null,
): RawBuilder<unknown> {
  return productReference === null
    ? snapshot
    : sql`jsonb_set(${snapshot}, '{policy,product_reference}', to_jsonb(${productReference}::text))`;
}

/**
 * The snapshot as JSON text, the example's with each policy's own values (columns of `terms`) put
 * in: text concatenation, then one parse, costs half of merging jsonb objects.
 */
export function snapshotSql(): RawBuilder<string> {
  const holes: RawBuilder<unknown>[] = [];
  const hole = (expression: string): string => `\u0000${String(holes.push(sql.raw(expression)) - 1)}\u0000`;
  const text = (column: string) => hole(`to_json(t.${column})::text`);
  const epoch = (column: string) => hole(`extract(epoch from t.${column})::bigint::text`);
  const { additional_drivers: _drivers, ...example } = structuredClone(POLICY_INPUT_EXAMPLE);
  // NOTE: a seeded policy names no product: the service refuses a product the company has not registered.
  delete example.policy.product_reference;
  const doc = {
    ...example,
    policy: {
      ...example.policy,
      address: { line_1: text('line_1'), city: text('town'), country: 'GB', postcode: text('postcode') },
      start_date: epoch('start_at'),
      end_date: epoch('end_at'),
      inception_date: epoch('start_at'),
      billing_day_date: hole('extract(day from t.start_on)::int::text'),
      auto_renew: hole('t.auto_renew::text'),
      policy_reference: text('policy_reference'),
      created_at: epoch('created_at'),
    },
    proposer: {
      ...example.proposer,
      title: text('title'),
      first_names: text('first_names'),
      last_names: text('last_names'),
      email: text('email'),
    },
    vehicle: { ...example.vehicle, reg: text('reg'), overnight_postcode: text('postcode') },
    pricing: {
      ...example.pricing,
      quote_reference: hole('to_json(gen_random_uuid())::text'),
      quote_version_reference: hole('to_json(gen_random_uuid())::text'),
    },
  };
  // Each hole is a JSON string "\u0000<n>\u0000", quotes included, which its expression replaces.
  const parts = JSON.stringify(doc).split(/"\\u0000(\d+)\\u0000"/);
  return sql.join(
    parts.map((part, k) => (k % 2 === 0 ? sql`${part}::text` : (holes[Number(part)] ?? sql.raw('null')))),
    sql` || `,
  );
}
