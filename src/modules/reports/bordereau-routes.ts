import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { eventLoopTurns } from '../../platform/concurrency.ts';
import { AppError } from '../../platform/errors.ts';
import { poundsText as pounds } from '../../platform/money.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import { londonDate, londonMidnight } from '../../platform/london-calendar.ts';
import type { Executor } from '../../schema.ts';
import { asTenant, findCompanyByReference } from '../companies/index.ts';
import { readBordereauBatch, type BordereauVersion } from './bordereau-repository.ts';
import { bordereauBatchRows } from './rules/bordereau-batch.ts';
import { csvCell, csvLine, type CsvValue } from '../../platform/csv.ts';
import type { ReportDeps } from './report-routes.ts';
import {
  addAmountsInto,
  bordereauAmounts,
  nextMonth,
  postcodeDistrict,
  ZERO_AMOUNTS,
  type BordereauAmounts,
} from './rules/bordereau-amounts.ts';

export { BORDEREAU_BATCH_ROWS } from './rules/bordereau-batch.ts';

export const BordereauQuerySchema = Type.Object(
  {
    company_reference: Type.String({ minLength: 1, maxLength: 100, description: 'The company reported on.' }),
    environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')], {
      description:
        'Required: a bordereau is of one environment, and production is the one an underwriter is due.',
    }),
    month: Type.String({
      pattern: '^[12][0-9]{3}-(0[1-9]|1[0-2])$',
      description: 'The Europe/London calendar month, `YYYY-MM`.',
      examples: ['2025-06'],
    }),
    format: Type.Optional(
      Type.Union([Type.Literal('csv'), Type.Literal('json')], {
        default: 'csv',
        description: 'Default `csv`.',
      }),
    ),
  },
  { additionalProperties: false },
);
type BordereauQuery = Static<typeof BordereauQuerySchema>;

/** The columns, in order: the CSV header and the JSON keys of a row. */
export const BORDEREAU_COLUMNS = [
  'company_reference',
  'environment',
  'policy_reference',
  'underwriter_reference',
  'underwriter_policy_reference',
  'policy_version_reference',
  'version_type',
  'effective_date',
  'statement_start_date',
  'statement_end_date',
  'policyholder_surname',
  'postcode_district',
  'vehicle_reg',
  'cover',
  'product_reference',
  'upfront_premium',
  'subscription_premium',
  'usage_premium',
  'caps_credit',
  'credits_used',
  'gross_premium',
  'ipt_rate',
  'ipt',
  'commission_rate',
  'commission',
  'net_premium',
  'fees',
] as const;

/** The money columns and the amount each shows: the totals row sums exactly these. */
const MONEY: ReadonlyArray<readonly [string, keyof BordereauAmounts]> = [
  ['upfront_premium', 'upfrontPence'],
  ['subscription_premium', 'subscriptionPence'],
  ['usage_premium', 'usagePence'],
  ['caps_credit', 'capsCreditPence'],
  ['credits_used', 'creditsUsedPence'],
  ['gross_premium', 'grossPence'],
  ['ipt', 'iptPence'],
  ['commission', 'commissionPence'],
  ['net_premium', 'netPence'],
  ['fees', 'feesPence'],
];

const text = Type.Union([Type.String(), Type.Null()]);
const money = Type.Number({ description: 'Pounds, 2 decimals.' });
const RowSchema = Type.Object({
  company_reference: Type.String(),
  environment: Type.String(),
  policy_reference: Type.String(),
  underwriter_reference: text,
  underwriter_policy_reference: text,
  policy_version_reference: Type.String(),
  version_type: Type.String({ enum: ['nb', 'mta', 'cn', 'rn', 'ls', 'st'] }),
  effective_date: Type.String({ format: 'date', description: 'Europe/London.' }),
  statement_start_date: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
  statement_end_date: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
  policyholder_surname: text,
  postcode_district: text,
  vehicle_reg: text,
  cover: text,
  product_reference: text,
  upfront_premium: money,
  subscription_premium: money,
  usage_premium: money,
  caps_credit: money,
  credits_used: money,
  gross_premium: money,
  ipt_rate: Type.Number({ description: 'Percent.' }),
  ipt: money,
  commission_rate: Type.Number({ description: 'Percent.' }),
  commission: money,
  net_premium: money,
  fees: money,
});
const TotalsSchema = Type.Object(Object.fromEntries(MONEY.map(([column]) => [column, money])));
export const BordereauJsonSchema = Type.Object({
  month: Type.String(),
  company_reference: Type.String(),
  environment: Type.String(),
  rows: Type.Array(RowSchema),
  totals: TotalsSchema,
});

