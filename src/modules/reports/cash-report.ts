import type { Executor } from '../../schema.ts';
import { addDays, londonMidnight } from '../../platform/london-calendar.ts';
import { fromPence, poundsText, toPence } from '../../platform/money.ts';
import type { DataEnvironment, Tenant } from '../companies/index.ts';
import { listCashPayments, type CashPaymentRow } from './cash-repository.ts';
import {
  CASH_DAY_COLUMNS,
  CASH_PAYMENT_COLUMNS,
  type CashDayView,
  type CashPayment,
  type CashTotalsView,
} from './cash-schemas.ts';
import { csvLine, type CsvValue } from '../../platform/csv.ts';
import { createCashSummary, isInDunning, londonDayOf, type CashTotals } from './rules/cash-summary.ts';

/** The columns holding money, in either part. */
const MONEY_COLUMNS: ReadonlySet<string> = new Set([
  'amount',
  'refunded_amount',
  'billed',
  'charged',
  'refunded',
  'collected',
  'pending',
  'outstanding',
  'in_dunning',
  'refunds_outstanding',
]);

/** Payments read per query: large enough that round trips do not dominate, small enough for constant memory. */
export const CASH_BATCH_SIZE = 2000;

export interface CashReportRequest {
  readonly tenant: Tenant;
  readonly companyReference: string;
  readonly environment: DataEnvironment;
  /** London calendar days, both included (checked by `cashRange`). */
  readonly fromOn: string;
  readonly toOn: string;
  readonly format: 'json' | 'csv';
  /** What to include; CSV holds one table, so it never asks for `all`. */
  readonly part: 'all' | 'payments' | 'summary';
  readonly generatedAt: Date;
  readonly batchSize?: number;
}

function paymentView(r: CashPaymentRow): CashPayment {
  return {
    day: londonDayOf(r.cashAt),
    payment_reference: r.id,
    kind: r.kind,
    purpose: r.purpose,
    status: r.status,
    amount: fromPence(r.amountPence),
    refunded_amount: fromPence(r.refundedPence),
    currency: r.currency,
    provider: r.provider,
    provider_payment_reference: r.providerPaymentId,
    refund_of: r.refundOf,
    policy_reference: r.policyReference,
    policy_version_reference: r.policyVersionId,
    version_type: r.versionType,
    statement_start_date: r.statementStartAt,
    statement_end_date: r.statementEndAt,
    decline_code: r.declineCode,
    attempts: r.attempts,
    in_dunning: isInDunning({ kind: r.kind, status: r.status, hasNextAttempt: r.nextAttemptAt !== null }),
    next_attempt_at: r.nextAttemptAt,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    method_type: r.methodType,
    settled_at: r.settledAt,
  };
}

function totalsView(t: CashTotals): CashTotalsView {
  return {
    charges: t.chargeCount,
    refunds: t.refundCount,
    billed: fromPence(t.billedPence),
    charged: fromPence(t.chargedPence),
    refunded: fromPence(t.refundedPence),
    collected: fromPence(t.collectedPence),
    pending: fromPence(t.pendingPence),
    outstanding: fromPence(t.outstandingPence),
    in_dunning: fromPence(t.inDunningPence),
    refunds_outstanding: fromPence(t.refundOutstandingPence),
  };
}

/**
 * The cash report as text chunks, one per batch of payments, read by keyset so that a long range
 * streams in constant memory (the per-day summary grows with the days only). The first batch is read
 * before this resolves: a failure to read then is an ordinary error answer, not a cut-off stream.
 */
export async function openCashReport(
  db: Executor,
  request: CashReportRequest,
): Promise<AsyncIterable<string>> {
  const batchSize = request.batchSize ?? CASH_BATCH_SIZE;
  const range = {
    fromAt: londonMidnight(request.fromOn),
    toAt: londonMidnight(addDays(request.toOn, 1)),
  };
  const first = await listCashPayments(db, request.tenant, range, undefined, batchSize);
  const summary = createCashSummary(request.fromOn, request.toOn);

  /** Each batch's payments, added to the summary as they pass. */
  async function* batches(): AsyncGenerator<CashPayment[]> {
    let batch = first;
    for (;;) {
      const views: CashPayment[] = [];
      for (const row of batch) {
        const view = paymentView(row);
        summary.add({
          day: view.day,
          kind: row.kind,
          status: row.status,
          amountPence: row.amountPence,
          hasNextAttempt: row.nextAttemptAt !== null,
        });
        views.push(view);
      }
      yield views;
      const last = batch.at(-1);
      if (batch.length < batchSize || last === undefined) return;
      batch = await listCashPayments(db, request.tenant, range, last.id, batchSize);
    }
  }

  const days = (): CashDayView[] => summary.days().map((d) => ({ day: d.day, ...totalsView(d) }));

  async function* json(): AsyncGenerator<string> {
    const head = {
      company_reference: request.companyReference,
      environment: request.environment,
      from: request.fromOn,
      to: request.toOn,
      generated_at: request.generatedAt.toISOString(),
    };
    const opening = JSON.stringify(head).slice(0, -1);
    if (request.part === 'summary') {
      for await (const _batch of batches());
    } else {
      yield `${opening},"payments":[`;
      let firstRow = true;
      for await (const views of batches()) {
        if (views.length === 0) continue;
        yield (firstRow ? '' : ',') + views.map((v) => JSON.stringify(v)).join(',');
        firstRow = false;
      }
      yield ']';
    }
    const tail =
      request.part === 'payments'
        ? ''
        : `,"days":${JSON.stringify(days())},"totals":${JSON.stringify(totalsView(summary.totals()))}`;
    yield `${request.part === 'summary' ? opening : ''}${tail}}`;
  }

  /** Amounts in pounds with 2 decimals, as the bordereau writes them (`12.30`). */
  const cell = (value: unknown, column: string): CsvValue =>
    typeof value === 'number' && MONEY_COLUMNS.has(column) ? poundsText(toPence(value)) : (value as CsvValue);

  async function* csv(): AsyncGenerator<string> {
    if (request.part === 'summary') {
      for await (const _batch of batches());
      const lines = [csvLine(CASH_DAY_COLUMNS)];
      for (const day of days()) lines.push(csvLine(CASH_DAY_COLUMNS.map((c) => cell(day[c], c))));
      const totals: CashDayView = { day: 'total', ...totalsView(summary.totals()) };
      lines.push(csvLine(CASH_DAY_COLUMNS.map((c) => cell(totals[c], c))));
      yield lines.join('');
      return;
    }
    yield csvLine(CASH_PAYMENT_COLUMNS);
    for await (const views of batches()) {
      if (views.length === 0) continue;
      yield views.map((v) => csvLine(CASH_PAYMENT_COLUMNS.map((c) => cell(v[c], c)))).join('');
    }
  }

  return request.format === 'csv' ? csv() : json();
}
