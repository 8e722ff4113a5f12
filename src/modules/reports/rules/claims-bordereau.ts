/**
 * The claims bordereau's money for one claim and one month: its outstanding reserve at the month's start
 * and end, and what moved it in between. Pure: the sums come in, integer pence.
 *
 * An exposure's outstanding reserve is what its reserve movements (each change of the reserve, and the
 * release of what a final payment left unpaid) add up to, less what it has paid. So a month reconciles to
 * the penny: the outstanding reserve at the start plus the month's reserve movements less its payments is
 * the outstanding reserve at the end, and the end of one month is the start of the next.
 */

/** One claim's sums from its ledger, pence: before the month, and within it. */
export interface ClaimLedgerSums {
  /** Reserve movements before the month starts. */
  readonly movedBeforePence: number;
  /** Payments before the month starts. */
  readonly paidBeforePence: number;
  /** Reserve movements within the month. */
  readonly movedInPence: number;
  /** Payments within the month. */
  readonly paidInPence: number;
}

export interface ClaimBordereauAmounts {
  readonly openingOutstandingPence: number;
  readonly reserveMovementsPence: number;
  readonly paymentsPence: number;
  readonly closingOutstandingPence: number;
  /** Paid since the claim began, to the month's end. */
  readonly paidToDatePence: number;
  /** Paid to date plus what is outstanding at the month's end: the claim's cost as it stands. */
  readonly incurredPence: number;
}

export const ZERO_CLAIM_AMOUNTS: ClaimBordereauAmounts = Object.freeze({
  openingOutstandingPence: 0,
  reserveMovementsPence: 0,
  paymentsPence: 0,
  closingOutstandingPence: 0,
  paidToDatePence: 0,
  incurredPence: 0,
});

/** A claim's row: opening + movements − payments = closing, all integer pence. */
export function claimBordereauAmounts(sums: ClaimLedgerSums): ClaimBordereauAmounts {
  const opening = sums.movedBeforePence - sums.paidBeforePence;
  const closing = sums.movedBeforePence + sums.movedInPence - (sums.paidBeforePence + sums.paidInPence);
  const paidToDate = sums.paidBeforePence + sums.paidInPence;
  return {
    openingOutstandingPence: opening,
    reserveMovementsPence: sums.movedInPence,
    paymentsPence: sums.paidInPence,
    closingOutstandingPence: closing,
    paidToDatePence: paidToDate,
    incurredPence: paidToDate + closing,
  };
}

/** Whether a claim belongs on the month's bordereau: something outstanding at its start, or moved within it. */
export const onBordereau = (sums: ClaimLedgerSums): boolean =>
  sums.movedBeforePence - sums.paidBeforePence !== 0 || sums.movedInPence !== 0 || sums.paidInPence !== 0;

/** `into` plus `amounts`, column by column (the totals row). */
export function addClaimAmounts(
  into: ClaimBordereauAmounts,
  amounts: ClaimBordereauAmounts,
): ClaimBordereauAmounts {
  return {
    openingOutstandingPence: into.openingOutstandingPence + amounts.openingOutstandingPence,
    reserveMovementsPence: into.reserveMovementsPence + amounts.reserveMovementsPence,
    paymentsPence: into.paymentsPence + amounts.paymentsPence,
    closingOutstandingPence: into.closingOutstandingPence + amounts.closingOutstandingPence,
    paidToDatePence: into.paidToDatePence + amounts.paidToDatePence,
    incurredPence: into.incurredPence + amounts.incurredPence,
  };
}
