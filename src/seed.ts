import { randomInt } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { countPolicyholders, generateTemporaryPassword, hashPassword } from './modules/accounts/index.ts';
import {
  asTenant,
  createCompanyService,
  findCompanyByReference,
  type CompanyCredentials,
} from './modules/companies/index.ts';
import { systemClock } from './platform/clock.ts';
import { inTransaction, withoutQueryTimeout } from './platform/db/database.ts';
import type { Database, Executor } from './schema.ts';
import { idPrefixes } from './seed/ids.ts';
import { insertJourneys, MAX_JOURNEYS } from './seed/journeys.ts';
import { insertPolicyBatch, type PolicyBatch } from './seed/policy-batch.ts';

export { RARE_SURNAME_EVERY } from './seed/people.ts';

/**
 * Bulk test data: one company's live policies, written by set-based SQL (no HTTP, no per-row round
 * trip), for benchmarks, load tests and demos of the back office's search.
 *
 * Each policy has its policyholder's account (a temporary password nobody was told, as if the welcome
 * email had been lost: a password reset lets them in) and one `nb` version whose snapshot is the
 * OpenAPI example with its own person, address, vehicle and term. Everything but ids and references
 * (policy, user and quote references are random, as the service's are) follows from the policy's index
 * (1, 2, … within its company and environment), so two seeds of the same size hold the same people,
 * registrations and postcodes:
 * - names from common UK first names and surnames, surnames skewed as in life (Smith is common); one
 *   policy in RARE_SURNAME_EVERY has a rare surname, for searches that should find a handful;
 * - email `first.surname<index>@example.com` (or .org/.net: reserved domains, nobody receives mail);
 * - registration in the current UK format (`AB12 CDE`), distinct within a seed;
 * - postcode from real outward codes (`SW1A`, `M1`, `EH1`, `CF10`…) and a well-formed inward part;
 * - a one-year term that started within the last 360 days (Europe/London midnight), so it covers today.
 */

export interface SeedOptions {
  readonly policies: number;
  /** An existing company to add the policies to; by default a new company is created. */
  readonly companyReference?: string;
  readonly environment?: 'sandbox' | 'production';
  /** Policies per transaction (default 25,000). */
  readonly batchSize?: number;
  /**
   * Terms that start on the days of this Europe/London month (`YYYY-MM`), spread over it, instead of
   * within the last 360 days: a month of `nb` versions, for the bordereau's benchmark.
   */
  readonly startMonth?: string;
  /**
   * With `startMonth`: each policy also has its statement of that month (an `st` version effective at
   * the month's last second, and its `statements` row: one installment, some usage, on some policies a
   * capped day, free distance or a credit used), so the month holds two versions a policy.
   */
  readonly monthStatements?: boolean;
  /**
   * Terms that all start on this Europe/London day (`YYYY-MM-DD`), so that every policy has the same
   * billing day: a billing day's worth of policies, for the billing benchmark.
   */
  readonly startOn?: string;
  /**
   * Journeys a policy (default 0), in its current billing period: from its latest billing date before
   * today (Europe/London; its term's start if later) up to now, spread evenly, none overlapping,
   * rated at the version's usage rate. None for a policy whose period began less than 4 seconds a
   * journey ago (a term that started minutes ago).
   */
  readonly journeys?: number;
  /** The instant the seed takes as now (default the clock's): terms and journeys are placed from it. */
  readonly at?: Date;
  /**
   * A product the policies name (in the column and the snapshot); the caller registers it for the
   * company first (the service would refuse one it has not).
   */
  readonly productReference?: string;
  /** After each batch commits: how many policies are written so far. */
  onProgress?(done: number): void;
}

export interface SeedResult {
  readonly companyReference: string;
  readonly clientId: string;
  readonly environment: 'sandbox' | 'production';
  /** Policies written (fewer than asked only if some references were already taken). */
  readonly policies: number;
  /** Journeys written. */
  readonly journeys: number;
  readonly seconds: number;
  /** The new company's credentials, secrets in plain text; absent when the company existed. */
  readonly credentials?: CompanyCredentials;
}

/**
 * Writes `options.policies` live policies, each with its policyholder and `nb` version, for one company
 * (created unless `companyReference` names one) in `environment` (default sandbox), `batchSize` to a
 * transaction. The search text is written with each policy, in the same statement, rather than by the
 * per-row trigger on versions (which would write every policy row a second time): the trigger is off
 * inside each batch's transaction only, so another writer never sees it off, and a failed batch leaves
 * it as it was.
 */
