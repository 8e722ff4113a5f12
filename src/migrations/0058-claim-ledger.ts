import { sql, type Kysely } from 'kysely';

/**
 * What a claim changes: the ledger of its reserves (for the claims bordereau), its fault (for the
 * no-claims step-back at renewal), when it was settled, and how long a closed claim's personal data is kept.
 *
 * - `claim_reserve_movements`: every change of an exposure's reserve, written by triggers so that no code
 *   path can move a reserve without its movement: `reserve` for a new exposure's reserve and each change of
 *   it (the difference, signed), `release` for what a final payment leaves unpaid (negative: a settled
 *   exposure has nothing outstanding). So an exposure's outstanding reserve at any instant is the sum of its
 *   movements less the sum of its payments up to then. Exposures made before this migration get one
 *   `reserve` movement of their current reserve at their creation and, when settled, their release.
 * - `claims.at_fault`: set by staff (null until decided); `claims.settled_at`: the last time the claim was
 *   settled, filled for claims settled before from their exposures' last settlement.
 * - `claims.ended_at`: when the claim last ended (closed, rejected or withdrawn; null while live), filled
 *   for claims ended before from `closed_at`, else their last update.
 * - `claim_settings.retention_years`: years after a claim ended that its personal data is kept (null: the
 *   default, 6).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table claim_reserve_movements (
      id uuid not null default gen_random_uuid(),
      policy_id uuid not null,
      claim_id uuid not null,
      exposure_id uuid not null,
      company_id uuid not null,
      environment text not null,
      kind text not null constraint claim_reserve_movements_kind_known check (kind in ('reserve', 'release')),
      amount_pence bigint not null constraint claim_reserve_movements_amount_nonzero check (amount_pence <> 0),
      moved_at timestamptz not null,
      constraint claim_reserve_movements_pkey primary key (id, policy_id),
      constraint claim_reserve_movements_exposure_fkey foreign key (exposure_id, policy_id)
        references claim_exposures (id, policy_id)
    )`.execute(db);
  await sql`
    create index claim_reserve_movements_by_tenant
    on claim_reserve_movements (company_id, environment, moved_at)`.execute(db);
  await sql`
    create index claim_reserve_movements_by_claim
    on claim_reserve_movements (policy_id, claim_id, moved_at)`.execute(db);
  await sql`
    create function claim_reserves_moved() returns trigger language plpgsql as $$
    declare
      moved bigint := new.reserve_pence - case when TG_OP = 'INSERT' then 0 else old.reserve_pence end;
    begin
      if moved <> 0 then
        insert into claim_reserve_movements
          (policy_id, claim_id, exposure_id, company_id, environment, kind, amount_pence, moved_at)
        values (new.policy_id, new.claim_id, new.id, new.company_id, new.environment, 'reserve', moved,
          new.updated_at);
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger claim_exposures_reserve_moved after insert or update of reserve_pence on claim_exposures
    for each row execute function claim_reserves_moved()`.execute(db);
  // NOTE: named to fire after `claim_payments_paid` (triggers of one event fire in name order), so the
  // exposure it reads already carries the final payment.
  await sql`
    create function claim_reserves_released() returns trigger language plpgsql as $$
    declare
      left_pence bigint;
    begin
      if new.final then
        select reserve_pence - paid_pence into left_pence from claim_exposures
        where id = new.exposure_id and policy_id = new.policy_id;
        if left_pence <> 0 then
          insert into claim_reserve_movements
            (policy_id, claim_id, exposure_id, company_id, environment, kind, amount_pence, moved_at)
          values (new.policy_id, new.claim_id, new.exposure_id, new.company_id, new.environment, 'release',
            -left_pence, new.paid_at);
        end if;
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger claim_payments_release after insert on claim_payments
    for each row execute function claim_reserves_released()`.execute(db);
  await sql`
    insert into claim_reserve_movements
      (policy_id, claim_id, exposure_id, company_id, environment, kind, amount_pence, moved_at)
    select policy_id, claim_id, id, company_id, environment, 'reserve', reserve_pence, created_at
    from claim_exposures where reserve_pence <> 0`.execute(db);
  await sql`
    insert into claim_reserve_movements
      (policy_id, claim_id, exposure_id, company_id, environment, kind, amount_pence, moved_at)
    select policy_id, claim_id, id, company_id, environment, 'release', paid_pence - reserve_pence, settled_at
    from claim_exposures where settled_at is not null and reserve_pence <> paid_pence`.execute(db);

  await sql`alter table claims add column at_fault boolean`.execute(db);
  await sql`alter table claims add column settled_at timestamptz`.execute(db);
  await sql`
    update claims c set settled_at = (
      select max(e.settled_at) from claim_exposures e where e.claim_id = c.id and e.policy_id = c.policy_id)
    where c.state in ('settled', 'closed')`.execute(db);
  await sql`create index claims_settled on claims (policy_id, settled_at)`.execute(db);
  await sql`
    alter table claim_settings add column retention_years integer
    constraint claim_settings_retention_range check (retention_years between 1 and 100)`.execute(db);
  await sql`alter table claims add column ended_at timestamptz`.execute(db);
  await sql`
    update claims set ended_at = case when state = 'closed' then closed_at else updated_at end
    where state in ('closed', 'rejected', 'withdrawn')`.execute(db);
  await sql`create index claims_ended on claims (ended_at) where erased_at is null`.execute(db);
}
