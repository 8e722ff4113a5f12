import { Type, type TSchema } from 'typebox';

/**
 * Every event type the service emits, with the schema of its `data`. This is the contract with
 * webhook receivers: the OpenAPI document's `webhooks` section and docs/api.md are built from it, and a
 * test checks that every `recordEvent` call in the source names a type listed here. Fields may be
 * added to a payload (receivers must ignore unknown fields); none is removed or changes meaning.
 * Money is in major units (pounds) and instants are ISO 8601 in UTC, as in the API.
 */

const policyReference = Type.String({
  description: 'The policy’s public reference.',
  examples: ['amber-falcon-river'],
});
const versionReference = Type.String({
  format: 'uuid',
  description: 'The `policy_version_reference` of the version this change wrote.',
});
const isoInstant = (description: string) => Type.String({ format: 'date-time', description });
const usageUnit = Type.Union([Type.Literal('mile'), Type.Literal('km')], {
  description:
    'The unit of the distances named in the event: the product’s (a budget’s own unit for budgets).',
});
const pounds = (description: string) => Type.Number({ description: `${description} In pounds.` });

export interface EventDefinition {
  readonly type: string;
  readonly summary: string;
  readonly data: TSchema;
  /** Clients may subscribe to it (false only for the test event, sent to one endpoint on request). */
  readonly subscribable: boolean;
}

const define = (type: string, summary: string, properties: Record<string, TSchema>, subscribable = true) => ({
  type,
  summary,
  subscribable,
  data: Type.Object(properties, { description: `The \`data\` of a \`${type}\` event.` }),
});

const payment = {
  payment_reference: Type.String({ description: 'Milepost’s id of the payment record.' }),
  policy_reference: policyReference,
  policy_version_reference: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description: 'The version the payment is for (an `st` version for a statement), or null.',
  }),
  amount: pounds('The amount charged.'),
  currency: Type.String({ examples: ['GBP'] }),
};

const claim = {
  claim_reference: Type.String({ format: 'uuid', description: 'The claim: GET /claims/{claim_reference}.' }),
  policy_reference: policyReference,
  state: Type.String({
    description:
      'The claim’s state after the change: draft, open, settled, closed, rejected, withdrawn or reopened.',
  }),
  source: Type.String({
    description: '`crash` (a first notice of loss from a crash) or `reported` (by the policyholder).',
  }),
  occurred_at: isoInstant('When the incident happened.'),
  change: Type.String({
    description:
      'What changed: `first_notice`, `reported`, `confirmed`, `false_alarm`, `referred_to_staff`, `state:<state>`, `exposure:<kind>`, `reserve`, `payment`, `note`, `handler` or `photo`.',
  }),
};

