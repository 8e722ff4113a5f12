/**
 * The worker's watch over silent devices, once a minute: a bound device of an active policy that sent
 * nothing for its product's `device_offline.after_hours` goes offline (`device.offline`, and an email when
 * the product has the rule); while it stays silent, each whole London day after the grace days gets an
 * estimated journey of the product's `estimated_distance_per_day`, rated and billed as any journey; it
 * goes online again (`device.online`) as soon as it reports: just after its positions are stored
 * (`comeOnlineIfReporting`), or at the next check if that missed it. The estimate of a day whose data
 * arrives later is voided by the trip cutting.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { recordEvent } from '../../platform/events.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import { addDays, londonMidnight } from '../../platform/london-calendar.ts';
import type { Executor } from '../../schema.ts';
import { findPolicyholderContact } from '../accounts/index.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import type { JourneyService } from '../journeys/index.ts';
import { deviceOfflineEmail, type NotificationService } from '../notifications/index.ts';
import { capMetres, findProducts, productVersionAt, type ProductRules } from '../products/index.ts';
import { DEVICE_OFFLINE_AFTER_SECONDS, planSilentDevice } from './rules/silent-devices.ts';
import { lastPositionBefore } from './position-repository.ts';
import {
  lockReportingDevice,
  markDeviceOffline,
  markDeviceOnline,
  updateDeviceSilence,
  silentCandidates,
  type SilentCandidate,
} from './silent-device-repository.ts';
import { estimateProviderReference } from './trip-cutting.ts';

export const SILENT_DEVICES_QUEUE = 'telematics.silent-devices';
/** The least `after_hours` a product may set: devices quieter than this are not looked at. */
const LEAST_AFTER_HOURS = 1;
const PAGE = 500;

export interface SilentDevicesPass {
  readonly checked: number;
  readonly wentOffline: number;
  readonly cameOnline: number;
  readonly estimates: number;
}

type OfflineRule = NonNullable<ProductRules['device_offline']>;
/** A product's offline rule with the unit its distances are in. */
type ProductOfflineRule = { rule: OfflineRule; unit: 'mile' | 'km' };
/** What a pass or a report needs of a device to record a change of its status. */
type DeviceInBinding = Pick<
  SilentCandidate,
  'id' | 'companyId' | 'environment' | 'deviceId' | 'lastSeenAt' | 'boundAt' | 'policyReference'
>;

interface SilentDevicesDeps {
  db: Executor;
  clock: Clock;
  jobs: Jobs;
  journeys: Pick<JourneyService, 'replace'>;
  notifications: Pick<NotificationService, 'queueEmails'>;
  logger?: Pick<Logger, 'warn' | 'error'>;
}

const tenantOfDevice = (c: { companyId: string; environment: string }): Tenant =>
  asTenant(c.companyId, c.environment as DataEnvironment);

/** The rule and unit of each device's product as in force `now` (read once per product per pass). */
async function offlineRules(db: Executor, candidates: readonly SilentCandidate[], now: Date) {
  const byKey = new Map<string, ProductOfflineRule>();
  const wanted = new Map<string, { tenant: Tenant; refs: Set<string> }>();
  for (const c of candidates) {
    if (c.productReference === null) continue;
    const key = `${c.companyId}/${c.environment}`;
    const entry = wanted.get(key) ?? { tenant: tenantOfDevice(c), refs: new Set<string>() };
    entry.refs.add(c.productReference);
    wanted.set(key, entry);
  }
  for (const [key, { tenant, refs }] of wanted)
    for (const product of await findProducts(db, tenant, [...refs])) {
      const rule = productVersionAt(product.versions, now)?.rules.device_offline;
      if (rule !== undefined) byKey.set(`${key}/${product.reference}`, { rule, unit: product.usageUnit });
    }
  return (c: SilentCandidate) => byKey.get(`${c.companyId}/${c.environment}/${c.productReference ?? ''}`);
}

