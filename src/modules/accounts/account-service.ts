import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import { randomToken } from '../../platform/crypto.ts';
import type { Tenant } from '../companies/index.ts';
import {
  findAccountByEmail,
  findAccountById,
  findAccountByReference,
  findCredentialsByLogin,
  findTokenSubject,
  insertAccount,
  recordLogin,
  updatePassword,
  type Account,
} from './account-repository.ts';
import { generateTemporaryPassword, generateUsername, hashPassword } from './passwords.ts';

export const TEMPORARY_PASSWORD_DAYS = 30;

export interface Person {
  readonly email: string;
  readonly firstNames: string;
  readonly lastNames: string;
}

/** A temporary password hashed ahead of the transaction (argon2id takes ~15 ms; no lock should wait for it). */
export interface PreparedPassword {
  readonly plain: string;
  readonly hash: string;
}

export type AccountOutcome =
  | { readonly kind: 'created'; readonly account: Account; readonly temporaryPassword: string }
  | { readonly kind: 'joined'; readonly account: Account };

/** Normalised for matching: one account per email per company and environment. */
export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

/** A login as typed (username or email): matched like the stored values, which are lower-case. */
export const normaliseLogin = (login: string): string => login.trim().toLowerCase();

/** Policyholder accounts: created with a policy, or joined by a later policy for the same email. */
export function createAccountService(deps: { db: Executor; clock: Clock }) {
  return {
    async preparePassword(): Promise<PreparedPassword> {
      const plain = generateTemporaryPassword();
      return { plain, hash: await hashPassword(plain) };
    },

    /**
     * In the caller's transaction: the existing account for this email, or a new one with a
     * temporary password that expires in 30 days (idp status FORCE_CHANGE_PASSWORD).
     */
    async createOrJoin(
      trx: Executor,
      tenant: Tenant,
      person: Person,
      password: PreparedPassword,
    ): Promise<AccountOutcome> {
      const email = normaliseEmail(person.email);
      const now = deps.clock.now();
      for (let attempt = 0; attempt < 8; attempt++) {
        const existing = await findAccountByEmail(trx, tenant, email);
        if (existing !== undefined) return { kind: 'joined', account: existing };
        const account = await insertAccount(trx, tenant, {
          userReference: randomToken('usr_', 12),
          email,
          username: generateUsername(person.firstNames, person.lastNames),
          firstNames: person.firstNames,
          lastNames: person.lastNames,
          passwordHash: password.hash,
          temporaryPasswordExpiresAt: new Date(now.getTime() + TEMPORARY_PASSWORD_DAYS * 86_400_000),
          at: now,
        });
        if (account !== undefined) return { kind: 'created', account, temporaryPassword: password.plain };
      }
      throw new Error('could not allocate a unique username');
    },

    /** Reads through `db`, which may be the caller's open transaction (on PGlite it must be). */
    findById: (db: Executor, tenant: Tenant, id: string) => findAccountById(db, tenant, id),

    /** The account a login (username or email, any case) names, with its password hash. */
    findCredentials: (db: Executor, tenant: Tenant, login: string) =>
      findCredentialsByLogin(db, tenant, normaliseLogin(login)),

    findByReference: (db: Executor, tenant: Tenant, userReference: string) =>
      findAccountByReference(db, tenant, userReference),

    /** An access token's subject, if that user exists in the company and environment the token names. */
    findTokenSubject: (userReference: string, companyReference: string, environment: string) =>
      findTokenSubject(deps.db, userReference, companyReference, environment),

    /** Sets a personal password (hashed by the caller): the account is CONFIRMED and every session ends. */
    async setPersonalPassword(trx: Executor, tenant: Tenant, id: string, passwordHash: string) {
      return updatePassword(trx, tenant, id, {
        passwordHash,
        temporaryExpiresAt: null,
        at: deps.clock.now(),
      });
    },

    /**
     * Replaces the password with a new temporary one that expires in 30 days (FORCE_CHANGE_PASSWORD
     * again); every session ends. Returns the account with its new expiry.
     */
    async resetTemporaryPassword(trx: Executor, tenant: Tenant, id: string, password: PreparedPassword) {
      const now = deps.clock.now();
      return updatePassword(trx, tenant, id, {
        passwordHash: password.hash,
        temporaryExpiresAt: new Date(now.getTime() + TEMPORARY_PASSWORD_DAYS * 86_400_000),
        at: now,
      });
    },

    /** See recordLogin in account-repository.ts: false when the password has changed since it was checked. */
    recordLogin: (db: Executor, tenant: Tenant, id: string, generation: number) =>
      recordLogin(db, tenant, id, generation, deps.clock.now()),
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
