export type { AccountTables, Account, Credentials, TokenSubject } from './account-repository.ts';
export { findPolicyholderContact } from './account-repository.ts';
export {
  createAccountService,
  normaliseEmail,
  normaliseLogin,
  TEMPORARY_PASSWORD_DAYS,
  type AccountService,
  type AccountOutcome,
  type PreparedPassword,
} from './account-service.ts';
export {
  hashPassword,
  verifyPassword,
  generateTemporaryPassword,
  setPasswordHashingConcurrency,
} from './passwords.ts';
export { userReferences } from './account-references.ts';
export { getPolicyholderName, policyholderContacts } from './policyholder-contacts.ts';
export { countPolicyholders } from './policyholder-count.ts';