const rate = (value: string | number | null | undefined): string => {
  if (value === null || value === undefined) return '0';
  const n = Number(value);
  return Number.isFinite(n) ? String(n) : '0';
};

/** The size of the pieces the body is written in (see bordereauChunks). */
const CHUNK_CHARACTERS = 32_768;

/**
 * How long a batch's rows are written before the event loop gets a turn (about 30 rows): long enough
 * that the turns cost nothing a row, short enough that the next batch's query, read ahead, is sent,
 * run and read while this batch is written rather than after it (see eventLoopTurns).
 */
export const REPORT_TURN_MS = 0.5;

/** A cell of text that is safe as it is in both formats: hex and hyphens, a date, a version type. */
const plain = (value: string | null): string => value ?? '';
const jsonPlain = (value: string | null): string => (value === null ? 'null' : `"${value}"`);
const jsonText = (value: string | null): string => (value === null ? 'null' : JSON.stringify(value));
const optionalDate = (at: Date | null): string | null => (at === null ? null : londonDate(at));

/**
 * A row's text, written straight into one string for each format: no array of cells, no object a row
 * beyond the amounts (a million rows make that much less garbage). The CSV's text cells go through
 * csvCell, which guards them against formulas; the ids, dates and version types are safe as they are
 * (hex and hyphens, digits and hyphens, two letters). Numbers are written as they are in both formats (a
 * leading minus is a number's sign, not a formula).
 */
interface RowWriter {
  /** The text before the first row, and the text that ends the rows and gives the totals. */
  readonly head: string;
  row(version: BordereauVersion, amounts: BordereauAmounts, first: boolean): string;
  tail(totals: BordereauAmounts): string;
}

function csvWriter(companyReference: string, environment: string): RowWriter {
  // The report's own columns, the same on every row, written once.
  const prefix = `${csvCell(companyReference)},${csvCell(environment)},`;
  return {
    head: csvLine(BORDEREAU_COLUMNS),
    row(version, amounts) {
      const s = version.source;
      return (
        `${prefix}${csvCell(version.policyReference)},${csvCell(version.underwriterReference)},` +
        `${csvCell(version.underwriterPolicyReference)},${version.id},${s.versionType},` +
        `${londonDate(s.effectiveAt)},${plain(optionalDate(version.statementStartAt))},` +
        `${plain(optionalDate(version.statementEndAt))},${csvCell(version.surname)},` +
        `${csvCell(postcodeDistrict(version.postcode))},${csvCell(version.vehicleReg)},` +
        `${csvCell(version.cover)},${csvCell(version.productReference)},` +
        `${pounds(amounts.upfrontPence)},${pounds(amounts.subscriptionPence)},${pounds(amounts.usagePence)},` +
        `${pounds(amounts.capsCreditPence)},${pounds(amounts.creditsUsedPence)},${pounds(amounts.grossPence)},` +
        `${rate(s.iptRate)},${pounds(amounts.iptPence)},${rate(s.commissionRate)},` +
        `${pounds(amounts.commissionPence)},${pounds(amounts.netPence)},${pounds(amounts.feesPence)}\r\n`
      );
    },
    tail(totals) {
      const text: CsvValue[] = BORDEREAU_COLUMNS.slice(0, TEXT_COLUMNS).map(() => null);
      text[0] = 'TOTAL';
      const sums = BORDEREAU_COLUMNS.slice(TEXT_COLUMNS).map((column) => {
        const key = MONEY.find(([name]) => name === column)?.[1];
        return key === undefined ? '' : pounds(totals[key]);
      });
      return `${csvLine(text).slice(0, -2)},${sums.join(',')}\r\n`;
    },
  };
}

