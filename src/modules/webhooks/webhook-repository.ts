import { sql, type Generated } from 'kysely';
import type { Executor } from '../../schema.ts';
import { forTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';

/*
 * The webhooks module's tables, and its endpoints' SQL. Deliveries and their attempts are in
 * webhook-delivery-repository.ts, the fan-out queue and event reads in webhook-event-repository.ts.
 */

export interface WebhookTables {
  webhook_endpoints: {
    id: Generated<string>;
    endpoint_reference: string;
    company_id: string;
    environment: DataEnvironment;
    url: string;
    description: string | null;
    /** jsonb array of event types; null = every type. */
    event_types: string[] | string | null;
    enabled: boolean;
    disabled_reason: 'manual' | 'failing' | null;
    secret: string;
    previous_secret: string | null;
    previous_secret_expires_at: Date | null;
    failing_since: Date | null;
    created_at: Date;
    updated_at: Date;
  };
  webhook_pending_events: {
    event_id: string;
    /** The event's created_at: with the id, its key in the partitioned events table. */
    event_created_at: Date;
    position: Generated<number>;
  };
  webhook_deliveries: {
    id: Generated<string>;
    delivery_reference: string;
    sequence: Generated<number>;
    endpoint_id: string;
    event_id: string;
    /** The event's created_at: with the id, its key in the partitioned events table. */
    event_created_at: Date;
    /** The event's type, so that the delivery log needs no event. */
    event_type: string;
    status: DeliveryStatus;
    attempt_count: Generated<number>;
    next_attempt_at: Date | null;
    lease_id: string | null;
    last_attempt_at: Date | null;
    last_response_status: number | null;
    last_error: string | null;
    delivered_at: Date | null;
    created_at: Date;
    updated_at: Date;
  };
  webhook_delivery_attempts: {
    id: Generated<number>;
    delivery_id: string;
    attempt_number: number;
    started_at: Date;
    duration_ms: number;
    outcome: 'succeeded' | 'failed';
    response_status: number | null;
    response_body: string | null;
    error: string | null;
  };
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface EndpointRecord {
  readonly id: string;
  readonly reference: string;
  readonly companyId: string;
  readonly environment: DataEnvironment;
  readonly url: string;
  readonly description: string | null;
  readonly eventTypes: string[] | null;
  readonly enabled: boolean;
  readonly disabledReason: 'manual' | 'failing' | null;
  readonly secret: string;
  readonly previousSecret: string | null;
  readonly previousSecretExpiresAt: Date | null;
  readonly failingSince: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** jsonb comes back parsed on both drivers; a string would only appear if one were stored by mistake. */
const eventTypesOf = (value: string[] | string | null): string[] | null =>
  value === null ? null : typeof value === 'string' ? (JSON.parse(value) as string[]) : value;

/** The columns `toEndpoint` reads (the delivery claim reads endpoints too). */
export const endpointColumns = [
  'id',
  'endpoint_reference',
  'company_id',
  'environment',
  'url',
  'description',
  'event_types',
  'enabled',
  'disabled_reason',
  'secret',
  'previous_secret',
  'previous_secret_expires_at',
  'failing_since',
  'created_at',
  'updated_at',
] as const;

export function toEndpoint(row: {
  id: string;
  endpoint_reference: string;
  company_id: string;
  environment: DataEnvironment;
  url: string;
  description: string | null;
  event_types: string[] | string | null;
  enabled: boolean;
  disabled_reason: 'manual' | 'failing' | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}): EndpointRecord {
  return {
    id: row.id,
    reference: row.endpoint_reference,
    companyId: row.company_id,
    environment: row.environment,
    url: row.url,
    description: row.description,
    eventTypes: eventTypesOf(row.event_types),
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    failingSince: row.failing_since,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

// ── Endpoints ───────────────────────────────────────────────────────────────────────────────────

export async function insertEndpoint(
  db: Executor,
  tenant: Tenant,
  values: {
    reference: string;
    url: string;
    description: string | null;
    eventTypes: readonly string[] | null;
    secret: string;
    at: Date;
  },
): Promise<EndpointRecord> {
  const row = await db
    .insertInto('webhook_endpoints')
    .values({
      endpoint_reference: values.reference,
      company_id: tenant.companyId,
      environment: tenant.environment,
      url: values.url,
      description: values.description,
      event_types: values.eventTypes === null ? null : JSON.stringify(values.eventTypes),
      enabled: true,
      disabled_reason: null,
      secret: values.secret,
      created_at: values.at,
      updated_at: values.at,
    })
    .returning(endpointColumns)
    .executeTakeFirstOrThrow();
  return toEndpoint(row);
}

/**
 * How many endpoints the tenant has, counted under a lock on its registrations that the caller's
 * transaction holds, so that registrations made at once are counted in turn.
 */
export async function countEndpoints(trx: Executor, tenant: Tenant): Promise<number> {
  const key = `webhooks.endpoints:${tenant.companyId}:${tenant.environment}`;
  await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
  const row = await trx
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where(forTenant(tenant))
    .executeTakeFirstOrThrow();
  return row.count;
}

export async function listEndpoints(db: Executor, tenant: Tenant): Promise<EndpointRecord[]> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .select(endpointColumns)
    .where(forTenant(tenant))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toEndpoint);
}

/** One endpoint of the tenant; `lock` takes its row lock for a read-modify-write. */
export async function findEndpoint(
  db: Executor,
  tenant: Tenant,
  reference: string,
  lock = false,
): Promise<EndpointRecord | undefined> {
  let query = db
    .selectFrom('webhook_endpoints')
    .select(endpointColumns)
    .where('endpoint_reference', '=', reference)
    .where(forTenant(tenant));
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row === undefined ? undefined : toEndpoint(row);
}

export async function updateEndpoint(
  db: Executor,
  id: string,
  changes: {
    url?: string;
    description?: string | null;
    eventTypes?: readonly string[] | null;
    enabled?: boolean;
    disabledReason?: 'manual' | 'failing' | null;
    failingSince?: Date | null;
    secret?: string;
    previousSecret?: string | null;
    previousSecretExpiresAt?: Date | null;
    at: Date;
  },
): Promise<EndpointRecord> {
  const row = await db
    .updateTable('webhook_endpoints')
    .set({
      ...(changes.url === undefined ? {} : { url: changes.url }),
      ...(changes.description === undefined ? {} : { description: changes.description }),
      ...(changes.eventTypes === undefined
        ? {}
        : { event_types: changes.eventTypes === null ? null : JSON.stringify(changes.eventTypes) }),
      ...(changes.enabled === undefined ? {} : { enabled: changes.enabled }),
      ...(changes.disabledReason === undefined ? {} : { disabled_reason: changes.disabledReason }),
      ...(changes.failingSince === undefined ? {} : { failing_since: changes.failingSince }),
      ...(changes.secret === undefined ? {} : { secret: changes.secret }),
      ...(changes.previousSecret === undefined ? {} : { previous_secret: changes.previousSecret }),
      ...(changes.previousSecretExpiresAt === undefined
        ? {}
        : { previous_secret_expires_at: changes.previousSecretExpiresAt }),
      updated_at: changes.at,
    })
    .where('id', '=', id)
    .returning(endpointColumns)
    .executeTakeFirstOrThrow();
  return toEndpoint(row);
}

export async function deleteEndpoint(db: Executor, tenant: Tenant, reference: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where('endpoint_reference', '=', reference)
    .where(forTenant(tenant))
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Endpoint health after an attempt: a success clears the failing streak, a failure starts one if none
 * is running. The row is written (and locked) only when the streak changes: the attempts of a healthy
 * endpoint, or of one already failing, must not queue one behind another on its row, or the endpoint's
 * concurrency would end at its first settle. Returns the endpoint as it stands, unlocked unless written.
 */
export async function recordEndpointHealth(
  db: Executor,
  id: string,
  delivered: boolean,
  attemptAt: Date,
): Promise<EndpointRecord | undefined> {
  const changed = await db
    .updateTable('webhook_endpoints')
    .set({ failing_since: delivered ? null : attemptAt })
    .where('id', '=', id)
    .where('failing_since', delivered ? 'is not' : 'is', null)
    .returning(endpointColumns)
    .executeTakeFirst();
  if (changed !== undefined) return toEndpoint(changed);
  const row = await db
    .selectFrom('webhook_endpoints')
    .select(endpointColumns)
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : toEndpoint(row);
}

/** The endpoint's row, locked for the rest of the transaction; undefined once deleted. */
export async function lockEndpoint(db: Executor, id: string): Promise<EndpointRecord | undefined> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select(endpointColumns)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  return row === undefined ? undefined : toEndpoint(row);
}

/** Enabled endpoints of the given companies (both environments; callers match the environment). */
export async function listEnabledEndpointsOf(
  db: Executor,
  companyIds: readonly string[],
): Promise<EndpointRecord[]> {
  if (companyIds.length === 0) return [];
  const rows = await db
    .selectFrom('webhook_endpoints')
    .select(endpointColumns)
    .where('company_id', 'in', companyIds)
    .where('enabled', '=', true)
    .execute();
  return rows.map(toEndpoint);
}
