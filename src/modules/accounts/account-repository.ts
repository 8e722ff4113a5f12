import type { Generated } from 'kysely';
import type { Tenant } from '../companies/index.ts';
import type { Executor } from '../../schema.ts';

export interface AccountTables {
  users: {
    id: Generated<string>;
    user_reference: string;
    company_id: string;
    environment: string;
    email: string;
    username: string;
    first_names: string;
    last_names: string;
    password_hash: string;
    password_is_temporary: boolean;
    temporary_password_expires_at: Date | null;
    password_changed_at: Date | null;
    active: Generated<boolean>;
    created_at: Date;
    updated_at: Date;
  };
}

export interface Account {
  readonly id: string;
  readonly userReference: string;
  readonly email: string;
  readonly username: string;
  readonly firstNames: string;
  readonly lastNames: string;
  readonly passwordIsTemporary: boolean;
  readonly temporaryPasswordExpiresAt: Date | null;
  readonly active: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

const columns = [
  'id',
  'user_reference',
  'email',
  'username',
  'first_names',
  'last_names',
  'password_is_temporary',
  'temporary_password_expires_at',
  'active',
  'created_at',
  'updated_at',
] as const;

type Row = {
  id: string;
  user_reference: string;
  email: string;
  username: string;
  first_names: string;
  last_names: string;
  password_is_temporary: boolean;
  temporary_password_expires_at: Date | null;
  active: boolean;
  created_at: Date;
  updated_at: Date;
};

const toAccount = (row: Row): Account => ({
  id: row.id,
  userReference: row.user_reference,
  email: row.email,
  username: row.username,
  firstNames: row.first_names,
  lastNames: row.last_names,
  passwordIsTemporary: row.password_is_temporary,
  temporaryPasswordExpiresAt: row.temporary_password_expires_at,
  active: row.active,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export async function findAccountByEmail(
  db: Executor,
  tenant: Tenant,
  email: string,
): Promise<Account | undefined> {
  const row = await db
    .selectFrom('users')
    .select(columns)
    .where('company_id', '=', tenant.companyId)
    .where('environment', '=', tenant.environment)
    .where('email', '=', email)
    .executeTakeFirst();
  return row === undefined ? undefined : toAccount(row);
}

export async function findAccountById(
  db: Executor,
  tenant: Tenant,
  id: string,
): Promise<Account | undefined> {
  const row = await db
    .selectFrom('users')
    .select(columns)
    .where('company_id', '=', tenant.companyId)
    .where('environment', '=', tenant.environment)
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : toAccount(row);
}

export async function insertAccount(
  db: Executor,
  tenant: Tenant,
  values: {
    userReference: string;
    email: string;
    username: string;
    firstNames: string;
    lastNames: string;
    passwordHash: string;
    temporaryPasswordExpiresAt: Date;
    at: Date;
  },
): Promise<Account | undefined> {
  const row = await db
    .insertInto('users')
    .values({
      user_reference: values.userReference,
      company_id: tenant.companyId,
      environment: tenant.environment,
      email: values.email,
      username: values.username,
      first_names: values.firstNames,
      last_names: values.lastNames,
      password_hash: values.passwordHash,
      password_is_temporary: true,
      temporary_password_expires_at: values.temporaryPasswordExpiresAt,
      password_changed_at: null,
      created_at: values.at,
      updated_at: values.at,
    })
    // A clash on email or username inserts nothing (instead of aborting the caller's transaction);
    // the service then joins the account that won or tries another username.
    .onConflict((oc) => oc.doNothing())
    .returning(columns)
    .executeTakeFirst();
  return row === undefined ? undefined : toAccount(row);
}

/** The stored hash, for verifying a password; tenant-scoped like everything else. */
export async function findPasswordHash(
  db: Executor,
  tenant: Tenant,
  id: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('users')
    .select('password_hash')
    .where('company_id', '=', tenant.companyId)
    .where('environment', '=', tenant.environment)
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.password_hash;
}
