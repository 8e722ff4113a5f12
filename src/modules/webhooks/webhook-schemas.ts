import { Type, type Static } from 'typebox';
import { MAX_URL_LENGTH } from './rules/url-safety.ts';

const eventTypeList = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 50,
  description:
    'Event types to receive (see the `webhooks` section of this document); absent or null: every type. `webhook.test` cannot be listed: it is sent on request.',
  examples: [['policy.created', 'policy.cancelled']],
});

const url = Type.String({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  description:
    'Where events are POSTed. Production: https, and the host must resolve (a name DNS does not know answers 422) and not to a loopback, private or link-local address (checked again at every delivery). Sandbox is held to the same rules, except that it takes a name DNS does not know yet; it also allows http and loopback or private addresses only where the operator sets `WEBHOOKS_ALLOW_PRIVATE=true` (for a service run locally). No credentials in the URL; no redirects are followed.',
  examples: ['https://hooks.example.com/milepost'],
});

const description = Type.String({ maxLength: 500, description: 'A note for your own use.' });

export const CreateWebhookSchema = Type.Object(
  { url, events: Type.Optional(eventTypeList), description: Type.Optional(description) },
  { additionalProperties: false },
);
export type CreateWebhook = Static<typeof CreateWebhookSchema>;

export const UpdateWebhookSchema = Type.Object(
  {
    url: Type.Optional(url),
    events: Type.Optional(Type.Union([eventTypeList, Type.Null()])),
    description: Type.Optional(Type.Union([description, Type.Null()])),
    enabled: Type.Optional(
      Type.Boolean({
        description:
          'false stops deliveries (pending ones are ended); true resumes them and forgets the failing streak.',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1, description: 'The fields to change; at least one.' },
);
export type UpdateWebhook = Static<typeof UpdateWebhookSchema>;

const isoOrNull = (text: string) =>
  Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: text });

const webhookProperties = {
  id: Type.String({ description: 'The endpoint id.', examples: ['we_3kTq9xVbR1mZpL0a'] }),
  url: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  events: Type.Union([Type.Array(Type.String()), Type.Null()], {
    description: 'Subscribed event types, sorted; null: every type.',
  }),
  enabled: Type.Boolean(),
  disabled_reason: Type.Union([Type.Literal('manual'), Type.Literal('failing'), Type.Null()], {
    description:
      '`failing`: every delivery failed for 3 days, so Milepost disabled it and emailed the company.',
  }),
  environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')]),
  previous_secret_expires_at: isoOrNull(
    'After a rotation: until when the previous secret still signs (beside the new one).',
  ),
  failing_since: isoOrNull('Start of the current run of failed attempts; null after a success.'),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
};

export const WebhookSchema = Type.Object(webhookProperties, {
  $id: 'WebhookEndpoint',
  description: 'A webhook endpoint. Its signing secret is shown only when created or rotated.',
});
export type WebhookView = Static<typeof WebhookSchema>;

export const WebhookWithSecretSchema = Type.Object(
  {
    ...webhookProperties,
    secret: Type.String({
      description:
        'The signing secret (`whsec_` + base64 key), as Standard Webhooks libraries take it. Shown in this answer only; keep it safe.',
      examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    }),
  },
  { $id: 'WebhookEndpointWithSecret' },
);
export type WebhookWithSecretView = Static<typeof WebhookWithSecretSchema>;

export const WebhookListSchema = Type.Object({
  webhooks: Type.Array(Type.Ref('WebhookEndpoint'), { description: 'Oldest first.' }),
});

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ description: 'The delivery id.', examples: ['wd_Zb81nQ0xYt5cLw2e'] }),
    webhook_id: Type.String(),
    event_id: Type.String({ format: 'uuid', description: 'Also the `webhook-id` header of every attempt.' }),
    event_type: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')], {
      description:
        '`failed`: every scheduled attempt failed (or the endpoint was disabled); retry it by hand.',
    }),
    attempt_count: Type.Integer({ minimum: 0 }),
    next_attempt_at: isoOrNull('When a pending delivery is (next) attempted; null otherwise.'),
    last_attempt_at: isoOrNull('Start of the latest attempt.'),
    last_response_status_code: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    delivered_at: isoOrNull('When a 2xx answer was received.'),
    created_at: Type.String({ format: 'date-time' }),
    attempts: Type.Array(
      Type.Object({
        attempt: Type.Integer({ minimum: 1 }),
        started_at: Type.String({ format: 'date-time' }),
        duration_ms: Type.Integer({
          minimum: 0,
          description: 'Milliseconds until the answer (or the failure).',
        }),
        status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed')]),
        response_status_code: Type.Union([Type.Integer(), Type.Null()], {
          description: 'Null when no HTTP answer came (refused address, DNS, connection, timeout).',
        }),
        response_body: Type.Union([Type.String(), Type.Null()], {
          description: 'The first 1 KiB of the answer.',
        }),
        error: Type.Union([Type.String(), Type.Null()]),
      }),
      { description: 'Every attempt, oldest first.' },
    ),
  },
  { $id: 'WebhookDelivery', description: 'One event sent to one endpoint, with its attempts.' },
);
export type DeliveryView = Static<typeof DeliverySchema>;

export const DeliveryListSchema = Type.Object({
  deliveries: Type.Array(Type.Ref('WebhookDelivery'), { description: 'Newest first.' }),
  next_cursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass as `after` for the next (older) page; null on the last.',
  }),
});

export const DeliveriesQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    after: Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$', description: 'A `next_cursor`.' })),
    status: Type.Optional(
      Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
    ),
  },
  { additionalProperties: false },
);

export const WebhookParamsSchema = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
export const DeliveryParamsSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  delivery_id: Type.String({ minLength: 1, maxLength: 100 }),
});
export const EventParamsSchema = Type.Object({
  event_id: Type.String({
    format: 'uuid',
    description: 'The event id (`id` in a delivery, `webhook-id` header).',
  }),
});

export const ReplayBodySchema = Type.Union(
  [
    Type.Object(
      {
        webhook_id: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 100,
            description: 'Send to this endpoint only (even if it does not subscribe to the type).',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'Optional.' },
);

export const TestResultSchema = Type.Object({
  event_id: Type.String({ format: 'uuid' }),
  delivery: Type.Ref('WebhookDelivery'),
});

export const ReplayResultSchema = Type.Object({
  event_id: Type.String({ format: 'uuid' }),
  deliveries: Type.Array(Type.Ref('WebhookDelivery'), {
    description: 'The deliveries now due, one per endpoint.',
  }),
});
