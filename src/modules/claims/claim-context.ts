import type { Logger } from 'pino';
import type { ReverseGeocoder } from '../../integrations/geocoding/index.ts';
import type { Clock } from '../../platform/clock.ts';
import type { ChangeFeed } from '../../platform/db/change-feed.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import type { Executor } from '../../schema.ts';
import type { NotificationService } from '../notifications/index.ts';

export interface ClaimServiceDeps {
  readonly db: Executor;
  readonly clock: Clock;
  readonly geocoder: ReverseGeocoder;
  readonly notifications: Pick<NotificationService, 'queueEmails'>;
  /** Milliseconds between the worker's passes over first notices owed and overdue drafts (default 1 s). */
  readonly pollIntervalMs?: number;
  /**
   * PostgreSQL's notifications: a crash's commit wakes the worker's loop (`milepost_claims_owed`, migration
   * 0061), so its draft claim does not wait for the next pass. Without it the loop only polls.
   */
  readonly changes?: Pick<ChangeFeed, 'subscribe'>;
  readonly logger?: Pick<Logger, 'warn' | 'error'>;
  /** The job queue of the nightly retention of ended claims; none: the job is not scheduled. */
  readonly jobs?: Jobs;
}
