import type { Executor } from '../../schema.ts';
import * as billing from './subject-access-billing-repository.ts';
import {
  listDevices,
  pageJourneyRuleCredits,
  pageJourneys,
  pageJourneyVoids,
  pageOdometerReadings,
  pagePositions,
} from './subject-access-journey-repository.ts';
import {
  EXPORT_BATCH_ROWS,
  listPaymentCustomers,
  listPolicies,
  listPolicyVersionIds,
  listPolicyVersions,
  listSnapshotEmails,
  pageLoginSessions,
  pageRefreshTokens,
  pageResetCodes,
  type Subject,
} from './subject-access-repository.ts';
import {
  listDeliveries,
  pageAuditRecords,
  pageEmails,
  pageEvents,
} from './subject-access-trail-repository.ts';

/*
 * The sections of a subject access export, one generator per kind of record, each writing its
 * sections' JSON text a page of rows at a time (see `subjectAccessJson`, which composes them).
 */

/** Templates whose bodies carry a one-time secret: a temporary password or a password reset code. */
export const WITHHELD_BODY_TEMPLATES: ReadonlySet<string> = new Set([
  'welcome',
  'temporary-password',
  'reset-code',
]);

/** A card's brand and last four digits as the processor holds them; undefined when it cannot say. */
export type CardDetailsLookup = (
  subject: Subject,
  paymentMethodId: string,
) => Promise<
  | {
      brand: string | null;
      last4: string | null;
      exp_month: number | null;
      exp_year: number | null;
    }
  | undefined
>;

export interface ExportOptions {
  /**
   * Cards, from the processor (the built-in sandbox for the sandbox environment). Without it a payment
   * shows its payment method id only.
   */
  readonly cardDetails?: CardDetailsLookup | undefined;
}

/** Sections in the order they appear; `contents` counts each (nested rows under their own names). */
export const EXPORT_SECTIONS = [
  'payment_customers',
  'login_sessions',
  'refresh_tokens',
  'password_reset_codes',
  'policies',
  'policy_versions',
  'journeys',
  'journey_voids',
  'journey_rule_credits',
  'devices',
  'device_bindings',
  'positions',
  'odometer_readings',
  'statements',
  'statement_odometers',
  'policy_credits',
  'policy_usage_years',
  'mileage_budgets',
  'usage_alerts',
  'trip_scores',
  'trip_score_events',
  'score_months',
  'score_disputes',
  'renewal_prices',
  'direct_debit_mandates',
  'payments',
  'emails',
  'audit_records',
  'events',
  'webhook_deliveries',
  'documents',
  'crash_events',
  'claims',
  'quotes',
] as const;
export type ExportSection = (typeof EXPORT_SECTIONS)[number];

type Row = Record<string, unknown>;
type ById = { id: string };
type JourneyKey = { start_at: Date; journey_reference: string };
type PolicyRow = Awaited<ReturnType<typeof listPolicies>>[number];
type StatementRow = Awaited<ReturnType<typeof billing.pageStatements>>[number];
type PaymentRow = Awaited<ReturnType<typeof billing.pagePayments>>[number];

/** What every section reads from: the person, their policies, and the counts `contents` shows. */
export interface ExportContext {
  readonly db: Executor;
  readonly subject: Subject;
  readonly options: ExportOptions;
  readonly counts: Record<ExportSection, number>;
  readonly policyRows: readonly PolicyRow[];
  readonly policyIds: string[];
  readonly policyReferences: string[];
  /** The reference of one of their policies by id; null for none (or another's). */
  readonly policyReference: (policyId: string | null) => string | null;
}

/** The context of one export: their policies read once, for every section. */
export async function exportContext(
  db: Executor,
  subject: Subject,
  options: ExportOptions,
): Promise<ExportContext> {
  const policyRows = await listPolicies(db, subject);
  const referenceOf = new Map(policyRows.map((p) => [p.id, p.record.policy_reference]));
  return {
    db,
    subject,
    options,
    counts: Object.fromEntries(EXPORT_SECTIONS.map((s) => [s, 0])) as Record<ExportSection, number>,
    policyRows,
    policyIds: policyRows.map((p) => p.id),
    policyReferences: policyRows.map((p) => p.record.policy_reference),
    policyReference: (policyId) => (policyId === null ? null : (referenceOf.get(policyId) ?? null)),
  };
}

/** Keyset pages: `fetch` gets the last row of the previous page; a short page is the last. */
export async function* pages<R>(fetch: (after?: R) => Promise<R[]>): AsyncGenerator<R[]> {
  let after: R | undefined;
  for (;;) {
    const rows = await fetch(after);
    if (rows.length > 0) yield rows;
    if (rows.length < EXPORT_BATCH_ROWS) return;
    after = rows[rows.length - 1];
  }
}

