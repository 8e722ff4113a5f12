import { sql, type Kysely } from 'kysely';

/**
 * Mileage budgets and usage alerts. A budget is a policyholder's own monthly distance target; it never
 * changes the bill. An alert row is written once per policy, kind and period (a London month, a London
 * day or a policy year) by the journey that first takes the usage over its limit: the primary key is
 * what makes each alert (its event, its email) happen exactly once, however many journeys race to it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table mileage_budgets (
      policy_id uuid not null references policies (id),
      company_id uuid not null references companies (id),
      environment text not null check (environment in ('sandbox', 'production')),
      distance_per_month numeric not null,
      usage_unit text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint mileage_budgets_pkey primary key (policy_id),
      constraint mileage_budgets_distance_positive check (distance_per_month > 0),
      constraint mileage_budgets_usage_unit check (usage_unit in ('mile', 'km'))
    )`.execute(db);
  await sql`
    create table usage_alerts (
      policy_id uuid not null references policies (id),
      kind text not null,
      period text not null,
      created_at timestamptz not null,
      constraint usage_alerts_pkey primary key (policy_id, kind, period),
      constraint usage_alerts_kind check (kind in ('budget_exceeded', 'daily_cap_reached', 'annual_cap_reached'))
    )`.execute(db);
}
