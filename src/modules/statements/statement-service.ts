import { createBillingRunService } from './billing-run-service.ts';
import { createCreditService } from './credit-service.ts';
import { createPolicyStatementService } from './policy-statement-service.ts';
import type { StatementDeps } from './statement-writer.ts';

export {
  BILL_CHUNK_QUEUE,
  BILLING_RUN_QUEUE,
  FINAL_STATEMENT_QUEUE,
  type BillingFailure,
  type BillingRunCounts,
} from './billing-run-service.ts';
export type { StatementView } from './statement-views.ts';

/**
 * Statements: continuous periods, each journey billed exactly once (by the period holding its start,
 * or the next one for a late upload),
 * subscription installments due in the period, credits from the ledger, then the card charge after
 * commit. Automatic billing days and final statements on cancellation and lapse.
 */
export function createStatementService(deps: StatementDeps) {
  return {
    ...createPolicyStatementService(deps),
    ...createCreditService(deps),
    ...createBillingRunService(deps),
  };
}

export type StatementService = ReturnType<typeof createStatementService>;