async function* once<R>(rows: Promise<R[]>): AsyncGenerator<R[]> {
  yield await rows;
}

async function* concat<R>(parts: ReadonlyArray<() => AsyncIterable<R[]>>): AsyncGenerator<R[]> {
  for (const part of parts) yield* part();
}

async function* mapPages<R, T>(batches: AsyncIterable<R[]>, map: (row: R) => T): AsyncGenerator<T[]> {
  for await (const batch of batches) yield batch.map(map);
}

/** `"name": [ …records, one a line… ]`, counting them. */
export async function* array(
  ctx: ExportContext,
  name: ExportSection,
  batches: AsyncIterable<Row[]>,
): AsyncGenerator<string> {
  yield `,\n  ${JSON.stringify(name)}: [`;
  let first = true;
  for await (const batch of batches) {
    let text = '';
    for (const record of batch) {
      text += `${first ? '\n    ' : ',\n    '}${JSON.stringify(record)}`;
      first = false;
    }
    ctx.counts[name] += batch.length;
    if (text !== '') yield text;
  }
  yield first ? ']' : '\n  ]';
}

/** The processor's customer ids for them, and their sign-in sessions, tokens and reset codes. */
export async function* accountSections(ctx: ExportContext): AsyncGenerator<string> {
  const { db, subject } = ctx;
  yield* array(ctx, 'payment_customers', once(listPaymentCustomers(db, subject)));
  yield* array(
    ctx,
    'login_sessions',
    pages((after?: ById) => pageLoginSessions(db, subject, after)),
  );
  yield* array(
    ctx,
    'refresh_tokens',
    pages((after?: ById) => pageRefreshTokens(db, subject, after)),
  );
  yield* array(
    ctx,
    'password_reset_codes',
    pages((after?: ById) => pageResetCodes(db, subject, after)),
  );
}

/** Policies with every version (each a full snapshot of the policy object as it stood). */
export async function* policySections(ctx: ExportContext): AsyncGenerator<string> {
  yield* array(
    ctx,
    'policies',
    concat(
      ctx.policyRows.map(
        (policy) =>
          async function* () {
            const versions = await listPolicyVersions(ctx.db, policy.id);
            ctx.counts.policy_versions += versions.length;
            yield [{ ...policy.record, versions }];
          },
      ),
    ),
  );
}

/** Journeys (with their routes), voids and product-rule credits. */
export async function* journeySections(ctx: ExportContext): AsyncGenerator<string> {
  const { db, policyIds } = ctx;
  yield* array(
    ctx,
    'journeys',
    concat(
      policyIds.map((policyId) => () => pages((after?: JourneyKey) => pageJourneys(db, policyId, after))),
    ),
  );
  yield* array(
    ctx,
    'journey_voids',
    pages((after?: ById) => pageJourneyVoids(db, policyIds, after)),
  );
  yield* array(
    ctx,
    'journey_rule_credits',
    pages((after?: ById) => pageJourneyRuleCredits(db, policyIds, after)),
  );
}

/** Devices with their bindings to the policies, raw positions device by device, odometer readings. */
export async function* deviceSections(ctx: ExportContext): AsyncGenerator<string> {
  const { db, policyIds, policyReference } = ctx;
  const devices = await listDevices(db, policyIds);
  ctx.counts.device_bindings = devices.reduce((n, d) => n + d.record.bindings.length, 0);
  yield* array(ctx, 'devices', once(Promise.resolve(devices.map((d) => d.record))));
  yield* array(
    ctx,
    'positions',
    concat(
      devices.map(
        (device) =>
          async function* () {
            for await (const batch of pages((after?: { time: Date }) =>
              pagePositions(db, device.key, policyIds, after),
            ))
              yield batch.map(({ policy_id, ...position }) => ({
                device_id: device.record.device_id,
                policy_reference: policyReference(policy_id),
                ...position,
              }));
          },
      ),
    ),
  );
  yield* array(
    ctx,
    'odometer_readings',
    mapPages(
      pages((after?: ById) => pageOdometerReadings(db, policyIds, after)),
      ({ id, policy_id, ...reading }) => ({
        reading_reference: id,
        policy_reference: policyReference(policy_id),
        ...reading,
      }),
    ),
  );
}

