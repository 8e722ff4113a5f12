export {
  adjustmentAmountPence,
  cancellationAmountPence,
  carriedForward,
  COOLING_OFF_DAYS,
  inCoolingOff,
  MINIMUM_CHARGE_MINOR_UNITS,
  minimumChargeMinorUnits,
  remainingShare,
} from './payment-amounts.ts';
export { DEFAULT_RETRY_DAYS, isHardDecline, nextAttemptAt } from './dunning.ts';
export { refundFailureMessage } from './refund-failures.ts';