export const EVENT_CATALOGUE: readonly EventDefinition[] = [
  define(
    'policy.created',
    'A policy was created, with its first (`nb`) version and the policyholder’s account.',
    {
      policy_reference: policyReference,
      policy_version_reference: versionReference,
      user_reference: Type.String({ description: 'The policyholder’s account.' }),
    },
  ),
  define('policy.adjusted', 'A mid-term adjustment wrote an `mta` version.', {
    policy_reference: policyReference,
    policy_version_reference: versionReference,
    effective_date: isoInstant('When the adjustment takes effect.'),
  }),
  define('policy.cancelled', 'The policy was cancelled (`cn` version).', {
    policy_reference: policyReference,
    policy_version_reference: versionReference,
    effective_date: isoInstant('When cover ends.'),
    reason: Type.Union([Type.String(), Type.Null()]),
  }),
  define(
    'policy.renewal_scheduled',
    'Renewal terms were stored; the policy renews automatically at the end of its term.',
    {
      policy_reference: policyReference,
      start_date: isoInstant('Start of the next term.'),
    },
  ),
  define('policy.renewed', 'The policy was renewed for a new term (`rn` version).', {
    policy_reference: policyReference,
    policy_version_reference: versionReference,
    start_date: Type.Optional(
      isoInstant('Start of the new term (present on renewals made through the API).'),
    ),
    automatic: Type.Optional(
      Type.Boolean({ description: 'True when the daily job renewed on stored terms.' }),
    ),
  }),
  define('policy.lapsed', 'The term ended without a renewal (`ls` version).', {
    policy_reference: policyReference,
    policy_version_reference: versionReference,
    effective_date: isoInstant('The end of the term.'),
  }),
  define('product.created', 'A product was registered, with its first rule set.', {
    product_reference: Type.String({ description: 'The product.' }),
    effective_from: isoInstant('When its rules start to bill.'),
  }),
  define('product.updated', 'A product got a new rule set (a new version).', {
    product_reference: Type.String({ description: 'The product.' }),
    effective_from: isoInstant('When the new rules start to bill; days before keep the older ones.'),
  }),
  define(
    'account.password_changed',
    'A policyholder set a new password (first login or reset); their sessions were revoked.',
    {
      user_reference: Type.String(),
    },
  ),
  define(
    'account.temporary_password_reissued',
    'A policyholder whose temporary password had expired asked for a new one (`RESEND_PASSWORD`); it was emailed to them.',
    { user_reference: Type.String() },
  ),
  define(
    'account.password_reset_requested',
    'A policyholder asked for a reset code (`FORGOT_PASSWORD`); the code was emailed to them.',
    {
      user_reference: Type.String(),
    },
  ),
  define(
    'account.erased',
    'A policyholder’s personal data was erased (`POST /admin/policyholders/{user_reference}/erase`): their account can no longer sign in, and their policies, journeys and emails now carry pseudonyms. Financial records remain.',
    {
      user_reference: Type.String({
        description: 'The erased account (the reference stays; it names no one).',
      }),
      erased_at: isoInstant('When the erasure was made.'),
      policy_references: Type.Array(policyReference, { description: 'The account’s policies, all erased.' }),
      documents_kept: Type.Array(
        Type.Object({
          document_id: Type.String({ format: 'uuid' }),
          kind: Type.String(),
          keep_until: isoInstant('Six years after the term ended.'),
          reason: Type.String(),
        }),
        {
          description:
            'Documents the law requires keeping (a term’s certificate and schedule), kept as issued with the reason; every other document was deleted.',
        },
      ),
      claims_kept: Type.Array(
        Type.Object({
          claim_reference: Type.String({ format: 'uuid' }),
          state: Type.String(),
          reason: Type.String(),
        }),
        {
          description: 'Claims in progress, kept whole under a legal hold recorded on each with its reason.',
        },
      ),
    },
  ),
  define(
    'journey.created',
    'A journey was recorded against a policy: posted by a client, cut from a device’s positions, estimated for a day a device was silent, or an odometer reconciliation billed by a statement.',
    {
      journey_reference: Type.String({ format: 'uuid' }),
      policy_reference: policyReference,
      provider_reference: Type.Union([Type.String(), Type.Null()]),
      distance_in_metres: Type.Integer({ minimum: 0 }),
      usage_premium: pounds('The journey’s usage premium.'),
      start_at: isoInstant('Start of the journey.'),
      end_at: isoInstant('End of the journey.'),
      source: Type.Union(
        [
          Type.Literal('api'),
          Type.Literal('device'),
          Type.Literal('estimate'),
          Type.Literal('odometer_reconciliation'),
        ],
        { description: 'Where it came from, as the journey’s `source`.' },
      ),
      device_id: Type.Union([Type.String(), Type.Null()], {
        description: 'The device of a `device` trip or an `estimate`; null otherwise.',
      }),
    },
  ),
  define(
    'journey.voided',
    'A journey was voided: it is never billed, or is credited on the next statement if it already was.',
    {
      journey_reference: Type.String({ format: 'uuid' }),
      policy_reference: policyReference,
      provider_reference: Type.Union([Type.String(), Type.Null()]),
      reason: Type.Union([Type.String(), Type.Null()]),
      usage_premium: pounds('The journey’s usage premium, now not billed or credited.'),
      billed: Type.Boolean({
        description: 'True when a statement had already billed it: the next statement credits it.',
      }),
    },
  ),
  define(
    'usage.budget_exceeded',
    'A policy’s journeys in a London month passed its mileage budget; the policyholder was emailed. Once a month.',
    {
      policy_reference: policyReference,
      month: Type.String({ description: 'The London month, `YYYY-MM`.', examples: ['2025-06'] }),
      distance_per_month: Type.Number({ description: 'The budget, in `usage_unit`.' }),
      usage_unit: usageUnit,
      distance_in_metres: Type.Integer({
        minimum: 0,
        description: 'Distance of the month’s journeys (not void) when the budget was found passed.',
      }),
      journey_reference: Type.String({ format: 'uuid', description: 'The journey that took it over.' }),
    },
  ),
  define(
    'score.month_closed',
    'A London calendar month ended for a policy with trips cut from its devices: its driving score is set. Once a policy and month, within the hour after the month ends.',
    {
      policy_reference: Type.Union([policyReference, Type.Null()]),
      month: Type.String({ description: 'The London month, `YYYY-MM`.', examples: ['2025-06'] }),
      score: Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()], {
        description:
          'Distance-weighted mean of the month’s trip scores, 1 decimal; null when no trip was scored.',
      }),
      provisional: Type.Boolean({ description: 'True when fewer than 50 miles of scored trips are in it.' }),
      distance_miles: Type.Number({ description: 'Distance of the scored trips, 2 decimals.' }),
      scored_trips: Type.Integer({ minimum: 0 }),
    },
  ),
  define(
    'score.dispute_decided',
    'Staff decided a policyholder’s dispute of a driving event: accepted (the event no longer counts; the trip’s and month’s scores are worked out again) or rejected. Once a dispute.',
    {
      policy_reference: policyReference,
      dispute_reference: Type.String({ format: 'uuid' }),
      decision: Type.Union([Type.Literal('accepted'), Type.Literal('rejected')]),
    },
  ),
  define(
    'usage.daily_cap_reached',
    'A policy’s journeys starting on one London day passed its product’s daily cap. Once a day.',
    {
      policy_reference: policyReference,
      date: Type.String({ description: 'The London day, `YYYY-MM-DD`.', examples: ['2025-06-14'] }),
      daily_cap_distance: Type.Number({
        description: 'The cap of the product version in force at the day’s London midnight, in `usage_unit`.',
      }),
      usage_unit: usageUnit,
      distance_in_metres: Type.Integer({ minimum: 0, description: 'The day’s distance so far.' }),
      journey_reference: Type.String({ format: 'uuid', description: 'The journey that took it over.' }),
    },
  ),
  define(
    'usage.annual_cap_reached',
    'A policy year’s distance (days counted at most at their cap) passed the product’s annual cap. Once a year.',
    {
      policy_reference: policyReference,
      policy_year_start: isoInstant('Start of the policy year: the current term’s `start_date`.'),
      annual_cap_distance: Type.Number({ description: 'The annual cap, in `usage_unit`.' }),
      usage_unit: usageUnit,
      distance_in_metres: Type.Integer({
        minimum: 0,
        description: 'The year’s distance counted towards the cap, whole metres.',
      }),
      journey_reference: Type.String({ format: 'uuid', description: 'The journey that took it over.' }),
    },
  ),
  define(
    'device.bound',
    'A device was bound to a policy (`POST /devices`); its positions from `bound_at` belong to that policy.',
    {
      device_id: Type.String({ description: 'The client’s name for the device.' }),
      kind: Type.Union([Type.Literal('obd'), Type.Literal('connected_car'), Type.Literal('phone')]),
      policy_reference: policyReference,
      bound_at: isoInstant('When the binding began.'),
    },
  ),
  define(
    'device.unbound',
    'A device’s binding to a policy ended: unbound (`DELETE /devices/{device_id}`), bound to another policy, or replaced by another device on its policy.',
    {
      device_id: Type.String({ description: 'The client’s name for the device.' }),
      policy_reference: policyReference,
      unbound_at: isoInstant('When the binding ended.'),
    },
  ),
  define(
    'device.offline',
    'A bound device sent nothing for its product’s `device_offline.after_hours` (24 hours without that rule). The policyholder is emailed when the product has the rule: its days without data are then estimated after the grace days.',
    {
      device_id: Type.String({ description: 'The client’s name for the device.' }),
      policy_reference: policyReference,
      last_seen_at: Type.Union([isoInstant('Time of its last position.'), Type.Null()], {
        description: 'Time of its last position; null when it sent none since it was bound.',
      }),
      offline_since: isoInstant('When the worker found it silent.'),
    },
  ),
  define('device.online', 'An offline device reported again.', {
    device_id: Type.String({ description: 'The client’s name for the device.' }),
    policy_reference: policyReference,
    last_seen_at: isoInstant('Time of its latest position.'),
  }),
  define(
    'telematics.odometer_discrepancy',
    'A statement’s odometer and GPS distances differ by more than its product’s `odometer_discrepancy_percent` of the odometer’s (either way). Recorded with the statement.',
    {
      policy_reference: policyReference,
      policy_version_reference: Type.String({
        format: 'uuid',
        description: 'The statement’s `policy_version_reference`.',
      }),
      start_reading_metres: Type.Integer({ minimum: 0, description: 'The reading the span starts at.' }),
      start_reading_time: isoInstant('When it was read.'),
      end_reading_metres: Type.Integer({ minimum: 0, description: 'The reading the span ends at.' }),
      end_reading_time: isoInstant('When it was read.'),
      odometer_distance_in_metres: Type.Integer({ minimum: 0, description: 'end − start reading.' }),
      gps_distance_in_metres: Type.Integer({
        minimum: 0,
        description: 'The policy’s journeys (not void, reconciliations aside) starting between the readings.',
      }),
      discrepancy_percent: Type.Number({
        description: '(odometer − GPS) / odometer × 100, to 2 decimals: negative when GPS is the larger.',
      }),
      odometer_discrepancy_percent: Type.Number({ description: 'The product’s threshold.' }),
    },
  ),
  define(
    'statement.created',
    'A statement was generated (on the billing day or on demand), with its `st` version.',
    {
      policy_reference: policyReference,
      policy_version_reference: versionReference,
      statement_start_date: isoInstant('Start of the period.'),
      statement_end_date: isoInstant('End of the period (inclusive).'),
      journey_count: Type.Integer({ minimum: 0 }),
      usage_premium: pounds('Sum of the journeys’ usage premiums.'),
      subscription_premium: pounds('Installments due in the period.'),
      total_premium: pounds('usage_premium + subscription_premium.'),
      billed_premium: pounds('What is charged after credits.'),
    },
  ),
  define(
    'claim.opened',
    'A claim was opened: a draft from a crash (first notice of loss; the policyholder is emailed to confirm or cancel), or a claim the policyholder reported.',
    claim,
  ),
  define(
    'claim.updated',
    'A claim changed: its state (other than to closed), answers, exposures, reserves, payments, notes, handler or photos, or an unanswered draft went to staff.',
    claim,
  ),
  define('claim.closed', 'A claim was closed.', claim),
  define(
    'credit.granted',
    'A goodwill credit was added to the policy’s ledger; the next statements bill that much less.',
    {
      policy_reference: policyReference,
      amount: pounds('The credit.'),
      reason: Type.String(),
    },
  ),
  define('payment.succeeded', 'A card payment succeeded.', {
    ...payment,
    provider_payment_reference: Type.Union([Type.String(), Type.Null()], {
      description: 'The processor’s payment intent id.',
    }),
  }),
  define(
    'payment.failed',
    'A card payment failed; the worker retries on its dunning schedule, or `RETRY_PAYMENT` retries now.',
    {
      ...payment,
      error_message: Type.String(),
      decline_code: Type.Union([Type.String(), Type.Null()]),
      next_attempt_at: Type.Union([isoInstant('When dunning tries again.'), Type.Null()]),
    },
  ),
  define('payment.refunded', 'A refund was made to the original card.', {
    ...payment,
    amount: pounds('The amount refunded.'),
    refund_of: Type.Union([Type.String(), Type.Null()], {
      description: 'The `payment_reference` of the charge refunded.',
    }),
  }),
  define(
    'payment.refund_failed',
    'A refund failed after it was sent (the card had expired, was cancelled, lost or stolen, or the issuer declined it): the money was not returned, the charge’s refunded amount no longer counts it, and the policyholder is owed it still.',
    {
      ...payment,
      amount: pounds('The amount that was not refunded.'),
      refund_of: Type.Union([Type.String(), Type.Null()], {
        description: 'The `payment_reference` of the charge it was to refund.',
      }),
      decline_code: Type.Union([Type.String(), Type.Null()], {
        description:
          'The processor’s reason, e.g. `expired_or_canceled_card`, `lost_or_stolen_card`, `declined`.',
      }),
      error_message: Type.String(),
    },
  ),
  define(
    'webhook.test',
    'Sent by `POST /webhooks/{id}/test` to that endpoint only. Cannot be subscribed to.',
    {
      webhook_id: Type.String({ description: 'The endpoint tested.' }),
      message: Type.String(),
    },
    false,
  ),
];

