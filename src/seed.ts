import { wordlist } from '@scure/bip39/wordlists/english.js';
import { randomBytes, randomInt } from 'node:crypto';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import {
  generateTemporaryPassword,
  hashPassword,
  TEMPORARY_PASSWORD_DAYS,
} from './modules/accounts/index.ts';
import { createCompanyService, type CompanyCredentials } from './modules/companies/index.ts';
import { METRES_PER_MILE } from './modules/journeys/index.ts';
import { POLICY_INPUT_EXAMPLE } from './modules/policies/index.ts';
import { systemClock } from './platform/clock.ts';
import { inTransaction, withoutQueryTimeout } from './platform/db/database.ts';
import type { Database, Executor } from './schema.ts';

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

/** One policy in this many has a rare surname (a prime, so it does not line up with the other cycles). */
export const RARE_SURNAME_EVERY = 10_007;

// prettier-ignore
const FEMALE_FIRST_NAMES = [
  'Olivia', 'Amelia', 'Isla', 'Ava', 'Mia', 'Ivy', 'Lily', 'Isabella', 'Rosie', 'Sophia', 'Grace', 'Freya',
  'Willow', 'Florence', 'Emily', 'Ella', 'Poppy', 'Evie', 'Charlotte', 'Sienna', 'Daisy', 'Evelyn',
  'Sophie', 'Alice', 'Phoebe', 'Matilda', 'Ruby', 'Emilia', 'Harper', 'Sarah', 'Emma', 'Jessica', 'Hannah',
  'Laura', 'Rebecca', 'Rachel', 'Lucy', 'Katie', 'Amy', 'Claire', 'Helen', 'Nicola', 'Karen', 'Susan',
  'Margaret', 'Elizabeth', 'Victoria', 'Jennifer', 'Catherine', 'Joanne', 'Louise', 'Aisha', 'Zara',
  'Niamh', 'Siobhan', 'Megan', 'Bethan', 'Priya', 'Fatima', 'Anna',
];
// prettier-ignore
const MALE_FIRST_NAMES = [
  'Oliver', 'George', 'Noah', 'Arthur', 'Leo', 'Muhammad', 'Oscar', 'Harry', 'Archie', 'Jack', 'Henry',
  'Charlie', 'Freddie', 'Theodore', 'Thomas', 'Alfie', 'Jacob', 'William', 'Isaac', 'James', 'Joshua',
  'Daniel', 'Samuel', 'Benjamin', 'Edward', 'Joseph', 'Lucas', 'Max', 'Ethan', 'Alexander', 'David',
  'Michael', 'Paul', 'Andrew', 'Mark', 'Richard', 'Christopher', 'Matthew', 'Stephen', 'John', 'Peter',
  'Robert', 'Simon', 'Gareth', 'Rhys', 'Callum', 'Jamie', 'Ryan', 'Liam', 'Connor', 'Owen', 'Dylan', 'Ewan',
  'Aaron', 'Adam', 'Ben', 'Sean', 'Ravi', 'Omar', 'Tom',
];
// prettier-ignore
const MIDDLE_NAMES = [
  'Rose', 'Mae', 'Grace', 'Jane', 'Louise', 'James', 'John', 'Alexander', 'Edward', 'Lee',
];