function jsonWriter(month: string, companyReference: string, environment: string): RowWriter {
  const prefix = `{"company_reference":${JSON.stringify(companyReference)},"environment":${JSON.stringify(environment)},"policy_reference":`;
  return {
    head: `{"month":${JSON.stringify(month)},"company_reference":${JSON.stringify(companyReference)},"environment":${JSON.stringify(environment)},"rows":[`,
    row(version, amounts, first) {
      const s = version.source;
      return (
        `${first ? '' : ','}${prefix}${jsonText(version.policyReference)},` +
        `"underwriter_reference":${jsonText(version.underwriterReference)},` +
        `"underwriter_policy_reference":${jsonText(version.underwriterPolicyReference)},` +
        `"policy_version_reference":"${version.id}","version_type":"${s.versionType}",` +
        `"effective_date":"${londonDate(s.effectiveAt)}",` +
        `"statement_start_date":${jsonPlain(optionalDate(version.statementStartAt))},` +
        `"statement_end_date":${jsonPlain(optionalDate(version.statementEndAt))},` +
        `"policyholder_surname":${jsonText(version.surname)},` +
        `"postcode_district":${jsonText(postcodeDistrict(version.postcode))},` +
        `"vehicle_reg":${jsonText(version.vehicleReg)},"cover":${jsonText(version.cover)},` +
        `"product_reference":${jsonText(version.productReference)},` +
        `"upfront_premium":${pounds(amounts.upfrontPence)},"subscription_premium":${pounds(amounts.subscriptionPence)},` +
        `"usage_premium":${pounds(amounts.usagePence)},"caps_credit":${pounds(amounts.capsCreditPence)},` +
        `"credits_used":${pounds(amounts.creditsUsedPence)},"gross_premium":${pounds(amounts.grossPence)},` +
        `"ipt_rate":${rate(s.iptRate)},"ipt":${pounds(amounts.iptPence)},` +
        `"commission_rate":${rate(s.commissionRate)},"commission":${pounds(amounts.commissionPence)},` +
        `"net_premium":${pounds(amounts.netPence)},"fees":${pounds(amounts.feesPence)}}`
      );
    },
    tail(totals) {
      return `],"totals":{${MONEY.map(([column, key]) => `${JSON.stringify(column)}:${pounds(totals[key])}`).join(',')}}}`;
    },
  };
}

const TEXT_COLUMNS = 15;

/**
 * The report's text, batch by batch: the next batch is read while this one is written out, and a
 * batch is the most held at once (constant memory whatever the month's size).
 */
async function* bordereauChunks(
  db: Executor,
  query: Required<BordereauQuery>,
  companyId: string,
): AsyncGenerator<string> {
  const scope = {
    tenant: asTenant(companyId, query.environment),
    fromAt: londonMidnight(`${query.month}-01`),
    toAt: londonMidnight(`${nextMonth(query.month)}-01`),
  };
  const writer =
    query.format === 'csv'
      ? csvWriter(query.company_reference, query.environment)
      : jsonWriter(query.month, query.company_reference, query.environment);
  let charactersWritten = 0;
  let rowsWritten = 0;
  const read = (after: Parameters<typeof readBordereauBatch>[2]) => {
    const batch = readBordereauBatch(db, scope, after, bordereauBatchRows(charactersWritten, rowsWritten));
    // A client that goes away leaves the read ahead unawaited: its failure must not go unhandled.
    batch.catch(() => undefined);
    return batch;
  };
  yield writer.head;
  const turns = eventLoopTurns(REPORT_TURN_MS);
  const totals = { ...ZERO_AMOUNTS };
  let first = true;
  let pending: ReturnType<typeof read> | null = read(null);
  while (pending !== null) {
    const batch: Awaited<ReturnType<typeof read>> = await pending;
    pending = batch.next === null ? null : read(batch.next);
    let chunk = '';
    for (const version of batch.versions) {
      const amounts = bordereauAmounts(version.source);
      addAmountsInto(totals, amounts);
      chunk += writer.row(version, amounts, first);
      first = false;
      // Written in pieces of about 32 kB rather than a batch at once: a string or buffer over ~128 kB
      // goes to V8's large-object space, which only a full collection frees.
      if (chunk.length >= CHUNK_CHARACTERS) {
        charactersWritten += chunk.length;
        yield chunk;
        chunk = '';
      }
      if (turns.due()) await turns.take();
    }
    rowsWritten += batch.versions.count;
    charactersWritten += chunk.length;
    if (chunk !== '') yield chunk;
  }
  yield writer.tail(totals);
}

