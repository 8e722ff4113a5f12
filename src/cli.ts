import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { DataDirInUseError } from './platform/db/data-dir-lock.ts';
import type { Database } from './schema.ts';
// The pure list of roles, not the staff module's index: the index loads the whole module (1.4 s),
// and a mistyped command is answered before anything heavy is loaded.
import { isStaffRole, type StaffRole } from './modules/staff/rules/roles.ts';

const USAGE = `usage: npm run cli -- <command>

commands:
  company create --name NAME    create a company; prints its credentials as JSON (secrets shown once)
  company list                  list companies as JSON
  staff create --email EMAIL --role admin|operations|viewer
                                create a staff member; prints a one-time password for /console/ (shown once)
  staff list                    list staff members as JSON
  seed --policies N [--journeys J] [--company REF] [--environment sandbox|production]
                                N live policies with policyholders, for demos and benchmarks (a new
                                company unless --company names one; its secrets are printed once),
                                each with J journeys (default 0, at most 10,000) in its current
                                billing period, for the next billing run to bill
  emails [--to ADDRESS] [--limit N]
                                the newest emails in the outbox (with no SMTP_URL they are kept here,
                                temporary passwords and reset codes included)
  migrate                       apply pending migrations, create the job queues, and exit

The database is the service's: DATABASE_URL, or embedded PGlite in DATA_DIR (default ./data).
`;

/** A command line that names no command, or breaks one's rules: answered with exit code 2. */
class UsageError extends Error {}

/** What to do, read from the command line alone (no database opened yet). */
type Command =
  | { readonly kind: 'company create'; readonly name: string }
  | { readonly kind: 'company list' }
  | { readonly kind: 'staff create'; readonly email: string; readonly role: StaffRole }
  | { readonly kind: 'staff list' }
  | {
      readonly kind: 'seed';
      readonly policies: number;
      readonly journeys: number;
      readonly environment: 'sandbox' | 'production';
      readonly company: string | undefined;
    }
  | { readonly kind: 'emails'; readonly to: string | undefined; readonly limit: number }
  | { readonly kind: 'migrate' };

/** Each command and the flags it takes; any other flag is a mistake. */
const FLAGS: Readonly<Record<Command['kind'], readonly string[]>> = {
  'company create': ['name'],
  'company list': [],
  'staff create': ['email', 'role'],
  'staff list': [],
  seed: ['policies', 'journeys', 'company', 'environment'],
  emails: ['to', 'limit'],
  migrate: [],
};
const isCommandName = (name: string): name is Command['kind'] => Object.hasOwn(FLAGS, name);

/** The command line as a command, or `help`; throws UsageError for anything else. */
function parseCommand(argv: readonly string[]): Command | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        email: { type: 'string' },
        role: { type: 'string' },
        policies: { type: 'string' },
        journeys: { type: 'string' },
        company: { type: 'string' },
        environment: { type: 'string' },
        to: { type: 'string' },
        limit: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    // Unknown options and options without their value, in parseArgs' own words.
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { positionals, values } = parsed;
  if (values.help === true) return 'help';
  if (positionals.length === 0) throw new UsageError('');
  // Commands are one word (`seed`) or two (`company create`); nothing may follow them.
  const kind = [positionals.slice(0, 2).join(' '), positionals[0] ?? ''].find(
    (candidate) => isCommandName(candidate) && candidate.split(' ').length === positionals.length,
  );
  if (kind === undefined || !isCommandName(kind))
    throw new UsageError(`unknown command "${positionals.join(' ')}"`);
  const given = Object.keys(values).filter((flag) => values[flag as keyof typeof values] !== undefined);
  const stray = given.find((flag) => !FLAGS[kind].includes(flag));
  if (stray !== undefined) throw new UsageError(`${kind} does not take --${stray}`);

  switch (kind) {
    case 'company create': {
      const name = values.name?.trim() ?? '';
      if (name === '' || name.length > 200)
        throw new UsageError('company create needs --name NAME (1 to 200 characters)');
      return { kind, name };
    }
    case 'staff create': {
      const email = values.email?.trim() ?? '';
      const role = values.role;
      if (!/^[^\s@]+@[^\s@]+$/.test(email) || !isStaffRole(role))
        throw new UsageError('staff create needs --email EMAIL and --role admin, operations or viewer');
      return { kind, email, role };
    }
    case 'seed': {
      const policies = Number(values.policies ?? '1000');
      const journeys = Number(values.journeys ?? '0');
      const environment = values.environment ?? 'sandbox';
      if (
        !Number.isInteger(policies) ||
        policies < 1 ||
        policies > 10_000_000 ||
        !Number.isInteger(journeys) ||
        journeys < 0 ||
        journeys > 10_000 ||
        (environment !== 'sandbox' && environment !== 'production')
      )
        throw new UsageError(
          'seed needs --policies N (1 to 10,000,000), and optionally --journeys J (0 to 10,000), --company REF and --environment sandbox|production',
        );
      return { kind, policies, journeys, environment, company: values.company };
    }
    case 'emails': {
      const limit = Number(values.limit ?? 20);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new UsageError('emails --limit takes a whole number from 1 to 1000');
      return { kind, to: values.to, limit };
    }
    case 'company list':
    case 'staff list':
    case 'migrate':
      return { kind };
  }
}