/** Most common first: a policy's surname is drawn with weights that fall with the rank. */
// prettier-ignore
const SURNAMES = [
  'Smith', 'Jones', 'Williams', 'Taylor', 'Brown', 'Davies', 'Evans', 'Wilson', 'Thomas', 'Johnson',
  'Roberts', 'Robinson', 'Thompson', 'Wright', 'Walker', 'White', 'Edwards', 'Hughes', 'Green', 'Hall',
  'Lewis', 'Harris', 'Clarke', 'Patel', 'Jackson', 'Wood', 'Turner', 'Martin', 'Cooper', 'Hill', 'Ward',
  'Morris', 'Moore', 'Clark', 'Lee', 'King', 'Baker', 'Harrison', 'Morgan', 'Allen', 'James', 'Scott',
  'Phillips', 'Watson', 'Davis', 'Parker', 'Price', 'Bennett', 'Young', 'Griffiths', 'Mitchell', 'Kelly',
  'Cook', 'Carter', 'Richardson', 'Bailey', 'Collins', 'Bell', 'Shaw', 'Murphy', 'Miller', 'Cox',
  'Richards', 'Khan', 'Marshall', 'Anderson', 'Simpson', 'Ellis', 'Adams', 'Singh', 'Begum', 'Wilkinson',
  'Foster', 'Chapman', 'Powell', 'Webb', 'Rogers', 'Gray', 'Mason', 'Ali', 'Hunt', 'Hussain', 'Campbell',
  'Matthews', 'Owen', 'Palmer', 'Holmes', 'Mills', 'Barnes', 'Knight', 'Lloyd', 'Butler', 'Russell',
  'Barker', 'Fisher', 'Stevens', 'Jenkins', 'Murray', 'Dixon', 'Harvey', 'Graham', 'Pearson', 'Ahmed',
  'Fletcher', 'Walsh', 'Kaur', 'Gibson', 'Howard', 'Andrews', 'Stewart', 'Elliott', 'Reynolds', 'Saunders',
  'Payne', 'Fox', 'Ford', 'Pearce', 'Day', 'Brooks', 'West', 'Lawrence', 'Cole', 'Atkinson', 'Bradley',
  'Spencer', 'Gill', 'Dawson', 'Ball', 'Burton', "O'Brien", 'Watts', 'Rose', 'Booth', 'Perry', 'Ryan',
  'Grant', 'Wells', 'Armstrong', 'Francis', 'Rees', 'Hayes', 'Hart', 'Hudson', 'Newman', 'Barrett',
  'Webster', 'Hunter', 'Gregory', 'Carr', 'Lowe', 'Page', 'Marsh', 'Riley', 'Dunn', 'Woods', 'Parsons',
  'Berry', 'Stone', 'Reid', 'Holland', 'Hawkins', 'Harding', 'Porter', 'Robertson', 'Newton', 'Oliver',
  'Reed', 'Kennedy', 'Williamson', 'Bird', 'Gardner', 'Shah', 'Dean', 'Lane', 'Cooke', 'Bates', 'Henderson',
  'Parry', 'Burgess', 'Bishop', 'Walton', 'Burns', 'Nicholson', 'Shepherd', 'Ross', 'Cross', 'Long',
  'Freeman', 'Warren', 'Nicholls', 'Hamilton', 'Byrne', 'Sutton', 'McDonald', 'Yates', 'Hodgson', 'Robson',
  'Curtis', 'Hopkins', "O'Connor", 'Harper', 'Coleman', 'Watkins', 'Moss', 'McCarthy', 'Chambers',
  "O'Neill", 'Griffin', 'Sharp', 'Hardy', 'Wheeler', 'Potter', 'Osborne', 'Johnston', 'Gordon', 'Doyle',
  'Wallace', 'Jordan', 'Hutchinson', 'Rowe', 'Burke', 'Pritchard', 'Gilbert',
];
/** Surnames that real people have but few: a search for one finds a handful of policies. */
// prettier-ignore
const RARE_SURNAMES = [
  'Featherstonehaugh', 'Cholmondeley', 'Marjoribanks', 'Auchinleck', 'Vavasour', 'Ozanne', 'Tremayne',
  'Trelawny', 'Boscawen', 'Inchbald', 'Jolliffe', 'Kettlewell', 'Nankivell', 'Penhaligon', 'Scudamore',
  'Tollemache', 'Urquhart', 'Wykeham', 'Yeoland', 'Zouche',
];

