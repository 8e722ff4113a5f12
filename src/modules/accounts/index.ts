export type { AccountTables, Account } from './account-repository.ts';
export {
  createAccountService,
  normaliseEmail,
  TEMPORARY_PASSWORD_DAYS,
  type AccountService,
  type AccountOutcome,
  type PreparedPassword,
} from './account-service.ts';
export { hashPassword, verifyPassword } from './passwords.ts';