/** Records the device offline, unless it reported since the pass read it; whether it did. */
async function goOffline(
  deps: SilentDevicesDeps,
  c: SilentCandidate,
  rule: ProductOfflineRule | undefined,
  now: Date,
): Promise<boolean> {
  const tenant = tenantOfDevice(c);
  return inTransaction(deps.db, async (trx) => {
    // NOTE: a batch stored since the pass read the device moved its last_seen_at: it is not silent.
    const afterSeconds = rule === undefined ? DEVICE_OFFLINE_AFTER_SECONDS : rule.rule.after_hours * 3600;
    if (!(await markDeviceOffline(trx, c.id, { at: now, lastSeenAt: c.lastSeenAt, afterSeconds })))
      return false;
    await recordEvent(
      trx,
      tenant,
      'device.offline',
      {
        device_id: c.deviceId,
        policy_reference: c.policyReference,
        last_seen_at: c.lastSeenAt?.toISOString() ?? null,
        offline_since: now.toISOString(),
      },
      now,
    );
    if (rule === undefined) return true;
    const contact = await findPolicyholderContact(trx, c.userId);
    if (contact === undefined) return true;
    await deps.notifications.queueEmails(trx, [
      {
        scope: tenant,
        template: 'device-offline',
        to: contact.email,
        // The account lets notifications refuse the email of a person erased meanwhile, and an erasure find it.
        userId: c.userId,
        email: deviceOfflineEmail({
          firstNames: contact.firstNames,
          policyReference: c.policyReference,
          deviceId: c.deviceId,
          lastSeen:
            c.lastSeenAt?.toLocaleString('en-GB', {
              timeZone: 'Europe/London',
              dateStyle: 'long',
              timeStyle: 'short',
            }) ?? null,
          estimatedPerDay: `${String(rule.rule.estimated_distance_per_day)} ${rule.unit === 'km' ? 'km' : 'miles'}`,
          graceDays: rule.rule.grace_days,
        }),
      },
    ]);
    return true;
  });
}

/** Records the device online in `trx`, unless it is not offline (any more); whether it did. */
async function comeOnline(trx: Executor, c: DeviceInBinding, now: Date): Promise<boolean> {
  if (!(await markDeviceOnline(trx, c.id))) return false;
  await recordEvent(
    trx,
    tenantOfDevice(c),
    'device.online',
    {
      device_id: c.deviceId,
      policy_reference: c.policyReference,
      last_seen_at: (c.lastSeenAt ?? c.boundAt).toISOString(),
    },
    now,
  );
  return true;
}

/**
 * Just after a device's positions are stored, in `trx`: the device is online again, with its
 * `device.online` event, when it was offline and its positions end its silence by the same rule as the
 * minute's check (the product's `after_hours` as in force `now`; data from days ago does not). Whether
 * it came online.
 */
async function comeOnlineIfReporting(trx: Executor, deviceRowId: string, now: Date): Promise<boolean> {
  const device = await lockReportingDevice(trx, deviceRowId);
  if (device === undefined || device.offlineSince === null) return false;
  let rule: OfflineRule | undefined;
  if (device.productReference !== null) {
    const [product] = await findProducts(trx, tenantOfDevice(device), [device.productReference]);
    rule = product === undefined ? undefined : productVersionAt(product.versions, now)?.rules.device_offline;
  }
  const plan = planSilentDevice({
    boundAt: device.boundAt,
    lastSeenAt: device.lastSeenAt,
    offlineSince: device.offlineSince,
    estimatedThrough: device.estimatedThrough,
    rule: rule === undefined ? null : { afterHours: rule.after_hours, graceDays: rule.grace_days },
    now,
  });
  return plan.transition === 'online' && comeOnline(trx, device, now);
}