/** A statement as the export shows it, with the odometer span where one was read. */
function statementRecord(ctx: ExportContext, s: StatementRow): Row {
  const odometer =
    s.odometer_statement_id === null
      ? null
      : {
          start_metres: s.odometer_start_metres,
          start_at: s.odometer_start_at,
          end_metres: s.odometer_end_metres,
          end_at: s.odometer_end_at,
          gps_metres: s.odometer_gps_metres,
        };
  if (odometer !== null) ctx.counts.statement_odometers += 1;
  return {
    policy_version_reference: s.id,
    policy_reference: ctx.policyReference(s.policy_id),
    period_start_at: s.period_start_at,
    period_end_at: s.period_end_at,
    billing_date: s.billing_date,
    final: s.final,
    journey_count: s.journey_count,
    distance_metres: s.distance_metres,
    duration_seconds: s.duration_seconds,
    usage_premium_pence: s.usage_premium_pence,
    installments: s.installments,
    subscription_premium_pence: s.subscription_premium_pence,
    total_premium_pence: s.total_premium_pence,
    cap_credit_pence: s.cap_credit_pence,
    annual_cap_credit_pence: s.annual_cap_credit_pence,
    free_distance_credit_pence: s.free_distance_credit_pence,
    minimum_top_up_pence: s.minimum_top_up_pence,
    score_adjustment_pence: s.score_adjustment_pence,
    score_months:
      typeof s.score_months === 'string' ? (JSON.parse(s.score_months) as unknown) : s.score_months,
    credits_used_pence: s.credits_used_pence,
    brought_forward_pence: s.brought_forward_pence,
    carried_forward_pence: s.carried_forward_pence,
    billed_premium_pence: s.billed_premium_pence,
    capped_days: typeof s.capped_days === 'string' ? (JSON.parse(s.capped_days) as unknown) : s.capped_days,
    payment_reference: s.payment_id,
    odometer,
    created_at: s.created_at,
  };
}

/** Statements, the credit ledger, distance charged per policy year, mileage budgets and their alerts. */
export async function* usageSections(ctx: ExportContext): AsyncGenerator<string> {
  const { db, policyIds, policyReference } = ctx;
  yield* array(
    ctx,
    'statements',
    mapPages(
      pages((after?: ById) => billing.pageStatements(db, policyIds, after)),
      (s) => statementRecord(ctx, s),
    ),
  );
  yield* array(
    ctx,
    'policy_credits',
    mapPages(
      pages((after?: ById) => billing.pagePolicyCredits(db, policyIds, after)),
      ({ policy_id, ...credit }) => ({
        policy_reference: policyReference(policy_id),
        ...credit,
      }),
    ),
  );
  yield* array(
    ctx,
    'policy_usage_years',
    mapPages(once(billing.listPolicyUsageYears(db, policyIds)), ({ policy_id, ...year }) => ({
      policy_reference: policyReference(policy_id),
      ...year,
    })),
  );
  yield* array(
    ctx,
    'mileage_budgets',
    mapPages(once(billing.listMileageBudgets(db, policyIds)), ({ policy_id, ...budget }) => ({
      policy_reference: policyReference(policy_id),
      ...budget,
    })),
  );
  yield* array(
    ctx,
    'usage_alerts',
    mapPages(once(billing.listUsageAlerts(db, policyIds)), ({ policy_id, ...alert }) => ({
      policy_reference: policyReference(policy_id),
      ...alert,
    })),
  );
  // Driving scores (each trip's score, its events, closed months, disputes) and how renewals were priced.
  const scores: ReadonlyArray<[ExportSection, AsyncIterable<Array<Row & { policy_id: string }>>]> = [
    ['trip_scores', pages((after?: { journey_id: string }) => billing.pageTripScores(db, policyIds, after))],
    ['trip_score_events', pages((after?: ById) => billing.pageTripScoreEvents(db, policyIds, after))],
    ['score_months', once(billing.listScoreMonths(db, policyIds))],
    ['score_disputes', pages((after?: ById) => billing.pageScoreDisputes(db, policyIds, after))],
    ['renewal_prices', pages((after?: ById) => billing.pageRenewalPrices(db, policyIds, after))],
  ];
  for (const [section, batches] of scores)
    yield* array(
      ctx,
      section,
      mapPages(batches, ({ policy_id, ...row }) => ({
        policy_reference: policyReference(policy_id),
        ...row,
      })),
    );
}

/**
 * Cards of payment methods, as the processor describes them (the built-in sandbox answers for the
 * sandbox environment): one request a payment method, and a processor that cannot answer leaves the
 * card unknown while the export still answers.
 */
async function cardsOf(
  subject: Subject,
  paymentMethodIds: readonly string[],
  options: ExportOptions,
): Promise<Map<string, Row | null>> {
  const out = new Map<string, Row | null>();
  const lookup = options.cardDetails;
  const source = subject.environment === 'sandbox' ? 'sandbox' : 'processor';
  for (const id of paymentMethodIds) {
    const card = lookup === undefined ? undefined : await lookup(subject, id).catch(() => undefined);
    out.set(id, card === undefined ? null : { ...card, source });
  }
  return out;
}

