import { Zip, ZipDeflate } from 'fflate';
import type { Executor } from '../../schema.ts';
import { journeyFeature } from './subject-access-geojson.ts';
import {
  EXPORT_BATCH_ROWS,
  listDeliveries,
  listDevices,
  listMileageBudgets,
  listPaymentCustomers,
  listPolicies,
  listPolicyUsageYears,
  listPolicyVersionIds,
  listPolicyVersions,
  listSnapshotEmails,
  listUsageAlerts,
  pageAuditRecords,
  pageEmails,
  pageEvents,
  pageJourneyRuleCredits,
  pageJourneys,
  pageJourneyVoids,
  pageLoginSessions,
  pageOdometerReadings,
  pagePayments,
  pagePolicyCredits,
  pagePositions,
  pageRefreshTokens,
  pageResetCodes,
  pageStatements,
  type Subject,
  type SubjectPolicy,
} from './subject-access-repository.ts';

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

/** The person found, as `findSubject` answers. */
export interface FoundSubject {
  readonly subject: Subject;
  readonly account: Record<string, unknown>;
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
  'payments',
  'emails',
  'audit_records',
  'events',
  'webhook_deliveries',
] as const;
export type ExportSection = (typeof EXPORT_SECTIONS)[number];

const NOTES = [
  'Every record Milepost holds about this policyholder, one section per kind of record; `contents` (at the end) counts each.',
  'Times are UTC (ISO 8601). Amounts ending in `_pence` are in pence; distances ending in `_metres` in metres.',
  'A journey’s `route` is a Google encoded polyline at `route_precision` decimal places; the .zip form of this export has the routes as GeoJSON.',
  'Passwords, reset codes and session tokens are stored only as one-way hashes and are not shown; bodies of emails that carried a temporary password or a reset code are withheld (`body_withheld`).',
  'Card numbers are never held by Milepost: payments show the card’s brand and last four digits where known.',
];

type Row = Record<string, unknown>;
type ById = { id: string };
type JourneyKey = { start_at: Date; journey_reference: string };