export const TEST_EVENT_TYPE = 'webhook.test';

/** The types a client may list in an endpoint's `events`. */
export const SUBSCRIBABLE_EVENT_TYPES: ReadonlySet<string> = new Set(
  EVENT_CATALOGUE.filter((e) => e.subscribable).map((e) => e.type),
);

/** The body of every delivery, with `data` as given. */
export function envelopeSchema(type: string, data: TSchema): TSchema {
  return Type.Object(
    {
      id: Type.String({
        format: 'uuid',
        description:
          'The event id; the same in every attempt and replay, and equal to the `webhook-id` header. Deduplicate on it.',
      }),
      type: Type.Literal(type),
      created: Type.Integer({ description: 'When the event happened: UNIX seconds.' }),
      environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')]),
      data,
    },
    { description: `A \`${type}\` delivery.` },
  );
}

const signatureHeaders = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The event id (also `id` in the body). Stable across retries: deduplicate on it.',
    schema: { type: 'string' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'UNIX seconds of this attempt. Refuse messages more than 5 minutes off your clock.',
    schema: { type: 'string' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Space-separated `v1,<base64>` signatures: HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded part of your `whsec_…` secret. Two during the 24 hours after a rotation. Verify with any Standard Webhooks library.',
    schema: { type: 'string' },
  },
];

/** The OpenAPI 3.1 `webhooks` object: one POST per event type, with its body schema. */
export function openApiWebhooks(): Record<string, unknown> {
  return Object.fromEntries(
    EVENT_CATALOGUE.map((event) => [
      event.type,
      {
        post: {
          operationId: `webhooks.${event.type}`,
          tags: ['webhook events'],
          summary: event.summary,
          description: `${event.summary} Signed as Standard Webhooks; a 2xx answer within 15 seconds acknowledges it, anything else is retried (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h).`,
          parameters: signatureHeaders,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: envelopeSchema(event.type, event.data) } },
          },
          responses: {
            '2XX': { description: 'Received. Any other answer, or none within 15 seconds, is retried.' },
          },
        },
      },
    ]),
  );
}
