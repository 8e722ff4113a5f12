/** The auth module's pure rules, for other modules' rules. */
export {
  ACCOUNT_THROTTLE,
  ADDRESS_THROTTLE,
  EMAIL_THROTTLE,
  addressBlock,
  delayAfter,
  secondsBlocked,
  type ThrottlePolicy,
  type ThrottleState,
} from './throttle.ts';
export { checkPassword, parseCommonPasswords, type PasswordContext } from './password-policy.ts';
