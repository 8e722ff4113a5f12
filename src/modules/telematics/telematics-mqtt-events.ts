import { DEFAULT_JSON_BODY_LIMITS } from '../../platform/http/body-limits.ts';
import { bodyValidator, type BodyValidator } from '../../platform/http/schema-compilers.ts';
import type { DataEnvironment, Tenant } from '../companies/index.ts';
import { CrashEventSchema, type CrashEventInput, type CrashEventResult } from './crash-schemas.ts';
import {
  readDevicePayload,
  refusalOf,
  type DeviceTopic,
  type PayloadRefusal,
} from './telematics-mqtt-payload.ts';

/**
 * The topics devices publish events (crashes) to: `milepost/{client_id}/{environment}/devices/{device_id}/events`,
 * the payload being the body of POST /telematics/events without `device_id`.
 */
export const EVENTS_TOPIC_FILTER = 'milepost/+/+/devices/+/events';

/** The largest event payload taken: a crash is a dozen fields. */
export const MAX_EVENT_PAYLOAD_BYTES = 16 * 1024;

/** What an events message came to, before the consumer counts it. */
export type EventSettlement =
  { readonly outcome: 'stored' | 'duplicate'; readonly crash: CrashEventResult } | PayloadRefusal;

/** The route's crash schema, compiled with the settings of request bodies (no coercion, every error). */
export function crashValidator(): BodyValidator {
  return bodyValidator({ schema: CrashEventSchema, url: '/telematics/events' }, false);
}

/**
 * An events message checked as POST /telematics/events checks a body, then stored. A transient failure
 * (the database unavailable) throws, so the message is not acknowledged and comes again.
 */
export async function settleEvent(
  deps: {
    readonly recordCrash: (tenant: Tenant, input: CrashEventInput, body: string) => Promise<CrashEventResult>;
    readonly resolveTenant: (clientId: string, environment: DataEnvironment) => Promise<Tenant>;
  },
  validate: BodyValidator,
  topic: DeviceTopic,
  payload: Buffer,
): Promise<EventSettlement> {
  const read = readDevicePayload(
    payload,
    { maxBytes: MAX_EVENT_PAYLOAD_BYTES, json: DEFAULT_JSON_BODY_LIMITS },
    topic,
    validate,
  );
  if (!('body' in read)) return read;
  try {
    const tenant = await deps.resolveTenant(topic.clientId, topic.environment);
    const crash = await deps.recordCrash(tenant, read.body as unknown as CrashEventInput, '/payload');
    return { outcome: crash.duplicate ? 'duplicate' : 'stored', crash };
  } catch (error) {
    return refusalOf(error, topic);
  }
}