/** Real outward codes and their post towns, across the four nations. */
// prettier-ignore
const OUTWARD_CODES: ReadonlyArray<readonly [string, string]> = [
  ['SW1A', 'London'], ['EC1A', 'London'], ['WC2N', 'London'], ['W1D', 'London'], ['N1', 'London'],
  ['E1', 'London'], ['SE1', 'London'], ['NW1', 'London'], ['SW19', 'London'], ['E14', 'London'],
  ['M1', 'Manchester'], ['M14', 'Manchester'], ['B1', 'Birmingham'], ['B15', 'Birmingham'],
  ['LS1', 'Leeds'], ['LS6', 'Leeds'], ['L1', 'Liverpool'], ['S1', 'Sheffield'], ['BS1', 'Bristol'],
  ['NE1', 'Newcastle upon Tyne'], ['NG1', 'Nottingham'], ['LE1', 'Leicester'], ['CV1', 'Coventry'],
  ['BN1', 'Brighton'], ['PL1', 'Plymouth'], ['EX1', 'Exeter'], ['YO1', 'York'], ['CB1', 'Cambridge'],
  ['OX1', 'Oxford'], ['RG1', 'Reading'], ['SO14', 'Southampton'], ['PO1', 'Portsmouth'], ['NR1', 'Norwich'],
  ['IP1', 'Ipswich'], ['HU1', 'Hull'], ['ST1', 'Stoke-on-Trent'], ['DE1', 'Derby'],
  ['WV1', 'Wolverhampton'], ['GU1', 'Guildford'], ['CH1', 'Chester'], ['BA1', 'Bath'], ['LA1', 'Lancaster'],
  ['DH1', 'Durham'], ['TR1', 'Truro'], ['MK9', 'Milton Keynes'], ['EH1', 'Edinburgh'], ['EH3', 'Edinburgh'],
  ['G1', 'Glasgow'], ['G12', 'Glasgow'], ['AB10', 'Aberdeen'], ['DD1', 'Dundee'], ['IV1', 'Inverness'],
  ['KY16', 'St Andrews'], ['CF10', 'Cardiff'], ['CF24', 'Cardiff'], ['SA1', 'Swansea'], ['NP20', 'Newport'],
  ['LL57', 'Bangor'], ['SY23', 'Aberystwyth'], ['BT1', 'Belfast'], ['BT7', 'Belfast'],
  ['BT48', 'Londonderry'],
];
// prettier-ignore
const STREETS = [
  'Station Road', 'High Street', 'Church Lane', 'Victoria Road', 'Green Lane', 'Manor Road', 'Park Avenue',
  'Queen Street', 'Mill Lane', 'The Crescent', 'Kings Road', 'New Road', 'Grange Road', 'School Lane',
  'London Road', 'Springfield Road', 'Chester Road', 'York Road', 'Windsor Road', 'Albert Road',
  'Church Street', 'Main Street', 'Park Road', 'North Street', 'The Green', 'Orchard Close',
  'Highfield Road', 'Stanley Road', 'Richmond Road', 'Alexandra Road', 'George Street', 'Elm Grove',
  'Mount Pleasant', 'Brook Street', 'Meadow Way', 'Beech Avenue', 'Hillside', 'Cedar Close', 'Oak Drive',
  'Willow Close',
];
const EMAIL_DOMAINS = ['example.com', 'example.org', 'example.net'];
/** Letters of a current-format registration (I, Q and Z are not used). */
const REG_LETTERS = 'ABCDEFGHJKLMNOPRSTUVWXY';
/** The two letters of a postcode's inward part never use C, I, K, M, O or V. */
const INWARD_LETTERS = 'ABDEFGHJLNPQRSTUWXYZ';

