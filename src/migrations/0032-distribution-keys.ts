import { sql, type Kysely } from 'kysely';

/**
 * Keys a sharded database can keep (src/distribution.ts, docs/operations.md "Sharding on Citus").
 * Citus shards the policy's tables by `policy_id` (`policies` by `id`) and can only enforce a unique
 * key, or a foreign key between two of them, on one shard: each must include the distribution column.
 * So the primary keys of the policy's tables become (id, policy_id), a key that names the same rows
 * (ids are unique on their own) and still serves lookups by id (its first column); the foreign keys
 * between them carry the policy; and a credit's (source, reference) is unique within its policy, as
 * every reference it holds (a voided journey, a statement, a refund, a goodwill note) is the policy's.
 *
 * Each primary key is rebuilt: on a large database this takes about as long as building the index
 * (journeys: seconds a million rows), holding an exclusive lock on the table meanwhile.
 */
const REKEYED = [
  'policy_versions',
  'journeys',
  'journey_voids',
  'journey_rule_credits',
  'statements',
  'policy_credits',
  'odometer_readings',
] as const;

/** Foreign keys within the policy's tables, re-made with the policy: [table, name, columns, target]. */
const WITHIN_POLICY = [
  ['journey_voids', 'journey_voids_journey_id_fkey', 'journey_id', 'journeys'],
  ['journey_rule_credits', 'journey_rule_credits_journey_id_fkey', 'journey_id', 'journeys'],
  [
    'journey_voids',
    'journey_voids_billed_statement_version_id_fkey',
    'billed_statement_version_id',
    'policy_versions',
  ],
  [
    'journey_voids',
    'journey_voids_credited_statement_version_id_fkey',
    'credited_statement_version_id',
    'policy_versions',
  ],
  ['statements', 'statements_id_fkey', 'id', 'policy_versions'],
  ['payments', 'payments_policy_version_id_fkey', 'policy_version_id', 'policy_versions'],
  ['statement_odometers', 'statement_odometers_statement_id_fkey', 'statement_id', 'statements'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [table, name] of WITHIN_POLICY)
    await sql`alter table ${sql.table(table)} drop constraint ${sql.id(name)}`.execute(db);

  for (const table of REKEYED)
    await sql`
      alter table ${sql.table(table)}
        drop constraint ${sql.id(`${table}_pkey`)},
        add constraint ${sql.id(`${table}_pkey`)} primary key (id, policy_id)`.execute(db);
  await sql`
    alter table statement_odometers
      drop constraint statement_odometers_pkey,
      add constraint statement_odometers_pkey primary key (statement_id, policy_id)`.execute(db);
  await sql`
    alter table journey_voids
      drop constraint journey_voids_journey_key,
      add constraint journey_voids_journey_key unique (journey_id, policy_id)`.execute(db);
  await sql`
    alter table policy_credits
      drop constraint policy_credits_source_reference_key,
      add constraint policy_credits_source_reference_key unique (policy_id, source, reference)`.execute(db);

  // A payment's policy is null until it settles a policy's version (an intent at the quote): then
  // neither column is checked (MATCH SIMPLE), as before.
  for (const [table, name, column, target] of WITHIN_POLICY)
    await sql`
      alter table ${sql.table(table)} add constraint ${sql.id(name)}
        foreign key (${sql.ref(column)}, policy_id) references ${sql.table(target)} (id, policy_id)`.execute(
      db,
    );
}
