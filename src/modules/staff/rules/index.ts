/** The staff module's pure rules: roles, the steps of a sign-in, TOTP codes. */
export {
  isStaffRole,
  STAFF_ACTIONS,
  STAFF_ROLES,
  staffMay,
  type StaffDecision,
  type StaffRole,
} from './roles.ts';
export { stageAfterPassword, type SessionStage } from './sign-in-steps.ts';
export { acceptedStep, enrolmentFor, newTotpSecret, type TotpEnrolment } from './totp.ts';