/** Keyset pages: `fetch` gets the last row of the previous page; a short page is the last. */
async function* pages<R>(fetch: (after?: R) => Promise<R[]>): AsyncGenerator<R[]> {
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

const key = (name: string) => JSON.stringify(name);

/**
 * The subject access document as JSON text, written as it is read: a page of rows at a time, so a
 * person with millions of positions costs a page of memory, not the document. Sections are read one
 * after another (not in one snapshot): a row written meanwhile may or may not appear.
 */
export async function* subjectAccessJson(
  db: Executor,
  found: FoundSubject,
  generatedAt: Date,
  options: ExportOptions = {},
): AsyncGenerator<string> {
  const { subject } = found;
  const counts = Object.fromEntries(EXPORT_SECTIONS.map((s) => [s, 0])) as Record<ExportSection, number>;

  /** `"name": [ …records, one a line… ]`, counting them. */
  async function* array(name: ExportSection, batches: AsyncIterable<Row[]>): AsyncGenerator<string> {
    yield `,\n  ${key(name)}: [`;
    let first = true;
    for await (const batch of batches) {
      let text = '';
      for (const record of batch) {
        text += `${first ? '\n    ' : ',\n    '}${JSON.stringify(record)}`;
        first = false;
      }
      counts[name] += batch.length;
      if (text !== '') yield text;
    }
    yield first ? ']' : '\n  ]';
  }

  const policyRows = await listPolicies(db, subject);
  const policies: SubjectPolicy[] = policyRows.map((p) => ({
    id: p.id,
    reference: p.record.policy_reference,
  }));
  const policyIds = policies.map((p) => p.id);
  const policyReferences = policies.map((p) => p.reference);
  const referenceOf = new Map(policies.map((p) => [p.id, p.reference]));
  const policyReference = (policyId: string | null): string | null =>
    policyId === null ? null : (referenceOf.get(policyId) ?? null);

  yield `{\n  "generated_at": ${JSON.stringify(generatedAt.toISOString())}`;
  yield `,\n  "subject": ${JSON.stringify({
    user_reference: subject.userReference,
    company_reference: subject.companyReference,
    company_name: subject.companyName,
    environment: subject.environment,
  })}`;
  yield `,\n  "notes": ${JSON.stringify(NOTES)}`;
  yield `,\n  "account": ${JSON.stringify(found.account)}`;

  yield* array('payment_customers', once(listPaymentCustomers(db, subject)));
  yield* array(
    'login_sessions',
    pages((after?: ById) => pageLoginSessions(db, subject, after)),
  );
  yield* array(
    'refresh_tokens',
    pages((after?: ById) => pageRefreshTokens(db, subject, after)),
  );
  yield* array(
    'password_reset_codes',
    pages((after?: ById) => pageResetCodes(db, subject, after)),
  );

  // Policies with every version (each a full snapshot of the policy object as it stood).
  yield* array(
    'policies',
    concat(
      policyRows.map(
        (policy) =>
          async function* () {
            const versions = await listPolicyVersions(db, policy.id);
            counts.policy_versions += versions.length;
            yield [{ ...policy.record, versions }];
          },
      ),
    ),
  );

  yield* array(
    'journeys',
    concat(
      policyIds.map((policyId) => () => pages((after?: JourneyKey) => pageJourneys(db, policyId, after))),
    ),
  );
  yield* array(
    'journey_voids',
    pages((after?: ById) => pageJourneyVoids(db, policyIds, after)),
  );
  yield* array(
    'journey_rule_credits',
    pages((after?: ById) => pageJourneyRuleCredits(db, policyIds, after)),
  );

  const devices = await listDevices(db, policyIds);
  counts.device_bindings = devices.reduce((n, d) => n + d.record.bindings.length, 0);
  yield* array('devices', once(Promise.resolve(devices.map((d) => d.record))));
  yield* array(
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

  yield* array(
    'statements',
    mapPages(
      pages((after?: ById) => pageStatements(db, policyIds, after)),
      (s) => {
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
        if (odometer !== null) counts.statement_odometers += 1;
        return {
          policy_version_reference: s.id,
          policy_reference: policyReference(s.policy_id),
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
          credits_used_pence: s.credits_used_pence,
          brought_forward_pence: s.brought_forward_pence,
          carried_forward_pence: s.carried_forward_pence,
          billed_premium_pence: s.billed_premium_pence,
          capped_days:
            typeof s.capped_days === 'string' ? (JSON.parse(s.capped_days) as unknown) : s.capped_days,
          payment_reference: s.payment_id,
          odometer,
          created_at: s.created_at,
        };
      },
    ),
  );
  yield* array(
    'policy_credits',
    mapPages(
      pages((after?: ById) => pagePolicyCredits(db, policyIds, after)),
      ({ policy_id, ...credit }) => ({
        policy_reference: policyReference(policy_id),
        ...credit,
      }),
    ),
  );
  yield* array(
    'policy_usage_years',
    mapPages(once(listPolicyUsageYears(db, policyIds)), ({ policy_id, ...year }) => ({
      policy_reference: policyReference(policy_id),
      ...year,
    })),
  );
  yield* array(
    'mileage_budgets',
    mapPages(once(listMileageBudgets(db, policyIds)), ({ policy_id, ...budget }) => ({
      policy_reference: policyReference(policy_id),
      ...budget,
    })),
  );
  yield* array(
    'usage_alerts',
    mapPages(once(listUsageAlerts(db, policyIds)), ({ policy_id, ...alert }) => ({
      policy_reference: policyReference(policy_id),
      ...alert,
    })),
  );

  yield* array(
    'payments',
    (async function* () {
      const known = new Map<string, Row | null>();
      for await (const batch of pages((after?: ById) => pagePayments(db, policyIds, after))) {
        const unknown = [
          ...new Set(batch.flatMap((p) => (p.payment_method_id === null ? [] : [p.payment_method_id]))),
        ].filter((id) => !known.has(id));
        for (const [id, card] of await cardsOf(subject, unknown, options)) known.set(id, card);
        yield batch.map((p) => ({
          payment_reference: p.id,
          policy_reference: policyReference(p.policy_id),
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
          card: p.payment_method_id === null ? null : (known.get(p.payment_method_id) ?? null),
          decline_code: p.decline_code,
          error_message: p.error_message,
          attempts: p.attempts,
          first_failed_at: p.first_failed_at,
          next_attempt_at: p.next_attempt_at,
          awaiting_new_card: p.awaiting_new_card,
          created_at: p.created_at,
          updated_at: p.updated_at,
        }));
      }
    })(),
  );

  // Emails to the account's address and to any address their policies named (it may have changed).
  const recipients = [
    ...new Set([subject.email.toLowerCase(), ...(await listSnapshotEmails(db, policyIds))]),
  ].sort();
  yield* array(
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

  yield* array(
    'events',
    (async function* () {
      for await (const batch of pages((after?: { sequence: number }) =>
        pageEvents(db, subject, policyReferences, after),
      )) {
        const deliveries = await listDeliveries(
          db,
          batch.map((e) => e.id),
        );
        counts.webhook_deliveries += deliveries.length;
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

  yield `,\n  "contents": ${JSON.stringify(counts)}\n}\n`;
}

async function* mapPages<R, T>(batches: AsyncIterable<R[]>, map: (row: R) => T): AsyncGenerator<T[]> {
  for await (const batch of batches) yield batch.map(map);
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

/** The journeys' routes as one GeoJSON FeatureCollection, written a page of journeys at a time. */
export async function* routesGeoJson(db: Executor, subject: Subject): AsyncGenerator<string> {
  const policies = await listPolicies(db, subject);
  yield '{"type":"FeatureCollection","features":[';
  let first = true;
  for (const policy of policies)
    for await (const batch of pages((after?: JourneyKey) => pageJourneys(db, policy.id, after))) {
      let text = '';
      for (const journey of batch) {
        const feature = journeyFeature(journey);
        if (feature === undefined) continue;
        text += `${first ? '\n' : ',\n'}${JSON.stringify(feature)}`;
        first = false;
      }
      if (text !== '') yield text;
    }
  yield '\n]}\n';
}

/**
 * A .zip of `export.json` (the document) and `routes.geojson`, deflated as it is read. fflate's
 * ZipDeflate is synchronous: each push hands its output to the callback before returning, so the
 * chunks are collected and yielded after each push, and the reader's pace is the database's.
 */
export async function* subjectAccessZip(
  db: Executor,
  found: FoundSubject,
  generatedAt: Date,
  options: ExportOptions = {},
): AsyncGenerator<Uint8Array> {
  const out: Uint8Array[] = [];
  let failure: Error | null = null;
  const zip = new Zip((error, chunk) => {
    if (error !== null) failure = error;
    else out.push(chunk);
  });
  const drain = function* (): Generator<Uint8Array> {
    if (failure !== null) throw failure;
    while (out.length > 0) {
      const chunk = out.shift();
      if (chunk !== undefined && chunk.length > 0) yield chunk;
    }
  };
  const encoder = new TextEncoder();
  const files: Array<[string, () => AsyncIterable<string>]> = [
    ['export.json', () => subjectAccessJson(db, found, generatedAt, options)],
    ['routes.geojson', () => routesGeoJson(db, found.subject)],
  ];
  for (const [name, text] of files) {
    const file = new ZipDeflate(name, { level: 6 });
    file.mtime = generatedAt;
    zip.add(file);
    for await (const chunk of text()) {
      file.push(encoder.encode(chunk));
      yield* drain();
    }
    file.push(new Uint8Array(0), true);
    yield* drain();
  }
  zip.end();
  yield* drain();
}