const paymentRecord = (ctx: ExportContext, p: PaymentRow, card: Row | null): Row => ({
  payment_reference: p.id,
  policy_reference: ctx.policyReference(p.policy_id),
  policy_version_reference: p.policy_version_id,
  kind: p.kind,
  purpose: p.purpose,
  status: p.status,
  amount_pence: p.amount_pence,
  refunded_pence: p.refunded_pence,
  currency: p.currency,
  refund_of_payment_reference: p.refund_of,
  provider: p.provider,
  provider_payment_id: p.provider_payment_id,
  provider_customer_id: p.provider_customer_id,
  payment_method_id: p.payment_method_id,
  card,
  decline_code: p.decline_code,
  error_message: p.error_message,
  attempts: p.attempts,
  first_failed_at: p.first_failed_at,
  next_attempt_at: p.next_attempt_at,
  awaiting_new_card: p.awaiting_new_card,
  method_type: p.method_type,
  mandate_id: p.mandate_id,
  collect_on: p.collect_on,
  notice_sent_at: p.notice_sent_at,
  settled_at: p.settled_at,
  created_at: p.created_at,
  updated_at: p.updated_at,
});

/** Direct Debit mandates, then charges and refunds (each card asked of the processor once). */
export async function* paymentSections(ctx: ExportContext): AsyncGenerator<string> {
  yield* array(
    ctx,
    'direct_debit_mandates',
    mapPages(
      pages((after?: ById) => billing.pageMandates(ctx.db, ctx.policyIds, after)),
      ({ policy_id, reference, ...mandate }) => ({
        ...mandate,
        policy_reference: ctx.policyReference(policy_id),
        mandate_reference: reference,
      }),
    ),
  );
  yield* array(
    ctx,
    'payments',
    (async function* () {
      const known = new Map<string, Row | null>();
      for await (const batch of pages((after?: ById) => billing.pagePayments(ctx.db, ctx.policyIds, after))) {
        const unknown = [
          ...new Set(batch.flatMap((p) => (p.payment_method_id === null ? [] : [p.payment_method_id]))),
        ].filter((id) => !known.has(id));
        for (const [id, card] of await cardsOf(ctx.subject, unknown, ctx.options)) known.set(id, card);
        yield batch.map((p) =>
          paymentRecord(
            ctx,
            p,
            p.payment_method_id === null ? null : (known.get(p.payment_method_id) ?? null),
          ),
        );
      }
    })(),
  );
}

/** Emails to them, and the audit trail of their records and of requests naming them. */
export async function* correspondenceSections(ctx: ExportContext): AsyncGenerator<string> {
  const { db, subject, policyIds, policyReferences, policyReference } = ctx;
  // Emails to the account's address and to any address their policies named (it may have changed).
  const recipients = [
    ...new Set([subject.email.toLowerCase(), ...(await listSnapshotEmails(db, policyIds))]),
  ].sort();
  yield* array(
    ctx,
    'emails',
    mapPages(
      pages((after?: { created_at: Date; id: string }) => pageEmails(db, subject, recipients, after)),
      ({ text_body, ...email }) => {
        const withheld = WITHHELD_BODY_TEMPLATES.has(email.template);
        return { ...email, text_body: withheld ? null : text_body, body_withheld: withheld };
      },
    ),
  );

  const versionIds = await listPolicyVersionIds(db, policyIds);
  const resources = [
    `user_reference:${subject.userReference}`,
    ...policyReferences.flatMap((r) => [`policy_reference:${r}`, `ref:${r}`]),
    ...versionIds.map((v) => `policy_version_reference:${v}`),
  ];
  yield* array(
    ctx,
    'audit_records',
    mapPages(
      pages((after?: { id: number }) =>
        pageAuditRecords(db, subject, { policyIds, resources }, recipients, policyReferences, after),
      ),
      ({ policy_id, table_name, before, after, ...audit }) => ({
        ...audit,
        policy_reference: policyReference(policy_id),
        table: table_name,
        before: typeof before === 'string' ? (JSON.parse(before) as unknown) : before,
        after: typeof after === 'string' ? (JSON.parse(after) as unknown) : after,
      }),
    ),
  );
}

/** Events naming them or their policies, each with its webhook deliveries. */
export async function* eventSections(ctx: ExportContext): AsyncGenerator<string> {
  yield* array(
    ctx,
    'events',
    (async function* () {
      for await (const batch of pages((after?: { sequence: number }) =>
        pageEvents(ctx.db, ctx.subject, ctx.policyReferences, after),
      )) {
        const deliveries = await listDeliveries(
          ctx.db,
          batch.map((e) => e.id),
        );
        ctx.counts.webhook_deliveries += deliveries.length;
        yield batch.map((e) => ({
          event_id: e.id,
          sequence: e.sequence,
          type: e.type,
          data: e.data,
          created_at: e.created_at,
          deliveries: deliveries
            .filter((d) => d.event_id === e.id)
            .map(({ event_id: _, ...delivery }) => delivery),
        }));
      }
    })(),
  );
}