/** Runs a command that has passed `parseCommand`: only now is the database side loaded and opened. */
async function run(command: Command, config: Config): Promise<void> {
  const [
    { createContainer },
    { migrations },
    { readSchemaSnapshot },
    { openDatabase },
    { migrateFromSnapshot },
  ] = await Promise.all([
    import('./container.ts'),
    import('./migrations/index.ts'),
    import('./migrations/snapshot.ts'),
    import('./platform/db/database.ts'),
    import('./platform/db/migrate.ts'),
  ]);
  if (command.kind === 'migrate') {
    // The service's own migration step: schema migrations, then every job queue, and nothing served.
    const container = await createContainer(loadConfig({ ...process.env, ROLE: 'api' }));
    await container.close();
    process.stdout.write('migrations and job queues are in place\n');
    return;
  }
  const [
    companiesModule,
    staffModule,
    { seedPolicies },
    { readOutbox },
    { systemClock },
    { withAuditActor },
  ] = await Promise.all([
    import('./modules/companies/index.ts'),
    import('./modules/staff/index.ts'),
    import('./seed.ts'),
    import('./modules/notifications/index.ts'),
    import('./platform/clock.ts'),
    import('./platform/db/audit-context.ts'),
  ]);
  const database = await openDatabase<Database>(
    config.databaseUrl === undefined
      ? { dataDir: `${config.dataDir}/pglite` }
      : { connectionString: config.databaseUrl },
  );
  try {
    await migrateFromSnapshot(database.db as never, migrations, await readSchemaSnapshot());
    const companies = companiesModule.createCompanyService({ db: database.db, clock: systemClock });
    const staff = () =>
      staffModule.createStaffService({
        db: database.db,
        clock: systemClock,
        settings: { sessionIdleHours: config.staffSessionIdleHours, issuer: config.app.brandName },
      });
    const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    switch (command.kind) {
      case 'company create':
        print(await companies.create(command.name));
        return;
      case 'company list':
        print((await companies.list({ limit: 500 })).companies);
        return;
      case 'staff list':
        print(await staff().list());
        return;
      case 'staff create': {
        const { email, role } = command;
        // Attributed like a staff action, to whoever ran the command on this machine.
        const created = await withAuditActor(
          {
            actor: `cli:${userInfo().username}`,
            staff_id: null,
            role: null,
            action: 'staff.create',
            resource: `email:${email}`,
            company_id: null,
            environment: null,
            request_id: `cli-${String(process.pid)}-${String(Date.now())}`,
            source_address: 'cli',
            at: new Date().toISOString(),
          },
          () => staff().create(email, role),
        );
        print({ ...created.staff, one_time_password: created.oneTimePassword });
        return;
      }
      case 'seed': {
        const { policies } = command;
        print(
          await seedPolicies(database.db, {
            policies,
            journeys: command.journeys,
            environment: command.environment,
            ...(command.company === undefined ? {} : { companyReference: command.company }),
            onProgress: (done) => process.stderr.write(`seeded ${String(done)} of ${String(policies)}\n`),
          }),
        );
        return;
      }
      case 'emails': {
        const emails = await readOutbox(database.db, { recipient: command.to, limit: command.limit });
        for (const email of emails.reverse()) {
          process.stdout.write(
            `--- ${email.createdAt.toISOString()} ${email.status} to ${email.recipient}\nSubject: ${email.subject ?? ''}\n\n${email.text ?? '(body not kept: sent by SMTP)'}\n\n`,
          );
        }
        if (emails.length === 0) process.stdout.write('no emails\n');
        return;
      }
    }
  } finally {
    await database.close();
  }
}

/**
 * Operator commands that work straight on the database, without the HTTP service. The command line is
 * checked first, so a mistake is named at once (exit code 2) whatever the database's state: held by a
 * running server, not reachable, not created yet.
 */
async function main(argv: readonly string[]): Promise<number> {
  let command;
  try {
    command = parseCommand(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message === '' ? '' : `milepost: ${error.message}\n\n`}${USAGE}`);
    return 2;
  }
  if (command === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  await run(command, loadConfig(process.env));
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `milepost: ${error instanceof ConfigError ? error.message : error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(
      error instanceof ConfigError
        ? 78
        : error instanceof DataDirInUseError
          ? 75
          : // DataDirUnwritableError, by name: database.ts is loaded only once a command needs it.
            error instanceof Error && error.name === 'DataDirUnwritableError'
            ? 73 // EX_CANTCREAT
            : 1,
    );
  },
);
