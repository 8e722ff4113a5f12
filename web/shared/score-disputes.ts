import type { Client } from 'openapi-fetch';
import { MilepostError, unwrap, type components, type MilepostClient } from '../../sdk/src/index.ts';

/*
 * Driving scores' words and the score-dispute routes (docs/api.md, "Driving scores"), shared by the app
 * and the console. The dispute routes are typed here, in the SDK's shape, until a service that answers
 * them has generated them into the SDK; a service without them answers 404 ROUTE_NOT_FOUND (or 501),
 * which `DisputesUnavailable` turns into a sentence.
 */

export type ScoreEvent = NonNullable<components['schemas']['Journey']['events']>[number] & {
  /** The event's dispute, where the service records disputes (absent on one that does not). */
  readonly dispute?: DisputeSummary | null;
};
export type EventKind = ScoreEvent['kind'];
export type DisputeReason = 'passenger' | 'gps_error' | 'other';
export type DisputeState = 'pending' | 'accepted' | 'rejected';

export interface DisputeSummary {
  readonly dispute_reference: string;
  readonly state: DisputeState;
}

export interface Dispute extends DisputeSummary {
  readonly policy_reference: string;
  readonly journey_reference: string;
  readonly event_reference: string;
  readonly kind: EventKind;
  readonly occurred_at: string;
  readonly reason: DisputeReason;
  readonly details: string | null;
  readonly created_at: string;
  readonly decided_at: string | null;
  readonly decision_reason: string | null;
  /** On the staff queue: the policy's company. */
  readonly company_reference?: string;
}

export const KIND_NAMES: Readonly<Record<EventKind, string>> = {
  harsh_braking: 'Harsh braking',
  rapid_acceleration: 'Rapid acceleration',
  harsh_cornering: 'Harsh cornering',
  speeding: 'Speeding',
  fatigue: 'Driving without a break',
};

export const REASON_NAMES: Readonly<Record<DisputeReason, string>> = {
  passenger: 'I was a passenger',
  gps_error: 'GPS error',
  other: 'Other',
};

export const STATE_NAMES: Readonly<Record<DisputeState, string>> = {
  pending: 'Dispute pending',
  accepted: 'Dispute accepted: this event no longer counts',
  rejected: 'Dispute rejected',
};

/** The longest free text a dispute or a decision takes (the API's limit). */
export const DETAILS_MAX_CHARS = 1000;

/** The points each event takes off per 100 miles (the product's `driving_score.weights` replace them one by one). */
export const DEFAULT_WEIGHTS = {
  harsh_braking: 2,
  rapid_acceleration: 1,
  harsh_cornering: 1,
  speeding: 2,
  fatigue: 5,
  night_driving: 0.2,
} as const;

type Json<T> = { content: { 'application/json': T } };
interface Post<Path, Body, Answer> {
  parameters: { path: Path; query?: never; header?: never; cookie?: never };
  requestBody: Json<Body>;
  responses: { 200: Json<Answer>; 201: Json<Answer> };
}
interface Get<Parameters, Answer> {
  parameters: Parameters & { header?: never; cookie?: never };
  requestBody?: never;
  responses: { 200: Json<Answer> };
}
interface DisputePaths {
  '/policys/{policy_reference}/score-events/{event_reference}/disputes': {
    post: Post<
      { policy_reference: string; event_reference: string },
      { reason: DisputeReason; details?: string },
      Dispute
    >;
  };
  '/admin/score-disputes': {
    get: Get<{ path?: never; query?: { state?: DisputeState } }, { disputes: Dispute[] }>;
  };
  '/admin/score-disputes/{dispute_reference}/decision': {
    post: Post<{ dispute_reference: string }, { decision: 'accept' | 'reject'; reason: string }, Dispute>;
  };
}

/**
 * A service that has no dispute routes (404 ROUTE_NOT_FOUND, or 501): a sentence, not a crash. A
 * `MilepostError` of its own code, so the app's and the console's error sentences pass it through.
 */
export class DisputesUnavailable extends MilepostError {
  constructor(status: number) {
    super('Disputes cannot be sent or decided on this service yet. Please contact the insurer instead.', {
      status,
      code: 'DISPUTES_UNAVAILABLE',
    });
  }
}

/** `call`'s answer, with a missing route thrown as `DisputesUnavailable`. */
async function answer<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  try {
    return await unwrap(call);
  } catch (caught) {
    if (caught instanceof MilepostError && (caught.code === 'ROUTE_NOT_FOUND' || caught.status === 501))
      throw new DisputesUnavailable(caught.status);
    throw caught;
  }
}

/** The dispute routes over a client of the SDK (same middleware: tokens, CSRF, tenancy headers). */
export function scoreDisputes(sdkClient: MilepostClient) {
  const client = sdkClient as unknown as Client<DisputePaths>;
  return {
    raise: (policyReference: string, eventReference: string, reason: DisputeReason, details: string) =>
      answer(
        client.POST('/policys/{policy_reference}/score-events/{event_reference}/disputes', {
          params: { path: { policy_reference: policyReference, event_reference: eventReference } },
          body: details === '' ? { reason } : { reason, details },
        }),
      ),
    queue: (state: DisputeState) =>
      answer(client.GET('/admin/score-disputes', { params: { query: { state } } })),
    decide: (disputeReference: string, decision: 'accept' | 'reject', reason: string) =>
      answer(
        client.POST('/admin/score-disputes/{dispute_reference}/decision', {
          params: { path: { dispute_reference: disputeReference } },
          body: { decision, reason },
        }),
      ),
  };
}
