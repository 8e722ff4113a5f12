/**
 * `GET /admin/reports/claims-bordereau`: a month's claims of a company with their reserves and payments,
 * streamed as the premium bordereau is (CSV or JSON, a batch of claims held at a time).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { eventLoopTurns } from '../../platform/concurrency.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import { londonDate, londonMidnight } from '../../platform/london-calendar.ts';
import { poundsText as pounds } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import { asTenant } from '../companies/index.ts';
import { BordereauQuerySchema, REPORT_TURN_MS, sendMonthReport } from './bordereau-routes.ts';
import { readClaimLedgerBatch, type ClaimLedger } from './claims-bordereau-repository.ts';
import type { ReportDeps } from './report-routes.ts';
import { nextMonth } from './rules/bordereau-amounts.ts';
import {
  addClaimAmounts,
  claimBordereauAmounts,
  onBordereau,
  ZERO_CLAIM_AMOUNTS,
  type ClaimBordereauAmounts,
} from './rules/claims-bordereau.ts';
import { csvLine, type CsvValue } from '../../platform/csv.ts';

/** Claims read at a time: a claim's row is small, so a batch is a few hundred kilobytes at most. */
export const CLAIMS_BORDEREAU_BATCH = 500;

const TEXT_COLUMNS = [
  'company_reference',
  'environment',
  'claim_reference',
  'policy_reference',
  'underwriter_reference',
  'underwriter_policy_reference',
  'state',
  'source',
  'incident_date',
  'reported_date',
  'at_fault',
] as const;

/** The money columns and the amount each shows: the totals row sums exactly these. */
const MONEY: ReadonlyArray<readonly [string, keyof ClaimBordereauAmounts]> = [
  ['opening_reserve', 'openingOutstandingPence'],
  ['reserve_movements', 'reserveMovementsPence'],
  ['payments', 'paymentsPence'],
  ['closing_reserve', 'closingOutstandingPence'],
  ['paid_to_date', 'paidToDatePence'],
  ['incurred', 'incurredPence'],
];

/** The columns, in order: the CSV header and the JSON keys of a row. */
export const CLAIMS_BORDEREAU_COLUMNS: readonly string[] = [
  ...TEXT_COLUMNS,
  ...MONEY.map(([column]) => column),
];

const text = Type.Union([Type.String(), Type.Null()]);
const money = Type.Number({ description: 'Pounds, 2 decimals.' });
const ClaimRowSchema = Type.Object({
  company_reference: Type.String(),
  environment: Type.String(),
  claim_reference: Type.String({ format: 'uuid' }),
  policy_reference: Type.String(),
  underwriter_reference: text,
  underwriter_policy_reference: text,
  state: Type.String({ description: 'The claim’s state when the report is made.' }),
  source: Type.String({ enum: ['crash', 'reported'] }),
  incident_date: Type.String({ format: 'date', description: 'Europe/London.' }),
  reported_date: Type.String({ format: 'date', description: 'Europe/London: when the claim was made.' }),
  at_fault: Type.Union([Type.Boolean(), Type.Null()], { description: 'Null until staff decide.' }),
  ...Object.fromEntries(MONEY.map(([column]) => [column, money])),
});
export const ClaimsBordereauJsonSchema = Type.Object({
  month: Type.String(),
  company_reference: Type.String(),
  environment: Type.String(),
  rows: Type.Array(ClaimRowSchema),
  totals: Type.Object(Object.fromEntries(MONEY.map(([column]) => [column, money]))),
});

const textCells = (context: { company: string; environment: string }, claim: ClaimLedger): CsvValue[] => [
  context.company,
  context.environment,
  claim.id,
  claim.policyReference,
  claim.underwriterReference,
  claim.underwriterPolicyReference,
  claim.state,
  claim.source,
  londonDate(claim.occurredAt),
  londonDate(claim.reportedAt),
  claim.atFault,
];

const moneyCells = (amounts: ClaimBordereauAmounts): string[] => MONEY.map(([, key]) => pounds(amounts[key]));

const jsonLiteral = (value: CsvValue): string =>
  value === null || value === undefined
    ? 'null'
    : typeof value === 'string'
      ? JSON.stringify(value)
      : String(value);

/** A JSON row: text columns as JSON values, money as the number text itself (exact pounds). */
function jsonRow(cells: readonly CsvValue[], amounts: readonly string[]): string {
  const parts = TEXT_COLUMNS.map((column, i) => `${JSON.stringify(column)}:${jsonLiteral(cells[i])}`);
  MONEY.forEach(([column], i) => parts.push(`${JSON.stringify(column)}:${amounts[i] ?? '0.00'}`));
  return `{${parts.join(',')}}`;
}

