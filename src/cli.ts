import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.ts';
import { createContainer } from './container.ts';
import { migrations } from './migrations/index.ts';
import { createCompanyService } from './modules/companies/index.ts';
import { createStaffService, isStaffRole } from './modules/staff/index.ts';
import { seedPolicies } from './seed.ts';
import { readOutbox } from './modules/notifications/index.ts';
import { systemClock } from './platform/clock.ts';
import { withAuditActor } from './platform/db/audit-context.ts';
import { openDatabase } from './platform/db/database.ts';
import { DataDirInUseError } from './platform/db/data-dir-lock.ts';
import { migrateToLatest } from './platform/db/migrate.ts';
import type { Database } from './schema.ts';

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

/** Operator commands that work straight on the database, without the HTTP service. */
async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
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
  const [group, action] = positionals;
  if (values.help === true || group === undefined) {
    process.stdout.write(USAGE);
    return group === undefined && values.help !== true ? 64 : 0;
  }
  const config = loadConfig(process.env);
  if (group === 'migrate') {
    // The service's own migration step: schema migrations, then every job queue, and nothing served.
    const container = await createContainer(loadConfig({ ...process.env, ROLE: 'api' }));
    await container.close();
    process.stdout.write('migrations and job queues are in place\n');
    return 0;
  }
  const database = await openDatabase<Database>(
    config.databaseUrl === undefined
      ? { dataDir: `${config.dataDir}/pglite` }
      : { connectionString: config.databaseUrl },
  );
  try {
    await migrateToLatest(database.db as never, migrations);
    const companies = createCompanyService({ db: database.db, clock: systemClock });
    if (group === 'company' && action === 'create') {
      const name = values.name?.trim();
      if (name === undefined || name === '' || name.length > 200) {
        process.stderr.write('company create needs --name NAME (1 to 200 characters)\n');
        return 64;
      }
      process.stdout.write(`${JSON.stringify(await companies.create(name), null, 2)}\n`);
      return 0;
    }
    if (group === 'company' && action === 'list') {
      process.stdout.write(`${JSON.stringify((await companies.list({ limit: 500 })).companies, null, 2)}\n`);
      return 0;
    }
    if (group === 'staff') {
      const staff = createStaffService({
        db: database.db,
        clock: systemClock,
        settings: { sessionIdleHours: config.staffSessionIdleHours, issuer: config.app.brandName },
      });
      if (action === 'list') {
        process.stdout.write(`${JSON.stringify(await staff.list(), null, 2)}\n`);
        return 0;
      }
      const email = values.email?.trim() ?? '';
      if (action !== 'create' || !/^[^\s@]+@[^\s@]+$/.test(email) || !isStaffRole(values.role)) {
        process.stderr.write('staff create needs --email EMAIL and --role admin, operations or viewer\n');
        return 64;
      }
      const role = values.role;
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
        () => staff.create(email, role),
      );
      process.stdout.write(
        `${JSON.stringify({ ...created.staff, one_time_password: created.oneTimePassword }, null, 2)}\n`,
      );
      return 0;
    }
    if (group === 'seed') {
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
      ) {
        process.stderr.write(
          'seed needs --policies N (1 to 10,000,000), and optionally --journeys J (0 to 10,000), --company REF and --environment sandbox|production\n',
        );
        return 64;
      }
      const result = await seedPolicies(database.db, {
        policies,
        journeys,
        environment,
        ...(values.company === undefined ? {} : { companyReference: values.company }),
        onProgress: (done) => process.stderr.write(`seeded ${String(done)} of ${String(policies)}\n`),
      });
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return 0;
    }
    if (group === 'emails') {
      const limit = Number(values.limit ?? 20);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
        process.stderr.write('emails --limit takes a whole number from 1 to 1000\n');
        return 64;
      }
      const emails = await readOutbox(database.db, { recipient: values.to, limit });
      for (const email of emails.reverse()) {
        process.stdout.write(
          `--- ${email.createdAt.toISOString()} ${email.status} to ${email.recipient}\nSubject: ${email.subject ?? ''}\n\n${email.text ?? '(body not kept: sent by SMTP)'}\n\n`,
        );
      }
      if (emails.length === 0) process.stdout.write('no emails\n');
      return 0;
    }
    process.stderr.write(USAGE);
    return 64;
  } finally {
    await database.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `milepost: ${error instanceof ConfigError ? error.message : error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(error instanceof ConfigError ? 78 : error instanceof DataDirInUseError ? 75 : 1);
  },
);
