import type { Generated } from 'kysely';
import { companyIdOfReference, forTenant, type Tenant } from '../companies/index.ts';
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
    /** Added by 0004-auth: bumped by every password change, which ends every session. */
    session_generation: Generated<number>;
    last_login_at: Date | null;
    /** Set when the account was erased (migration 0029): it names nobody and can never sign in. */
    erased_at: Date | null;
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
    .where(forTenant(tenant))
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
    .where(forTenant(tenant))
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
    .where(forTenant(tenant))
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.password_hash;
}

// ── Login (issue 4: policyholder authentication) ──────────────────────────────────────────────────

/** An account with what login needs: the password hash and the session generation. */
export interface Credentials {
  readonly account: Account;
  readonly passwordHash: string;
  readonly sessionGeneration: number;
}

/**
 * The account a login names: its username or its email (both matched lower-case, as they are stored).
 * Usernames and emails never collide in practice (a username has no `@`), but a username wins if they do.
 */
export async function findCredentialsByLogin(
  db: Executor,
  tenant: Tenant,
  login: string,
): Promise<Credentials | undefined> {
  const rows = await db
    .selectFrom('users')
    .select([...columns, 'password_hash', 'session_generation'])
    .where(forTenant(tenant))
    .where((eb) => eb.or([eb('username', '=', login), eb('email', '=', login)]))
    .execute();
  const row = rows.find((r) => r.username === login) ?? rows[0];
  return row === undefined
    ? undefined
    : { account: toAccount(row), passwordHash: row.password_hash, sessionGeneration: row.session_generation };
}

export async function findAccountByReference(
  db: Executor,
  tenant: Tenant,
  userReference: string,
): Promise<Account | undefined> {
  const row = await db
    .selectFrom('users')
    .select(columns)
    .where(forTenant(tenant))
    .where('user_reference', '=', userReference)
    .executeTakeFirst();
  return row === undefined ? undefined : toAccount(row);
}

/** Who an access token names, checked against the company and environment it claims. */
export interface TokenSubject {
  readonly userId: string;
  readonly companyId: string;
  readonly active: boolean;
  readonly sessionGeneration: number;
}

/**
 * Resolves a token's subject. Not tenant-scoped, because this is how a bearer request gets its tenant:
 * the user must belong to the company (by public reference) and environment the token names.
 */
export async function findTokenSubject(
  db: Executor,
  userReference: string,
  companyReference: string,
  environment: string,
): Promise<TokenSubject | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['users.id', 'users.company_id', 'users.active', 'users.session_generation'])
    .where('users.user_reference', '=', userReference)
    .where('users.company_id', '=', companyIdOfReference(db, companyReference))
    .where('users.environment', '=', environment)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : {
        userId: row.id,
        companyId: row.company_id,
        active: row.active,
        sessionGeneration: row.session_generation,
      };
}

/**
 * Sets a new password hash. A personal password confirms the account (idp status CONFIRMED); a
 * temporary one puts it back to FORCE_CHANGE_PASSWORD with a new expiry. Either way the session
 * generation moves on, so every access token issued before stops working.
 */
export async function updatePassword(
  db: Executor,
  tenant: Tenant,
  id: string,
  values: { passwordHash: string; temporaryExpiresAt: Date | null; at: Date },
): Promise<Account | undefined> {
  const temporary = values.temporaryExpiresAt !== null;
  const row = await db
    .updateTable('users')
    .set((eb) => ({
      password_hash: values.passwordHash,
      password_is_temporary: temporary,
      temporary_password_expires_at: values.temporaryExpiresAt,
      ...(temporary ? {} : { password_changed_at: values.at }),
      session_generation: eb('session_generation', '+', 1),
      updated_at: values.at,
    }))
    .where(forTenant(tenant))
    .where('id', '=', id)
    .returning(columns)
    .executeTakeFirst();
  return row === undefined ? undefined : toAccount(row);
}

/**
 * Records a login checked against the password of session generation `generation`; false (nothing
 * written) once the generation has moved on. The row stays locked until the caller's transaction ends,
 * so a password change waits for the login, or the login sees the change.
 */
export async function recordLogin(
  db: Executor,
  tenant: Tenant,
  id: string,
  generation: number,
  at: Date,
): Promise<boolean> {
  const row = await db
    .updateTable('users')
    .set({ last_login_at: at })
    .where(forTenant(tenant))
    .where('id', '=', id)
    .where('session_generation', '=', generation)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** A policyholder's address and first names, for the emails other modules send them. */
export async function findPolicyholderContact(
  db: Executor,
  userId: string,
): Promise<{ email: string; firstNames: string } | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['email', 'first_names'])
    .where('id', '=', userId)
    .executeTakeFirst();
  return row === undefined ? undefined : { email: row.email, firstNames: row.first_names };
}