/** The report's text, batch by batch: the next batch is read while this one is written out. */
async function* claimsBordereauChunks(
  db: Executor,
  query: {
    company_reference: string;
    environment: 'sandbox' | 'production';
    month: string;
    format: 'csv' | 'json';
  },
  companyId: string,
): AsyncGenerator<string> {
  const context = { company: query.company_reference, environment: query.environment };
  const scope = {
    tenant: asTenant(companyId, query.environment),
    fromAt: londonMidnight(`${query.month}-01`),
    toAt: londonMidnight(`${nextMonth(query.month)}-01`),
  };
  const csv = query.format === 'csv';
  const read = (after: string | null) => {
    const batch = readClaimLedgerBatch(db, scope, after, CLAIMS_BORDEREAU_BATCH);
    // A client that goes away leaves the read ahead unawaited: its failure must not go unhandled.
    batch.catch(() => undefined);
    return batch;
  };
  yield csv
    ? csvLine(CLAIMS_BORDEREAU_COLUMNS)
    : `{"month":${JSON.stringify(query.month)},"company_reference":${JSON.stringify(query.company_reference)},"environment":${JSON.stringify(query.environment)},"rows":[`;
  const turns = eventLoopTurns(REPORT_TURN_MS);
  let totals = ZERO_CLAIM_AMOUNTS;
  let first = true;
  let pending: ReturnType<typeof read> | null = read(null);
  while (pending !== null) {
    const batch: Awaited<ReturnType<typeof read>> = await pending;
    pending = batch.next === null ? null : read(batch.next);
    let chunk = '';
    for (const claim of batch.claims) {
      if (!onBordereau(claim.sums)) continue;
      const amounts = claimBordereauAmounts(claim.sums);
      totals = addClaimAmounts(totals, amounts);
      const cells = textCells(context, claim);
      if (csv) chunk += csvLine([...cells, ...moneyCells(amounts)]);
      else {
        chunk += `${first ? '' : ','}${jsonRow(cells, moneyCells(amounts))}`;
        first = false;
      }
      if (turns.due()) await turns.take();
    }
    if (chunk !== '') yield chunk;
  }
  if (csv) {
    const blanks: CsvValue[] = TEXT_COLUMNS.map(() => null);
    blanks[0] = 'TOTAL';
    yield csvLine([...blanks, ...moneyCells(totals)]);
  } else {
    const sums = MONEY.map(([column, key]) => `${JSON.stringify(column)}:${pounds(totals[key])}`);
    yield `],"totals":{${sums.join(',')}}}`;
  }
}

/** `GET /admin/reports/claims-bordereau`: the month's claims of a company, with reserves and payments. */
export function claimsBordereauRoutes(deps: ReportDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/admin/reports/claims-bordereau',
      {
        onRequest: deps.adminAuth,
        config: { auditReads: true },
        schema: {
          operationId: 'reports.claimsBordereau',
          tags: ['admin'],
          summary: 'The claims bordereau of a month',
          description:
            'One row per claim of the company and environment with a reserve outstanding at the start of the Europe/London calendar month or a reserve movement or payment within it, in claim reference order, then a totals row (CSV: `TOTAL` in the first column; JSON: `totals`). `opening_reserve` is the reserve outstanding at the month’s start (reserves less payments), `reserve_movements` the month’s changes of reserves (raised, lowered, and what a final payment leaves unpaid released), `payments` the month’s payments, and `closing_reserve` = opening + movements − payments, to the penny; `paid_to_date` and `incurred` (paid to date + closing reserve) are at the month’s end. Streamed (CSV as an attachment). 404 for an unknown company; 422 for a bad month, environment or format. Admin key, or a staff session of `operations` or `admin`.',
          security: [{ adminKey: [] }],
          querystring: BordereauQuerySchema,
          response: {
            200: {
              description: 'The claims bordereau, as CSV (default) or JSON.',
              content: {
                'text/csv': { schema: Type.String({ description: 'RFC 4180, header row first.' }) },
                'application/json': { schema: ClaimsBordereauJsonSchema },
              },
            },
            ...problemResponses(401, 403, 404, 422),
          },
        },
      },
      async (request, reply) => {
        await sendMonthReport(deps.db, request.query, reply, 'claims-bordereau', claimsBordereauChunks);
        return reply;
      },
    );
  };
}
