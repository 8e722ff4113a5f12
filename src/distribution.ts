/**
 * Where each table would live on Citus, past one PostgreSQL primary (DESIGN §6, docs/operations.md
 * "Sharding on Citus"). Today's schema already keeps what this plan needs; a test
 * (test/integration/platform/distribution.test.ts) holds every table of the schema to it, so a new
 * table or key that a sharded database could not keep fails there first.
 *
 * - `policy`: sharded by policy and co-located (a policy's rows on one shard, joined there). The
 *   distribution column is `policy_id` (`id` for `policies`): every unique key and every foreign key
 *   between these tables includes it.
 * - `device`: positions, sharded by device (each upload is one device's), and the spans of the trips
 *   whose positions were deleted (data minimisation), co-located with them.
 * - `reference`: small tables every shard needs a copy of (companies, products, endpoints), and the
 *   policy references, unique across companies, which route a reference to its policy's shard.
 * - `coordinator`: per-account and per-company tables (accounts, sign-in, events and their webhook
 *   deliveries, emails, the audit trail, payments, devices and their bindings) stay on the coordinator as Citus local tables: they
 *   grow with people and money movements, not with journeys and positions, and one primary holds tens
 *   of millions of them. Payments are among them, not the policy's: an intent is taken at the quote,
 *   before any policy exists, and every processor webhook finds its payment by the processor's id.
 *   Device bindings sit with their devices: every position upload reads its device's binding, and a
 *   device is bound to one policy at a time, a key across policies.
 */

export type Placement =
  | { readonly kind: 'policy'; readonly column: 'policy_id' | 'id' }
  | { readonly kind: 'device'; readonly column: 'device_id' }
  | { readonly kind: 'reference' }
  | { readonly kind: 'coordinator' };

const policy = { kind: 'policy', column: 'policy_id' } as const;
const reference = { kind: 'reference' } as const;
const coordinator = { kind: 'coordinator' } as const;

/** Every table of the public schema (partitions follow their parent). */
export const DISTRIBUTION: Readonly<Record<string, Placement>> = {
  policies: { kind: 'policy', column: 'id' },
  policy_versions: policy,
  journeys: policy,
  journey_voids: policy,
  journey_keys: policy,
  journey_rule_credits: policy,
  statements: policy,
  statement_odometers: policy,
  policy_credits: policy,
  policy_usage_years: policy,
  mileage_budgets: policy,
  usage_alerts: policy,
  odometer_readings: policy,
  documents: policy,
  document_files: policy,
  documents_owed: policy,
  claims: policy,
  claim_exposures: policy,
  claim_payments: policy,
  claim_notes: policy,
  claim_photos: policy,
  claim_reserve_movements: policy,
  renewal_prices: policy,
  trip_scores: policy,
  trip_score_events: policy,
  score_months: policy,
  score_disputes: policy,

  positions: { kind: 'device', column: 'device_id' },
  minimised_trips: { kind: 'device', column: 'device_id' },

  companies: reference,
  policy_references: reference,
  products: reference,
  product_versions: reference,
  document_logos: reference,
  document_templates: reference,
  rate_books: reference,
  rate_book_versions: reference,
  webhook_endpoints: reference,
  document_settings: reference,
  staff: reference,
  claim_settings: reference,
  auth_signing_keys: reference,

  users: coordinator,
  auth_login_sessions: coordinator,
  auth_refresh_tokens: coordinator,
  auth_reset_codes: coordinator,
  auth_throttles: coordinator,
  staff_sessions: coordinator,
  payment_customers: coordinator,
  payments: coordinator,
  quotes: coordinator,
  quote_bindings: coordinator,
  quote_settings: coordinator,
  telematics_settings: coordinator,
  quote_purchases: coordinator,
  direct_debit_mandates: coordinator,
  processed_payment_events: coordinator,
  devices: coordinator,
  crash_events: coordinator,
  claim_crashes_owed: coordinator,
  device_bindings: coordinator,
  events: coordinator,
  webhook_pending_events: coordinator,
  document_pending_events: coordinator,
  webhook_deliveries: coordinator,
  webhook_delivery_attempts: coordinator,
  outbox_emails: coordinator,
  audit_records: coordinator,
  housekeeping_runs: coordinator,
  stripe_sandbox_objects: coordinator,
  stripe_sandbox_idempotency: coordinator,
  kysely_migration: coordinator,
  kysely_migration_lock: coordinator,
};

/**
 * Foreign keys that join a sharded table to a coordinator table, or a coordinator table to a sharded
 * one: Citus cannot keep them, so they are dropped when the tables are distributed, and the service
 * keeps what they checked as it does today in the same transaction (each row is written with the id
 * it just read).
 */
export const DROPPED_ON_CITUS: readonly { table: string; constraint: string; why: string }[] = [
  {
    table: 'quote_bindings',
    constraint: 'quote_bindings_policy_id_fkey',
    why: 'a quote is bound in the transaction that creates or adjusts the policy it names',
  },
  {
    table: 'policies',
    constraint: 'policies_user_id_fkey',
    why: 'a policy is created with the account it has just found or made',
  },
  {
    table: 'device_bindings',
    constraint: 'device_bindings_policy_id_fkey',
    why: 'a binding is made under the lock of the policy row it has just read',
  },
  {
    table: 'statements',
    constraint: 'statements_payment_id_fkey',
    why: 'a statement’s payment is written in the statement’s own transaction',
  },
  {
    table: 'payments',
    constraint: 'payments_policy_id_fkey',
    why: 'a payment is written for the policy it has just read',
  },
  {
    table: 'payments',
    constraint: 'payments_policy_version_id_fkey',
    why: 'a payment is written for the version stored in its own transaction',
  },
  {
    table: 'minimised_trips',
    constraint: 'minimised_trips_device_id_fkey',
    why: 'a trip’s span is recorded in the transaction that cut it from the device’s positions',
  },
  {
    table: 'direct_debit_mandates',
    constraint: 'direct_debit_mandates_policy_id_fkey',
    why: 'a mandate is recorded for the policy it has just read',
  },
];

/** The statements that distribute today's schema on Citus, in order (docs/operations.md). */
export function citusStatements(): string[] {
  const statements: string[] = ['create extension if not exists citus;'];
  for (const { table, constraint } of DROPPED_ON_CITUS)
    statements.push(`alter table ${table} drop constraint ${constraint};`);
  for (const [table, placement] of Object.entries(DISTRIBUTION))
    if (placement.kind === 'reference') statements.push(`select create_reference_table('${table}');`);
  statements.push(`select create_distributed_table('policies', 'id');`);
  for (const [table, placement] of Object.entries(DISTRIBUTION))
    if (placement.kind === 'policy' && table !== 'policies')
      statements.push(
        `select create_distributed_table('${table}', 'policy_id', colocate_with => 'policies');`,
      );
  statements.push(`select create_distributed_table('positions', 'device_id', colocate_with => 'none');`);
  for (const [table, placement] of Object.entries(DISTRIBUTION))
    if (placement.kind === 'device' && table !== 'positions')
      statements.push(
        `select create_distributed_table('${table}', 'device_id', colocate_with => 'positions');`,
      );
  for (const [table, placement] of Object.entries(DISTRIBUTION))
    if (placement.kind === 'coordinator')
      statements.push(`select citus_add_local_table_to_metadata('${table}');`);
  return statements;
}
