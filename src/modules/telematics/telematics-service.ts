import type { Logger } from 'pino';
import type { Clock } from '../../platform/clock.ts';
import type { Prepared } from '../../platform/db/database.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import { startPolling, type Poller } from '../../platform/jobs/polling.ts';
import type { Executor } from '../../schema.ts';
import type { JourneyService } from '../journeys/index.ts';
import type { NotificationService } from '../notifications/index.ts';
import { createCrashService } from './crash-service.ts';
import { createDeviceService } from './device-service.ts';
import { createOdometerService } from './odometer-service.ts';
import { maintainPositionPartitions, type PartitionMaintenance } from './position-partitions.ts';
import { createPositionService } from './position-service.ts';
import { createSilentDevices } from './silent-devices.ts';
import { createTripCutting } from './trip-cutting.ts';

/** Between the worker's passes over devices (trip cutting, silent devices). */
const DEVICE_POLL_INTERVAL_MS = 5_000;

/**
 * Devices bound to policies over time (device-service.ts), the positions they send (position-service.ts),
 * odometer readings (odometer-service.ts), and the worker's trip cutting (trip-cutting.ts) and watch over
 * silent devices (silent-devices.ts).
 */
export function createTelematicsService(deps: {
  db: Executor;
  /** The hot statement's way to the database (DatabaseHandle.prepared): positions' `store_positions`. */
  prepared: Prepared;
  clock: Clock;
  positionRetentionDays: number;
  journeys: Pick<JourneyService, 'replace'>;
  jobs: Jobs;
  notifications: Pick<NotificationService, 'queueEmails'>;
  tripEndIdleMinutes: number;
  logger?: Pick<Logger, 'warn' | 'error'>;
}) {
  const { db, clock } = deps;
  const logger = deps.logger === undefined ? {} : { logger: deps.logger };
  const silent = createSilentDevices({
    db,
    clock,
    jobs: deps.jobs,
    journeys: deps.journeys,
    notifications: deps.notifications,
    ...logger,
  });
  const trips = createTripCutting({
    db,
    clock,
    journeys: deps.journeys,
    tripEndIdleMinutes: deps.tripEndIdleMinutes,
    ...logger,
  });
  let poller: Poller | undefined;

  return {
    ...createDeviceService({ db, clock }),
    ...createPositionService({ db, prepared: deps.prepared, clock, silent }),
    ...createOdometerService({ db, clock }),
    ...createCrashService({ db, clock }),

    /** One pass of the worker's trip cutting (tests call it with their clock's time). */
    cutPendingTrips: (now?: Date) => trips.cutPendingTrips(now),

    /** One pass of the worker's watch over silent devices (tests call it with their clock's time). */
    checkSilentDevices: silent.runOnce,

    /**
     * Starts the worker's loop over devices (trips cut while devices with new positions remain) and the
     * silent-device check once a minute.
     */
    async registerWorkers(): Promise<void> {
      await silent.registerWorkers();
      poller ??= startPolling({
        intervalMs: DEVICE_POLL_INTERVAL_MS,
        run: async (signal) => {
          while (!signal.aborted) {
            const pass = await trips.cutPendingTrips(clock.now(), signal);
            if (pass.devices === 0 || pass.failed === pass.devices) break;
          }
        },
        onError: (error) => deps.logger?.error({ err: error }, 'telematics worker pass failed'),
      });
    },

    async stopWorkers(timeoutMs: number): Promise<void> {
      const running = poller;
      poller = undefined;
      await running?.stop(timeoutMs);
    },

    /** The worker's partition upkeep (also a housekeeping task): see maintainPositionPartitions. */
    async maintainPartitions(now: Date = clock.now()): Promise<PartitionMaintenance> {
      return maintainPositionPartitions(db, now, deps.positionRetentionDays);
    },
  };
}

export type TelematicsService = ReturnType<typeof createTelematicsService>;