/** Lower-case letters only: the part of a name that goes into an email address or a username. */
const slug = (name: string): string =>
  name
    .normalize('NFKD')
    .replace(/[^A-Za-z]/g, '')
    .toLowerCase();

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

  let credentials: CompanyCredentials | undefined;
  let companyReference = options.companyReference;
  if (companyReference === undefined) {
    credentials = await createCompanyService({ db, clock: systemClock }).create('Seeded Insurer');
    companyReference = credentials.company_reference;
  }
  const company = await db
    .selectFrom('companies')
    .select(['id', 'client_id'])
    .where('company_reference', '=', companyReference)
    .executeTakeFirst();
  if (company === undefined) throw new Error(`no company ${companyReference}`);

  // Indexes continue after the tenant's existing policyholders, so a second seed adds other people.
  const existing = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('company_id', '=', company.id)
    .where('environment', '=', environment)
    .executeTakeFirstOrThrow();
  const first = Number(existing.n) + 1;

  const passwordHash = await hashPassword(generateTemporaryPassword());
  // A random start for the references' walk through the 2,048³ three-word space: seeds of other
  // companies (or of this one) do not draw the same references, except by a very small chance.
  const referenceOffset = randomInt(2 ** 47) % 2 ** 33;
  const ids = {
    user: timeOrderedPrefix(),
    policy: timeOrderedPrefix(),
    version: timeOrderedPrefix(),
    statement: timeOrderedPrefix(),
    journey: timeOrderedPrefix(),
  };

  const trigramIndex =
    (
      await sql`
        select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where c.relname = 'policies_search' and n.nspname = current_schema()`.execute(db)
    ).rows.length > 0;

  let written = 0;
  let journeysWritten = 0;
  // A batch's journeys are written in their own transaction on another connection while the next
  // batch's policies are: the two statements keep both cores busy (on PGlite, one connection, they
  // take turns). Journeys of a batch that failed are never asked for; a failure of journeys ends the
  // seed after the batch in flight, its policies written.
  let journeysInFlight: Promise<void> = Promise.resolve();
  let journeysFailure: { error: unknown } | undefined;
  const writeJourneys = (from: number, to: number) =>
    inTransaction(db, (trx) =>
      insertJourneys(trx, {
        companyId: company.id,
        environment,
        from,
        to,
        ids,
        journeys: journeysPerPolicy,
        at,
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
    for (let from = first; from < first + options.policies; from += batchSize) {
      const to = Math.min(from + batchSize, first + options.policies) - 1;
      const inserted = await inTransaction(db, async (trx) => {
        await sql`alter table policy_versions disable trigger policy_versions_search`.execute(trx);
        // The trigram index (PostgreSQL only) takes new entries into a pending list, merged into the
        // index whenever the list outgrows gin_pending_list_limit: with the default 4 MB, every few
        // thousand policies, at twice the cost of one merge of the whole batch (below), which also
        // frees the list's pages for the next batch.
        await sql`set local gin_pending_list_limit = '1GB'`.execute(trx);
        await sql`set local work_mem = '128MB'`.execute(trx);
        await sql`set local maintenance_work_mem = '256MB'`.execute(trx);
        const result = await batch(trx, {
          companyId: company.id,
          environment,
          from,
          to,
          referenceOffset,
          passwordHash,
          ids,
          starts,
          month,
          statements: options.monthStatements === true,
          productReference: options.productReference ?? null,
          at,
        });
        if (trigramIndex) await sql`select gin_clean_pending_list('policies_search'::regclass)`.execute(trx);
        await sql`alter table policy_versions enable trigger policy_versions_search`.execute(trx);
        return result;
      });
      written += inserted;
      await journeysInFlight;
      if (journeysFailure !== undefined) throw journeysFailure.error;
      options.onProgress?.(written);
      if (journeysPerPolicy > 0 && inserted > 0) journeysInFlight = writeJourneys(from, to);
    }
    await journeysInFlight;
    if (journeysFailure !== undefined) throw journeysFailure.error;
  });
  return {
    companyReference,
    clientId: company.client_id,
    environment,
    policies: written,
    journeys: journeysWritten,
    seconds: (performance.now() - started) / 1000,
    ...(credentials === undefined ? {} : { credentials }),
  };
}

/**
 * The first 24 characters of time-ordered ids (the UUIDv7 layout: this millisecond, then random bits)
 * that end in a policy's index: each primary key grows at its right edge, as a sequence's would,
 * instead of at a random page (random uuids made the seed slow down as the indexes outgrew memory).
 */
