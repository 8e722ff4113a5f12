import { AppError } from '../../platform/errors.ts';
import { findJsonLimitBreach, type JsonBodyLimits } from '../../platform/http/body-limits.ts';
import { findUnsafeInput } from '../../platform/http/input-safety.ts';
import { fieldErrors, parseJsonBody } from '../../platform/http/problem.ts';
import type { BodyValidator } from '../../platform/http/schema-compilers.ts';
import type { DataEnvironment } from '../companies/index.ts';

/** Where a device's message came from: the levels of its topic. */
export interface DeviceTopic {
  readonly clientId: string;
  readonly environment: DataEnvironment;
  readonly deviceId: string;
}

/** A message refused, before or after storing is tried, with the reason logged and counted. */
export interface PayloadRefusal {
  readonly outcome: 'bad_payload' | 'bad_topic' | 'unknown_client' | 'unknown_device';
  readonly reason: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A payload read as its route reads a body: its size, then its shape on the raw bytes (so megabytes of
 * keys or nesting cost a scan, not a parse), then parsed, the topic's device put in (a `device_id` in
 * the payload must name the same device), checked for unsafe text and validated. Either the body to
 * store or why the message is refused.
 */
export function readDevicePayload(
  payload: Buffer,
  limits: { readonly maxBytes: number; readonly json: JsonBodyLimits },
  topic: DeviceTopic,
  validate: BodyValidator,
): { readonly body: Record<string, unknown> } | PayloadRefusal {
  if (payload.length > limits.maxBytes)
    return {
      outcome: 'bad_payload',
      reason: `the payload is ${String(payload.length)} bytes; at most ${String(limits.maxBytes)}`,
    };
  const breach = findJsonLimitBreach(payload, limits.json, '/payload');
  if (breach !== undefined) return { outcome: 'bad_payload', reason: `${breach.path} ${breach.message}` };
  let parsed: unknown;
  try {
    parsed = parseJsonBody(payload.toString('utf8'));
  } catch (error) {
    return { outcome: 'bad_payload', reason: error instanceof Error ? error.message : String(error) };
  }
  if (!isRecord(parsed)) return { outcome: 'bad_payload', reason: 'the payload must be a JSON object' };
  // The HTTP body as it is may be sent, device_id included, as long as it names the topic's device.
  if (parsed['device_id'] !== undefined && parsed['device_id'] !== topic.deviceId)
    return { outcome: 'bad_payload', reason: '/payload/device_id must equal the device of the topic' };
  const body: Record<string, unknown> = { ...parsed, device_id: topic.deviceId };
  const unsafe = findUnsafeInput(body, '/payload');
  if (unsafe !== undefined) return { outcome: 'bad_payload', reason: `${unsafe.path} ${unsafe.message}` };
  if (!validate(body)) {
    const errors = fieldErrors(validate.errors ?? [], 'payload');
    const topicError = errors.find((e) => e.path.startsWith('/payload/device_id'));
    if (topicError !== undefined)
      return { outcome: 'bad_topic', reason: `the device_id level ${topicError.message}` };
    return { outcome: 'bad_payload', reason: errors.map((e) => `${e.path} ${e.message}`).join('; ') };
  }
  return { body };
}

/**
 * What a refusal by the service comes to: a client or device not known, or the payload refused as its
 * route would refuse the body. Anything else (the database unavailable) is thrown on, so the message
 * is not acknowledged and comes again.
 */
export function refusalOf(error: unknown, topic: DeviceTopic): PayloadRefusal {
  if (!(error instanceof AppError) || error.status >= 500) throw error;
  if (error.code === 'INVALID_CLIENT_CREDENTIALS')
    return { outcome: 'unknown_client', reason: 'no company has this client_id' };
  if (error.code === 'NOT_FOUND')
    return { outcome: 'unknown_device', reason: `no device ${topic.deviceId} in ${topic.environment}` };
  return { outcome: 'bad_payload', reason: error.message };
}
