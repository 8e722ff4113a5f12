import { DEFAULT_JSON_BODY_LIMITS } from '../../platform/http/body-limits.ts';
import { bodyValidator, type BodyValidator } from '../../platform/http/schema-compilers.ts';
import type { DataEnvironment, Tenant } from '../companies/index.ts';
import { attributeFieldError } from './rules/position-attributes.ts';
import {
  POSITIONS_BODY_LIMIT_BYTES,
  POSITIONS_JSON_LIMITS,
  PositionBatchSchema,
  type PositionBatch,
  type PositionBatchResult,
} from './telematics-schemas.ts';
import {
  readDevicePayload,
  refusalOf,
  type DeviceTopic,
  type PayloadRefusal,
} from './telematics-mqtt-payload.ts';

/**
 * The topics devices (or their gateways) publish positions to:
 * `milepost/{client_id}/{environment}/devices/{device_id}/positions`, the payload being the body of
 * POST /telematics/positions without `device_id`.
 */
export const POSITIONS_TOPIC_FILTER = 'milepost/+/+/devices/+/positions';

/** The largest payload taken, as POST /telematics/positions' body limit (10,000 positions with every field). */
export const MAX_PAYLOAD_BYTES = POSITIONS_BODY_LIMIT_BYTES;
/**
 * What a payload may hold besides its bytes, as POST /telematics/positions' body: checked on the raw bytes
 * before anything is parsed, so 4 MiB of keys or of nesting costs a scan, not a parse.
 */
const PAYLOAD_JSON_LIMITS = { ...DEFAULT_JSON_BODY_LIMITS, ...POSITIONS_JSON_LIMITS };

/** What a positions message came to, before the consumer counts it. */
export type PositionsSettlement =
  | { readonly outcome: 'stored' | 'duplicate' | 'rejected'; readonly result: PositionBatchResult }
  | PayloadRefusal;

/** The route's batch schema, compiled with the settings of request bodies (no coercion, every error). */
export function batchValidator(): BodyValidator {
  return bodyValidator({ schema: PositionBatchSchema, url: '/telematics/positions' }, true);
}

/**
 * A positions message checked as POST /telematics/positions checks a body, then stored. A transient
 * failure (the database unavailable) throws, so the message is not acknowledged and comes again.
 */
export async function settlePositions(
  deps: {
    readonly ingest: (tenant: Tenant, batch: PositionBatch) => Promise<PositionBatchResult>;
    readonly resolveTenant: (clientId: string, environment: DataEnvironment) => Promise<Tenant>;
  },
  validate: BodyValidator,
  topic: DeviceTopic,
  payload: Buffer,
): Promise<PositionsSettlement> {
  const read = readDevicePayload(
    payload,
    { maxBytes: MAX_PAYLOAD_BYTES, json: PAYLOAD_JSON_LIMITS },
    topic,
    validate,
  );
  if (!('body' in read)) return read;
  const batch = read.body as unknown as PositionBatch;
  // The service checks them too, but names the HTTP body: the reason here names the payload.
  const attributes = attributeFieldError(batch.positions, '/payload');
  if (attributes !== undefined)
    return { outcome: 'bad_payload', reason: `${attributes.path} ${attributes.message}` };
  try {
    const tenant = await deps.resolveTenant(topic.clientId, topic.environment);
    const result = await deps.ingest(tenant, batch);
    const outcome =
      result.accepted > 0 ? 'stored' : result.duplicates > 0 ? 'duplicate' : ('rejected' as const);
    return { outcome, result };
  } catch (error) {
    return refusalOf(error, topic);
  }
}
