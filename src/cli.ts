import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.ts';
import { migrations } from './migrations/index.ts';
import { createCompanyService } from './modules/companies/index.ts';
import { systemClock } from './platform/clock.ts';
import { openDatabase } from './platform/db/database.ts';
import { migrateToLatest } from './platform/db/migrate.ts';
import type { Database } from './schema.ts';

const USAGE = `usage: npm run cli -- <command>

commands:
  company create --name NAME    create a company; prints its credentials as JSON (secrets shown once)
  company list                  list companies as JSON
  migrate                       apply pending migrations and exit

The database is the service's: DATABASE_URL, or embedded PGlite in DATA_DIR (default ./data).
`;

/** Operator commands that work straight on the database, without the HTTP service. */
async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { name: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [group, action] = positionals;
  if (values.help === true || group === undefined) {
    process.stdout.write(USAGE);
    return group === undefined && values.help !== true ? 64 : 0;
  }
  const config = loadConfig(process.env);
  const database = await openDatabase<Database>(
    config.databaseUrl === undefined
      ? { dataDir: `${config.dataDir}/pglite` }
      : { connectionString: config.databaseUrl },
  );
  try {
    await migrateToLatest(database.db as never, migrations);
    const companies = createCompanyService({ db: database.db, clock: systemClock });
    if (group === 'migrate') return 0;
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
    process.exit(error instanceof ConfigError ? 78 : 1);
  },
);
