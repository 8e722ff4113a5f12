import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import type { Clock } from '../../platform/clock.ts';
import { AppError } from '../../platform/errors.ts';
import '../../platform/http/actor.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import type { Executor } from '../../schema.ts';
import {
  EXPORT_SECTIONS,
  subjectAccessJson,
  subjectAccessZip,
  type CardDetailsLookup,
} from './subject-access-export.ts';
import { findSubject } from './subject-access-repository.ts';

export interface SubjectAccessDeps {
  readonly db: Executor;
  readonly adminAuth: onRequestAsyncHookHandler;
  readonly clock: Clock;
  /** Card brand and last 4 of production payments, from the processor (optional: see the export). */
  readonly cardDetails?: CardDetailsLookup;
}

export const SubjectAccessParamsSchema = Type.Object(
  {
    user_reference: Type.String({
      minLength: 1,
      maxLength: 100,
      description:
        'The policyholder’s account (`user_reference` of the policy creation response); unique across companies and environments.',
    }),
  },
  { additionalProperties: false },
);

export const SubjectAccessQuerySchema = Type.Object(
  {
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('zip')], {
        default: 'json',
        description:
          '`json` (default): the document. `zip`: a .zip holding `export.json` (the same document) and `routes.geojson` (every journey’s route as a GeoJSON LineString feature of one FeatureCollection).',
      }),
    ),
  },
  { additionalProperties: false },
);

const record = Type.Object({}, { additionalProperties: true });
const records = (description: string) => Type.Array(record, { description });

/** The document's shape, for the API reference (the body is streamed, not serialised from it). */
export const SubjectAccessDocumentSchema = Type.Object(
  {
    generated_at: Type.String({ format: 'date-time' }),
    subject: Type.Object({
      user_reference: Type.String(),
      company_reference: Type.String(),
      company_name: Type.String(),
      environment: Type.String(),
    }),
    notes: Type.Array(Type.String(), { description: 'How to read the document.' }),
    account: Type.Object(
      {},
      {
        additionalProperties: true,
        description: 'The login account: email, username, names, password state and dates (never the hash).',
      },
    ),
    payment_customers: records('The processor’s customer ids for the person.'),
    login_sessions: records('Login challenge sessions: dates only.'),
    refresh_tokens: records(
      'Refresh tokens (signed-in sessions): family, dates and revocation; never the token or its hash.',
    ),
    password_reset_codes: records('Reset codes asked for: dates and attempts; never the code or its hash.'),
    policies: records(
      'Each policy with `versions`: every version with the full policy object (`snapshot`) as it stood.',
    ),
    journeys: records('Every journey with its encoded `route` and `route_precision`.'),
    journey_voids: records('Journeys voided, with the reason.'),
    journey_rule_credits: records('Product-rule credits (caps, free distance) per journey.'),
    devices: records('Devices bound to the person’s policies, with those `bindings` only.'),
    positions: records('Raw positions of the person’s policies, by device and time.'),
    odometer_readings: records('Odometer readings.'),
    statements: records('Statements, with the odometer span where one was read.'),
    policy_credits: records('The credit ledger: credits granted and used.'),
    policy_usage_years: records('Distance charged per policy year (annual caps).'),
    mileage_budgets: records('Monthly mileage budgets set.'),
    usage_alerts: records('Budget and cap alerts sent.'),
    trip_scores: records('The driving score of each trip cut from their devices (null under a mile).'),
    trip_score_events: records('Driving events of those trips: kind, time, place, speed, and their size.'),
    score_months: records('Closed months’ driving scores.'),
    score_disputes: records(
      'Their disputes of driving events: the reason, their words, and staff’s decision.',
    ),
    renewal_prices: records(
      'How each renewal was priced: the renewal, the equivalent new-business price and last year’s (ICOBS 6B).',
    ),
    payments: records(
      'Charges and refunds, with the payment method id and the `card` (brand, last 4) where known.',
    ),
    emails: records(
      'Emails sent to the person: template, subject, status, dates, and the text body unless withheld.',
    ),
    documents: records(
      'Documents issued for their policies (certificates, schedules, notices, statements, credit notes): kind, dates, SHA-256 and the PDF as base64 (`content_base64`).',
    ),
    audit_records: records('Staff and admin-key actions on the person’s records and requests naming them.'),
    events: records('Webhook events naming the person or their policies, with their `deliveries`.'),
    contents: Type.Record(Type.String(), Type.Integer(), {
      description: `Rows in each section: ${EXPORT_SECTIONS.map((s) => `\`${s}\``).join(', ')}.`,
    }),
  },
  { description: 'A subject access export.' },
);

/** `GET /admin/policyholders/:user_reference/export`: everything held about one policyholder. */
export function subjectAccessRoutes(deps: SubjectAccessDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/admin/policyholders/:user_reference/export',
      {
        onRequest: deps.adminAuth,
        config: { auditReads: true },
        schema: {
          operationId: 'policyholders.export',
          tags: ['admin'],
          summary: 'Export everything held about a policyholder (subject access)',
          description:
            'Every record about the person of `user_reference` (UK GDPR subject access): account, sign-in sessions (no secrets), policies with every version, journeys with their routes, voids, devices and their bindings, raw positions, odometer readings, statements, credits, mileage budgets and alerts, Direct Debit mandates, payments (card brand and last 4, never a card number), emails sent (bodies that carried a temporary password or reset code withheld), audit records and webhook events naming them. Streamed as it is read: a JSON document (default) or, with `format=zip`, a .zip of `export.json` and `routes.geojson`. `contents` (last) counts each section. 404 for an unknown `user_reference`. Admin key, or a staff session of `operations` or `admin`.',
          security: [{ adminKey: [] }],
          params: SubjectAccessParamsSchema,
          querystring: SubjectAccessQuerySchema,
          response: {
            200: {
              description: 'The export, as JSON (default) or a .zip (`format=zip`), as an attachment.',
              content: {
                'application/json': { schema: SubjectAccessDocumentSchema },
                'application/zip': {
                  schema: Type.String({
                    format: 'binary',
                    description: '`export.json` and `routes.geojson` (RFC 7946 FeatureCollection).',
                  }),
                },
              },
            },
            ...problemResponses(401, 403, 404, 422),
          },
        },
      },
      async (request, reply) => {
        const found = await findSubject(deps.db, request.params.user_reference);
        if (found === undefined)
          throw new AppError('NOT_FOUND', `policyholder ${request.params.user_reference} not found`);
        const generatedAt = deps.clock.now();
        const options = { cardDetails: deps.cardDetails };
        const stem = `subject-access-${found.subject.userReference}`.replace(/[^\w.-]/g, '_');
        void reply.header('cache-control', 'no-store');
        // The type provider types the body from the schema's JSON; a stream is sent as it is.
        if (request.query.format === 'zip') {
          const body = Readable.from(subjectAccessZip(deps.db, found, generatedAt, options), {
            objectMode: false,
          }) as never;
          return reply
            .type('application/zip')
            .header('content-disposition', `attachment; filename="${stem}.zip"`)
            .send(body);
        }
        const body = Readable.from(subjectAccessJson(deps.db, found, generatedAt, options), {
          objectMode: false,
        }) as never;
        return reply
          .type('application/json; charset=utf-8')
          .header('content-disposition', `attachment; filename="${stem}.json"`)
          .send(body);
      },
    );
  };
}