function timeOrderedPrefix(): string {
  const time = Date.now().toString(16).padStart(12, '0');
  const random = randomBytes(3).toString('hex');
  const variant = (8 + randomInt(4)).toString(16);
  return `${time.slice(0, 8)}-${time.slice(8)}-7${random.slice(0, 3)}-${variant}${random.slice(3)}-`;
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

/** Journeys a policy at most: their ids end in the policy's index × this + the journey's number. */
const MAX_JOURNEYS = 10_000;

/** A list as rows `(n, value)`, n from 1: picks are joins (a text array's nth element is a walk). */
const listRows = (values: readonly string[]) =>
  sql`(select n::int, value from unnest(${values}::text[]) with ordinality as l(value, n))`;

/** The first 24 characters of each kind's ids in a seeding; a policy's index makes the last 12. */
interface IdPrefixes {
  readonly user: string;
  readonly policy: string;
  readonly version: string;
  readonly statement: string;
  readonly journey: string;
}

/** Policies `from` to `to` (their indexes) with their users and versions, in one statement; how many were written. */
async function batch(
  trx: Executor,
  values: {
    companyId: string;
    environment: string;
    from: number;
    to: number;
    referenceOffset: number;
    passwordHash: string;
    ids: IdPrefixes;
    /** Terms start on these days rather than within the last 360 days. */
    starts: { firstOn: string; days: number } | undefined;
    /** The month of the statements. */
    month: { firstOn: string; days: number } | undefined;
    /** Each policy also gets its statement of `month`. */
    statements: boolean;
    productReference: string | null;
    /** The seed's now. */
    at: Date;
  },
): Promise<number> {
  const id = (prefix: string) => sql`(${prefix} || lpad(to_hex(d.i), 12, '0'))::uuid`;
  const surnames = [...SURNAMES, ...RARE_SURNAMES];
  const at = sql`${values.at}::timestamptz`;
  const startOn =
    values.starts === undefined
      ? sql`(${at} at time zone 'Europe/London')::date - ((d.i * 37) % 360)::int`
      : sql`${values.starts.firstOn}::date + ((d.i * 37) % ${values.starts.days})::int`;
  // The month's last second, Europe/London: where its statements end.
  const monthEnd =
    values.month === undefined
      ? sql`null::timestamptz`
      : sql`((${values.month.firstOn}::date + interval '1 month')::timestamp at time zone 'Europe/London') - interval '1 second'`;
  const withStatements = values.statements ? sql`true` : sql`false`;
  const result = await sql<{ policies: string }>`
    with words as ${listRows(wordlist)},
    firsts as ${listRows([...FEMALE_FIRST_NAMES, ...MALE_FIRST_NAMES])},
    middles as ${listRows(MIDDLE_NAMES)},
    surnames as (
      select n::int, value, slug
      from unnest(${surnames}::text[], ${surnames.map(slug)}::text[]) with ordinality as l(value, slug, n)
    ),
    places as (
      select n::int, outward, town
      from unnest(${OUTWARD_CODES.map(([code]) => code)}::text[], ${OUTWARD_CODES.map(([, town]) => town)}::text[])
        with ordinality as l(outward, town, n)
    ),
    streets as ${listRows(STREETS)},
    domains as ${listRows(EMAIL_DOMAINS)},
    ages as ${listRows(REGISTRATION_AGES)},
    draws as (
      select i, draw.h, draw.female,
        -- Three BIP-39 words, as the service draws them (policy-reference.ts), but from a bijection
        -- of the index (× an odd number, modulo 2,048³): distinct within a seed.
        1 + draw.r % 2048 as word_1, 1 + (draw.r / 2048) % 2048 as word_2, 1 + draw.r / 4194304 as word_3,
        draw.v,
        case when draw.female then 1 + (draw.h % ${FEMALE_FIRST_NAMES.length})
          else ${FEMALE_FIRST_NAMES.length + 1} + (draw.h % ${MALE_FIRST_NAMES.length}) end as first_index,
        case when i % 5 = 0 then 1 + (draw.h >> 11) % ${MIDDLE_NAMES.length} end as middle_index,
        case when i % ${RARE_SURNAME_EVERY} = 0
          then ${SURNAMES.length + 1} + (i / ${RARE_SURNAME_EVERY}) % ${RARE_SURNAMES.length}
          -- Rank r drawn with probability (r/n)^(1/1.3) − ((r−1)/n)^(1/1.3): Smith ~1.7 %, the last ~0.4 %.
          else 1 + floor(${SURNAMES.length} * power(draw.u, 1.3))::int end as last_index,
        1 + (draw.h >> 3) % ${EMAIL_DOMAINS.length} as domain_index,
        1 + (draw.h >> 9) % ${OUTWARD_CODES.length} as place_index,
        1 + (draw.h >> 21) % ${STREETS.length} as street_index,
        1 + (draw.v / 529) % ${REGISTRATION_AGES.length} as age_index
      from generate_series(${values.from}::bigint, ${values.to}::bigint) as i
      cross join lateral (select
        -- PostgreSQL's own 64-bit hash of the index, its sign bit cleared: each pick reads other bits.
        hashint8extended(i, 0) & 9223372036854775807 as h,
        (hashint8extended(i, 1) & 2147483647) / 2147483648.0::float8 as u,
        (i * 2654435761 + ${values.referenceOffset}::bigint) % 8589934592 as r,
        -- The registration's number: a bijection of the index (× a number prime to their count).
        (i * 2654435761) % ${REGISTRATIONS}::bigint as v,
        i % 2 = 0 as female) as draw
    ),
    people as (
      select d.i, d.h, ${id(values.ids.user)} as user_id, ${id(values.ids.policy)} as policy_id,
        ${id(values.ids.version)} as version_id, ${id(values.ids.statement)} as statement_id,
        w1.value || '-' || w2.value || '-' || w3.value as policy_reference,
        ${registration()} as reg,
        f.value as first_name,
        concat_ws(' ', f.value, m.value) as first_names,
        s.value as last_names,
        lower(f.value) || '.' || s.slug || d.i || '@' || e.value as email,
        left(lower(f.value), 1) || left(s.slug, 11) || d.i as username,
        case when d.female then (array['Ms', 'Mrs', 'Miss', 'Dr'])[1 + (d.h >> 7) % 4] else 'Mr' end as title,
        pl.outward || ' ' || (1 + (d.h >> 15) % 9)::text
          || substr(${INWARD_LETTERS}, 1 + ((d.h >> 19) % ${INWARD_LETTERS.length})::int, 1)
          || substr(${INWARD_LETTERS}, 1 + ((d.h >> 24) % ${INWARD_LETTERS.length})::int, 1) as postcode,
        pl.town,
        (1 + (d.h >> 13) % 180)::text || ' ' || st.value as line_1,
        ${startOn} as start_on,
        (d.i * 7) % 4 <> 0 as auto_renew
      from draws d
      join words w1 on w1.n = d.word_1
      join words w2 on w2.n = d.word_2
      join words w3 on w3.n = d.word_3
      join firsts f on f.n = d.first_index
      left join middles m on m.n = d.middle_index
      join surnames s on s.n = d.last_index
      join domains e on e.n = d.domain_index
      join places pl on pl.n = d.place_index
      join streets st on st.n = d.street_index
      join ages a on a.n = d.age_index
    ),
    terms as (
      select p.*,
        'usr_' || left(translate(encode(uuid_send(gen_random_uuid()), 'base64'), '+/', '-_'), 16) as user_reference,
        (p.start_on::timestamp at time zone 'Europe/London') as start_at,
        ((p.start_on + interval '1 year')::timestamp at time zone 'Europe/London') - interval '1 second' as end_at,
        (p.start_on::timestamp at time zone 'Europe/London')
          - make_interval(days => (p.i % 14)::int, secs => ((p.h >> 5) % 86400)::int) as created_at
      from people p
    ),
    docs as materialized (
      select t.*, ${productSnapshot(sql`(${snapshotSql()})::jsonb`, values.productReference)} as snapshot
      from terms t
    ),
    -- A statement of the month for each policy (when asked): one installment, usage drawn from the
    -- hash, a capped day on one policy in four, free distance on one in seven, a credit on one in ten.
    bills as (
      select d.*, ${monthEnd} as end_at_month,
        round((d.snapshot #>> '{pricing,subscription_premium}')::numeric * 100)::bigint as subscription,
        (100 + (d.h >> 27) % 5000)::bigint as usage
      from docs d where ${withStatements}
    ),
    lines as (
      select b.*, case when b.i % 4 = 0 then least(b.usage, 150) else 0 end::bigint as cap,
        case when b.i % 7 = 0 then least(b.usage, 80) / 2 else 0 end::bigint as free,
        case when b.i % 10 = 0 then 500 else 0 end::bigint as credits
      from bills b
    ),
    new_users as (
      insert into users (id, user_reference, company_id, environment, email, username, first_names,
        last_names, password_hash, password_is_temporary, temporary_password_expires_at, created_at, updated_at)
      select user_id, user_reference, ${values.companyId}, ${values.environment}, email, username, first_names,
        last_names, ${values.passwordHash}, true, created_at + make_interval(days => ${TEMPORARY_PASSWORD_DAYS}),
        created_at, created_at
      from docs
    ),
    new_references as (
      insert into policy_references (policy_reference, policy_id)
      select policy_reference, policy_id from docs
      on conflict do nothing
      returning policy_id
    ),
    new_policies as (
      insert into policies (id, policy_reference, company_id, environment, user_id, status, version_count,
        current_start_at, current_end_at, auto_renew, billing_day, subscription_premium_pence,
        subscription_installments, first_start_at, billed_through_at, product_reference, search_text, created_at, updated_at)
      select policy_id, policy_reference, ${values.companyId}, ${values.environment}, user_id, 'active',
        case when ${withStatements} then 2 else 1 end,
        start_at, end_at, auto_renew, extract(day from start_on)::smallint,
        round((snapshot #>> '{pricing,subscription_premium}')::numeric * 100),
        (snapshot #>> '{pricing,subscription_installments}')::smallint, start_at,
        case when ${withStatements} then ${monthEnd} end, ${values.productReference}::text, milepost_policy_search_text(policy_reference, snapshot), created_at, created_at
      from docs where policy_id in (select policy_id from new_references)
      returning id
    ),
    new_versions as (
      insert into policy_versions (id, policy_id, sequence, version_type, snapshot, effective_at, created_at, term,
        statement_start_at, statement_end_at, usage_premium_pence)
      select version_id, policy_id, 1, 'nb', snapshot, start_at, created_at, 1, null, null, null
      from docs where policy_id in (select id from new_policies)
      union all
      select statement_id, policy_id, 2, 'st', null, end_at_month, end_at_month, null, start_at, end_at_month, usage
      from lines where policy_id in (select id from new_policies)
    ),
    new_statements as (
      insert into statements (id, policy_id, company_id, environment, period_start_at, period_end_at, journey_count,
        distance_metres, duration_seconds, usage_premium_pence, installments, subscription_premium_pence,
        total_premium_pence, credits_used_pence, billed_premium_pence, cap_credit_pence,
        free_distance_credit_pence, created_at)
      select statement_id, policy_id, ${values.companyId}, ${values.environment}, start_at, end_at_month,
        1 + i % 40, (1 + i % 40) * 8000, (1 + i % 40) * 900, usage, 1, subscription, usage + subscription,
        credits, usage + subscription - cap - free - credits, cap, free, end_at_month
      from lines where policy_id in (select id from new_policies)
    )
    select count(*) as policies from new_policies`.execute(trx);
  return Number(result.rows[0]?.policies ?? 0);
}

/**
 * The journeys of the batch's policies (`from` to `to`, found by their ids' range), in their current
 * billing periods: from the latest billing date before today (days 29–31 fall on the last day of
 * shorter months), or the term's start if later, up to now. Each journey has its own slot of the
 * period (whole seconds): it starts in the slot's first half and lasts at most that half, so none
 * overlaps the next; 6 to 16 m/s on the way. Written in policy and start order, so the primary key
 * and the (policy_id, start_at) index grow at their right edge. How many were written.
 */
async function insertJourneys(
  trx: Executor,
  values: {
    companyId: string;
    environment: string;
    from: number;
    to: number;
    ids: IdPrefixes;
    journeys: number;
    at: Date;
  },
): Promise<number> {
  const at = sql`${values.at}::timestamptz`;
  const idOf = (prefix: string, index: number) => `${prefix}${index.toString(16).padStart(12, '0')}`;
  const result = await sql`
    insert into journeys (id, company_id, environment, policy_id, policy_reference, policy_version_id,
      route, route_precision, point_count, start_at, end_at, distance_metres, distance_unit, usage_rate,
      usage_premium_pence, start_lat, start_lng, end_lat, end_lng, created_at)
    select (${values.ids.journey} || lpad(to_hex(t.i * ${MAX_JOURNEYS} + t.k), 12, '0'))::uuid,
      ${values.companyId}, ${values.environment}, t.id, t.policy_reference, t.version_id,
      -- A two-point route (the API keeps routes as encoded polylines).
      '_p~iF~ps|U_ulLnnqC', 5, 2, t.start_at, t.start_at + make_interval(secs => t.duration_seconds),
      t.metres, ${USAGE_UNIT}, ${USAGE_RATE}::numeric, ${ratedPence(sql`t.metres`)},
      51.3 + (t.h % 4000) / 10000.0, -0.5 + ((t.h >> 40) % 8000) / 10000.0,
      51.3 + ((t.h >> 8) % 4000) / 10000.0, -0.5 + ((t.h >> 48) % 8000) / 10000.0,
      -- Uploaded a few minutes after the journey ended.
      least(${at}, t.start_at + make_interval(secs => t.duration_seconds + 60 + (t.h >> 32) % 600))
    from (
      select p.id, p.policy_reference, p.version_id, p.i, k, draw.h,
        p.from_at + make_interval(secs => k * p.slot_seconds + draw.h % (p.slot_seconds / 2)) as start_at,
        draw.duration_seconds, draw.duration_seconds * (6 + (draw.h >> 24) % 11) as metres
      from (
        select p.id, p.policy_reference, (${values.ids.version} || right(p.id::text, 12))::uuid as version_id,
          ('x' || right(p.id::text, 12))::bit(48)::bigint as i, period.from_at,
          floor(extract(epoch from ${at} - period.from_at) / ${values.journeys})::bigint as slot_seconds
        from policies p
        cross join lateral (select (${at} at time zone 'Europe/London')::date as today_on,
          date_trunc('month', ${at} at time zone 'Europe/London')::date as month_on) d
        cross join lateral (select d.month_on + least(p.billing_day,
          extract(day from d.month_on + interval '1 month' - interval '1 day')::int) - 1 as billing_on) this_month
        cross join lateral (select greatest(p.current_start_at, (case when this_month.billing_on < d.today_on
            then this_month.billing_on
            else (d.month_on - interval '1 month')::date
              + least(p.billing_day, extract(day from d.month_on - interval '1 day')::int) - 1
          end)::timestamp at time zone 'Europe/London') as from_at) period
        where p.id between ${idOf(values.ids.policy, values.from)}::uuid and ${idOf(values.ids.policy, values.to)}::uuid
        order by p.id
      ) p
      -- Lateral, so that each policy's journeys follow it, in id order: no sort of the journeys.
      cross join lateral generate_series(0, ${values.journeys - 1} + 0 * p.i) as k
      cross join lateral (select hashint8extended(p.i * ${MAX_JOURNEYS} + k, 2) & 9223372036854775807 as h) h0
      cross join lateral (select h0.h, 1 + (h0.h >> 12) % least(p.slot_seconds / 2 - 1, 3600) as duration_seconds) draw
      where p.slot_seconds >= 4
    ) t`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

/** The snapshot naming `productReference`, when there is one. */
function productSnapshot(
  snapshot: RawBuilder<unknown>,
  productReference: string | null,
): RawBuilder<unknown> {
  return productReference === null
    ? snapshot
    : sql`jsonb_set(${snapshot}, '{policy,product_reference}', to_jsonb(${productReference}::text))`;
}

/** The seeded versions' usage rate and unit (the example's): journeys are rated at them. */
const USAGE_RATE = String(POLICY_INPUT_EXAMPLE.pricing.usage_rate);
const USAGE_UNIT = POLICY_INPUT_EXAMPLE.pricing.usage_unit;

/**
 * A journey's usage premium in pence as rating.ts computes it: rate × distance in the unit, rounded
 * once, half to even; in integers (the rate is exact decimal text: pence = metres × a / b).
 */
function ratedPence(metres: RawBuilder<unknown>): RawBuilder<number> {
  const [whole = '0', fraction = ''] = USAGE_RATE.split('.');
  const rateScaled = BigInt(whole + fraction);
  const metresPerUnitThousandths =
    USAGE_UNIT === 'km' ? 1_000_000n : BigInt(METRES_PER_MILE.replace('.', ''));
  let a = rateScaled * 100n * 1000n;
  let b = 10n ** BigInt(fraction.length) * metresPerUnitThousandths;
  const divisor = gcd(a, b);
  a /= divisor;
  b /= divisor;
  const n = sql`(${metres} * ${String(a)}::bigint)`;
  const d = sql`${String(b)}::bigint`;
  return sql<number>`(${n} / ${d} + case when 2 * (${n} % ${d}) > ${d}
    or (2 * (${n} % ${d}) = ${d} and (${n} / ${d}) % 2 = 1) then 1 else 0 end)`;
}

const gcd = (x: bigint, y: bigint): bigint => (y === 0n ? x : gcd(y, x % y));

/**
 * The snapshot as JSON text, the example's with each policy's own values (columns of `terms`) put
 * in: text concatenation, then one parse, costs half of merging jsonb objects.
 */
function snapshotSql(): RawBuilder<string> {
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

/** Age identifiers of current registrations: March (03–26) and September (51–76) of each year. */
const REGISTRATION_AGES = [
  ...Array.from({ length: 24 }, (_, k) => String(3 + k).padStart(2, '0')),
  ...Array.from({ length: 26 }, (_, k) => String(51 + k)),
];
/** How many registrations the format gives: 23² area letters × 50 ages × 23³ random letters. */
const REGISTRATIONS = 23 ** 5 * REGISTRATION_AGES.length;

/** The registration numbered `draws.v` (0 ≤ v < REGISTRATIONS), its digits in mixed radix. */
function registration(): RawBuilder<string> {
  const letter = (divisor: number) =>
    `substr('${REG_LETTERS}', 1 + ((d.v / ${String(divisor)}) % 23)::int, 1)`;
  return sql.raw(
    [letter(1), letter(23), 'a.value', `' '`, letter(26_450), letter(608_350), letter(13_992_050)].join(
      ' || ',
    ),
  );
}