/** `GET /admin/reports/bordereau`: the month's premium transactions of a company, streamed. */
export function bordereauRoutes(deps: ReportDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/admin/reports/bordereau',
      {
        onRequest: deps.adminAuth,
        config: { auditReads: true },
        schema: {
          operationId: 'reports.bordereau',
          tags: ['admin'],
          summary: 'The premium bordereau of a month',
          description:
            'One row per policy version of the company and environment effective in the Europe/London calendar month (`nb`, `mta`, `cn`, `rn`, `ls`, and each statement `st`), ordered by effective time, then a totals row (CSV: `TOTAL` in the first column; JSON: `totals`). The gross premium is IPT-inclusive: IPT = gross × rate ÷ (100 + rate), commission its rate of the gross net of IPT, the underwriter net the rest; each amount is rounded once, half to even, and the totals are the sums of the rows. Streamed (CSV as an attachment). 404 for an unknown company; 422 for a bad month, environment or format. Admin key, or a staff session of `operations` or `admin`.',
          security: [{ adminKey: [] }],
          querystring: BordereauQuerySchema,
          response: {
            200: {
              description: 'The bordereau, as CSV (default) or JSON.',
              content: {
                'text/csv': { schema: Type.String({ description: 'RFC 4180, header row first.' }) },
                'application/json': { schema: BordereauJsonSchema },
              },
            },
            ...problemResponses(401, 403, 404, 422),
          },
        },
      },
      async (request, reply) => {
        await sendMonthReport(deps.db, request.query, reply, 'bordereau', bordereauChunks);
        return reply;
      },
    );
  };
}

/** The smallest part of a reply `sendMonthReport` uses (Fastify's reply, typed by its route). */
interface ReportReply {
  type(contentType: string): ReportReply;
  header(name: string, value: string): ReportReply;
  send(body: never): unknown;
}

/**
 * Streams a month's report of a company (404 for an unknown one) as the text `chunks` makes: JSON, or
 * CSV (the default) as an attachment named `<name>-<company>-<environment>-<month>.csv`.
 */
export async function sendMonthReport(
  db: Executor,
  asked: BordereauQuery,
  reply: ReportReply,
  name: string,
  chunks: (db: Executor, query: Required<BordereauQuery>, companyId: string) => AsyncIterable<string>,
): Promise<void> {
  const query = { ...asked, format: asked.format ?? 'csv' } as const;
  const companyId = (await findCompanyByReference(db, query.company_reference))?.id;
  if (companyId === undefined)
    throw new AppError('NOT_FOUND', `company ${query.company_reference} not found`);
  // The type provider types the body from the schema's JSON; a stream is sent as it is.
  const body = Readable.from(chunks(db, query, companyId), { objectMode: false }) as never;
  if (query.format === 'json') {
    reply.type('application/json; charset=utf-8').send(body);
    return;
  }
  const filename = `${name}-${query.company_reference}-${query.environment}-${query.month}.csv`.replace(
    /[^\w.-]/g,
    '_',
  );
  reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}"`)
    .send(body);
}