export async function seedPolicies(db: Kysely<Database>, options: SeedOptions): Promise<SeedResult> {
  const started = performance.now();
  const plan = seedPlan(options);
  const { companyReference, company, credentials } = await seedCompany(db, options.companyReference);

  // Indexes continue after the tenant's existing policyholders, so a second seed adds other people.
  const first = (await countPolicyholders(db, asTenant(company.id, plan.environment))) + 1;

  const passwordHash = await hashPassword(generateTemporaryPassword());
  // A random start for the references' walk through the 2,048³ three-word space: seeds of other
  // companies (or of this one) do not draw the same references, except by a very small chance.
  const referenceOffset = randomInt(2 ** 47) % 2 ** 33;
  const ids = idPrefixes();
  const trigramIndex = await hasTrigramIndex(db);

  const { policies, journeys } = await writeBatches(db, plan, {
    first,
    trigramIndex,
    onProgress: (done) => options.onProgress?.(done),
    batch: {
      companyId: company.id,
      environment: plan.environment,
      referenceOffset,
      passwordHash,
      ids,
      starts: plan.starts,
      month: plan.month,
      statements: options.monthStatements === true,
      productReference: options.productReference ?? null,
      at: plan.at,
    },
  });
  await analyzeSeeded(db, journeys > 0);
  return {
    companyReference,
    clientId: company.clientId,
    environment: plan.environment,
    policies,
    journeys,
    seconds: (performance.now() - started) / 1000,
    ...(credentials === undefined ? {} : { credentials }),
  };
}

/** A seed's options, checked, with their defaults. */
interface SeedPlan {
  readonly policies: number;
  readonly environment: 'sandbox' | 'production';
  readonly batchSize: number;
  readonly journeysPerPolicy: number;
  readonly month: { firstOn: string; days: number } | undefined;
  readonly starts: { firstOn: string; days: number } | undefined;
  readonly at: Date;
}

function seedPlan(options: SeedOptions): SeedPlan {
  const environment = options.environment ?? 'sandbox';
  const batchSize = options.batchSize ?? 25_000;
  if (!Number.isInteger(options.policies) || options.policies < 0)
    throw new Error(`policies must be a whole number ≥ 0 (got ${String(options.policies)})`);
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new Error(`batchSize must be a whole number ≥ 1 (got ${String(batchSize)})`);
  const journeysPerPolicy = options.journeys ?? 0;
  if (!Number.isInteger(journeysPerPolicy) || journeysPerPolicy < 0 || journeysPerPolicy > MAX_JOURNEYS)
    throw new Error(
      `journeys must be a whole number from 0 to ${String(MAX_JOURNEYS)} (got ${String(journeysPerPolicy)})`,
    );
  if (options.startMonth !== undefined && options.startOn !== undefined)
    throw new Error('startMonth and startOn are exclusive');
  const month = options.startMonth === undefined ? undefined : monthOf(options.startMonth);
  const starts = options.startOn === undefined ? month : { firstOn: dateOf(options.startOn), days: 1 };
  if (options.monthStatements === true && month === undefined)
    throw new Error('monthStatements needs startMonth');
  // NOTE: a month's statement would bill the month's journeys; the seed writes it without them.
  if (options.monthStatements === true && journeysPerPolicy > 0)
    throw new Error('monthStatements and journeys are exclusive');
  const at = options.at ?? systemClock.now();
  return { policies: options.policies, environment, batchSize, journeysPerPolicy, month, starts, at };
}

/** The company the policies go to: the one `companyReference` names, or a new one with its credentials. */
async function seedCompany(db: Kysely<Database>, reference: string | undefined) {
  let credentials: CompanyCredentials | undefined;
  let companyReference = reference;
  if (companyReference === undefined) {
    credentials = await createCompanyService({ db, clock: systemClock }).create('Seeded Insurer');
    companyReference = credentials.company_reference;
  }
  const company = await findCompanyByReference(db, companyReference);
  if (company === undefined) throw new Error(`no company ${companyReference}`);
  return { companyReference, company, credentials };
}

/** Whether the policies' trigram search index exists (PostgreSQL only). */
async function hasTrigramIndex(db: Kysely<Database>): Promise<boolean> {
  return (
    (
      await sql`
        select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where c.relname = 'policies_search' and n.nspname = current_schema()`.execute(db)
    ).rows.length > 0
  );
}

/**
 * The batches, each in its transaction, from index `first` on; how many policies and journeys were
 * written. A batch's journeys are written in their own transaction on another connection while the
 * next batch's policies are: the two statements keep both cores busy (on PGlite, one connection, they
 * take turns). Journeys of a batch that failed are never asked for; a failure of journeys ends the
 * seed after the batch in flight, its policies written.
 */
