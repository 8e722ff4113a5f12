import { createHmac } from 'node:crypto';

/**
 * The signed webhook message, as Standard Webhooks (standardwebhooks.com) defines it: the body is
 * signed with HMAC-SHA256 over `${webhook-id}.${webhook-timestamp}.${body}` using the secret's bytes.
 * Pure: the key bytes and the time are passed in.
 */

export const SECRET_PREFIX = 'whsec_';
/** 32 random bytes: the HMAC-SHA256 block's worth of key. */
export const SECRET_BYTES = 32;

/** A signing secret as shown to clients: `whsec_` and the key in base64, the form Standard Webhooks libraries take. */
export function formatSecret(key: Uint8Array): string {
  return `${SECRET_PREFIX}${Buffer.from(key).toString('base64')}`;
}

/** The key bytes of a `whsec_…` secret. */
export function secretKey(secret: string): Buffer {
  return Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
}

/** One `v1,<base64 signature>` entry. */
export function sign(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const digest = createHmac('sha256', secretKey(secret))
    .update(`${messageId}.${timestampSeconds}.${body}`, 'utf8')
    .digest('base64');
  return `v1,${digest}`;
}

/**
 * The secrets that sign at `at`, newest first: the current one, and the previous one until it
 * expires (a day after a rotation), so receivers holding either verify every message meanwhile.
 */
export function signingSecrets(
  endpoint: { secret: string; previousSecret: string | null; previousSecretExpiresAt: Date | null },
  at: Date,
): string[] {
  const { secret, previousSecret, previousSecretExpiresAt } = endpoint;
  return previousSecret !== null && previousSecretExpiresAt !== null && previousSecretExpiresAt > at
    ? [secret, previousSecret]
    : [secret];
}

export interface WebhookEvent {
  readonly id: string;
  readonly type: string;
  readonly environment: string;
  readonly createdAt: Date;
  readonly data: unknown;
}

/** The JSON body of a delivery: the same bytes on every attempt, so the receiver may compare them. */
export function messageBody(event: WebhookEvent): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    created: Math.floor(event.createdAt.getTime() / 1000),
    environment: event.environment,
    data: event.data,
  });
}

/**
 * The headers of one attempt. During a rotation every live secret signs (space-separated, newest
 * first), so a receiver holding either secret verifies the message.
 */
export function signedHeaders(
  event: WebhookEvent,
  body: string,
  secrets: readonly string[],
  at: Date,
): Record<string, string> {
  const timestampSeconds = Math.floor(at.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'webhook-id': event.id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => sign(s, event.id, timestampSeconds, body)).join(' '),
  };
}