/** Stores the estimates of `dates` (each its own name, so a repeat stores nothing) and records how far. */
async function estimate(
  deps: SilentDevicesDeps,
  c: SilentCandidate,
  rule: ProductOfflineRule,
  dates: readonly string[],
): Promise<number> {
  const last = dates.at(-1);
  if (last === undefined) return 0;
  const place = await lastPositionBefore(deps.db, c.id, londonMidnight(dates[0] ?? last));
  const outcome = await deps.journeys.replace(
    tenantOfDevice(c),
    { id: c.policyId, reference: c.policyReference },
    {
      voids: [],
      store: dates.map((date) => ({
        providerReference: estimateProviderReference(c.deviceId, date),
        source: 'estimate' as const,
        deviceId: c.deviceId,
        startAt: londonMidnight(date),
        endAt: londonMidnight(addDays(date, 1)),
        distanceMetres: capMetres(rule.rule.estimated_distance_per_day, rule.unit),
        place: place === undefined ? null : { lat: place.lat, lng: place.lon },
      })),
    },
  );
  for (const r of outcome.refused)
    deps.logger?.warn(
      { device_id: c.deviceId, provider_reference: r.providerReference, code: r.code },
      'an estimate for a silent device was not stored',
    );
  await updateDeviceSilence(deps.db, c.id, { estimatedThrough: last });
  return outcome.stored.length;
}

/** One silent device of a pass: its status change, if any, and the estimates of its silent days. */
async function checkDevice(
  deps: SilentDevicesDeps,
  c: SilentCandidate,
  rule: ProductOfflineRule | undefined,
  now: Date,
  pass: { wentOffline: number; cameOnline: number; estimates: number },
): Promise<void> {
  const plan = planSilentDevice({
    boundAt: c.boundAt,
    lastSeenAt: c.lastSeenAt,
    offlineSince: c.offlineSince,
    estimatedThrough: c.estimatedThrough,
    rule: rule === undefined ? null : { afterHours: rule.rule.after_hours, graceDays: rule.rule.grace_days },
    now,
  });
  if (plan.transition === 'offline') {
    if (await goOffline(deps, c, rule, now)) pass.wentOffline++;
  } else if (plan.transition === 'online') {
    if (await inTransaction(deps.db, (trx) => comeOnline(trx, c, now))) pass.cameOnline++;
  }
  if (rule !== undefined) pass.estimates += await estimate(deps, c, rule, plan.estimateDates);
}

/** One pass over the bound devices that are silent or offline, a page at a time. */
async function runOnce(deps: SilentDevicesDeps, now: Date): Promise<SilentDevicesPass> {
  const pass = { checked: 0, wentOffline: 0, cameOnline: 0, estimates: 0 };
  const silentBefore = new Date(now.getTime() - LEAST_AFTER_HOURS * 3_600_000);
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const candidates = await silentCandidates(deps.db, silentBefore, { after, limit: PAGE });
    const last = candidates.at(-1);
    if (last === undefined) break;
    after = last.id;
    const ruleOf = await offlineRules(deps.db, candidates, now);
    for (const c of candidates) {
      pass.checked++;
      try {
        await checkDevice(deps, c, ruleOf(c), now, pass);
      } catch (error) {
        deps.logger?.error({ err: error, device_id: c.deviceId }, 'checking a silent device failed');
      }
    }
    if (candidates.length < PAGE) break;
  }
  return pass;
}

export function createSilentDevices(deps: SilentDevicesDeps) {
  deps.jobs.define({ name: SILENT_DEVICES_QUEUE, options: { policy: 'stately', retryLimit: 0 } });
  const runPass = (now: Date = deps.clock.now()): Promise<SilentDevicesPass> => runOnce(deps, now);
  return {
    runOnce: runPass,
    comeOnlineIfReporting,
    async registerWorkers(): Promise<void> {
      await deps.jobs.work(SILENT_DEVICES_QUEUE, async () => {
        await runPass();
      });
      await deps.jobs.schedule(SILENT_DEVICES_QUEUE, '* * * * *', {}, 'Europe/London');
    },
  };
}

export type SilentDevices = ReturnType<typeof createSilentDevices>;