async function writeBatches(
  db: Kysely<Database>,
  plan: SeedPlan,
  run: {
    first: number;
    trigramIndex: boolean;
    onProgress: (done: number) => void;
    batch: Omit<PolicyBatch, 'from' | 'to'>;
  },
): Promise<{ policies: number; journeys: number }> {
  const { first, batch } = run;
  let written = 0;
  let journeysWritten = 0;
  let journeysInFlight: Promise<void> = Promise.resolve();
  let journeysFailure: { error: unknown } | undefined;
  const writeJourneys = (from: number, to: number) =>
    inTransaction(db, (trx) =>
      insertJourneys(trx, {
        companyId: batch.companyId,
        environment: batch.environment,
        from,
        to,
        ids: batch.ids,
        journeys: plan.journeysPerPolicy,
        at: batch.at,
      }),
    ).then(
      (n) => {
        journeysWritten += n;
      },
      (error: unknown) => {
        journeysFailure = { error };
      },
    );
  await withoutQueryTimeout(async () => {
    for (let from = first; from < first + plan.policies; from += plan.batchSize) {
      const to = Math.min(from + plan.batchSize, first + plan.policies) - 1;
      const inserted = await inTransaction(db, (trx) =>
        withSearchTextInline(trx, run.trigramIndex, () => insertPolicyBatch(trx, { ...batch, from, to })),
      );
      written += inserted;
      await journeysInFlight;
      if (journeysFailure !== undefined) throw journeysFailure.error;
      run.onProgress(written);
      if (plan.journeysPerPolicy > 0 && inserted > 0) journeysInFlight = writeJourneys(from, to);
    }
    await journeysInFlight;
    if (journeysFailure !== undefined) throw journeysFailure.error;
  });
  return { policies: written, journeys: journeysWritten };
}

/**
 * Gathers the planner's statistics on the tables the seed filled. NOTE: a bulk load is not followed
 * by autovacuum's analyze at once (nor ever where autovacuum is off), and with no statistics the
 * planner takes a company's policies for a handful: the bordereau of a seeded book of 200,000
 * policies then probed every month's versions once a policy, and its first batch ran past the
 * 30-second statement bound.
 */
async function analyzeSeeded(db: Kysely<Database>, withJourneys: boolean): Promise<void> {
  const tables = ['users', 'policy_references', 'policies', 'policy_versions', 'statements'];
  if (withJourneys) tables.push('journeys', 'journey_keys');
  await withoutQueryTimeout(() => sql`analyze ${sql.raw(tables.join(', '))}`.execute(db));
}

/**
 * Runs `write` in the batch's transaction with the versions' search trigger off (the batch writes the
 * search text itself) and bulk-load settings on.
 */
async function withSearchTextInline<T>(
  trx: Executor,
  trigramIndex: boolean,
  write: () => Promise<T>,
): Promise<T> {
  await sql`alter table policy_versions disable trigger policy_versions_search`.execute(trx);
  // The trigram index (PostgreSQL only) takes new entries into a pending list, merged into the
  // index whenever the list outgrows gin_pending_list_limit: with the default 4 MB, every few
  // thousand policies, at twice the cost of one merge of the whole batch (below), which also
  // frees the list's pages for the next batch.
  await sql`set local gin_pending_list_limit = '1GB'`.execute(trx);
  await sql`set local work_mem = '128MB'`.execute(trx);
  await sql`set local maintenance_work_mem = '256MB'`.execute(trx);
  const result = await write();
  if (trigramIndex) await sql`select gin_clean_pending_list('policies_search'::regclass)`.execute(trx);
  await sql`alter table policy_versions enable trigger policy_versions_search`.execute(trx);
  return result;
}

/** A `YYYY-MM` month: its first day and its number of days. */
function monthOf(text: string): { firstOn: string; days: number } {
  const match = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(text);
  if (match === null) throw new Error(`startMonth must be YYYY-MM (got ${text})`);
  const year = Number(match[1]);
  const monthNumber = Number(match[2]);
  return { firstOn: `${text}-01`, days: new Date(Date.UTC(year, monthNumber, 0)).getUTCDate() };
}

/** A `YYYY-MM-DD` day, checked. */
function dateOf(text: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const day = new Date(`${text}T00:00:00Z`);
  if (match === null || Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== text)
    throw new Error(`startOn must be YYYY-MM-DD (got ${text})`);
  return text;
}
