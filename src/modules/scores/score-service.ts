/**
 * Driving scores: trips scored as they are stored from a device's positions, months read and closed.
 * The events and scores themselves are the pure rules' (rules/); this file loads the product version in force
 * at each trip's start, persists, and announces closed months.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import { londonDate, londonMidnight } from '../../platform/london-calendar.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import type { NotificationService } from '../notifications/index.ts';
import { policyUsageTermsQuery } from '../policies/index.ts';
import { METRES_PER_MILE, monthIsFinal, scoreTrip, type ScoreFix } from './rules/index.ts';
import {
  insertScoreMonth,
  insertTripScores,
  listClosedMonths,
  listMonthsToClose,
  listMonthTrips,
  lockMonthScores,
  type NewTripScore,
} from './score-repository.ts';
import { listDisputedMonths } from './dispute-repository.ts';
import { carryDisputes } from './dispute-recut.ts';
import { createDisputeService } from './dispute-service.ts';
import { monthFigures, readablePolicy, scoringRulesOf, type ScoreReader } from './score-figures.ts';
import type { MonthScore, PolicyScores, ScoresQuery } from './score-schemas.ts';

export const CLOSE_MONTHS_QUEUE = 'scores.close-months';
const CLOSE_PAGE = 500;
const MAX_MONTHS = 36;

export type { ScoreReader } from './score-figures.ts';

/** A trip stored as a journey, with the kept fixes it was cut from. */
export interface TripToScore {
  readonly journeyId: string;
  readonly startAt: Date;
  /** The journey's distance, whole metres on WGS84. */
  readonly distanceMetres: number;
  readonly fixes: readonly ScoreFix[];
}

/** `YYYY-MM` of an instant in Europe/London. */
export const londonMonth = (at: Date): string => londonDate(at).slice(0, 7);

/** The month `count` months after `month` (`YYYY-MM`; count may be negative). */
function addMonths(month: string, count: number): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const index = y * 12 + (m - 1) + count;
  return `${String(Math.floor(index / 12)).padStart(4, '0')}-${String((index % 12) + 1).padStart(2, '0')}`;
}

/** The first instant of the London month after `month`. */
export const monthEndAt = (month: string): Date => londonMidnight(`${addMonths(month, 1)}-01`);

/** The first month a request may name. */
const FIRST_MONTH = '1000-01';

/** Months since year 0 of `YYYY-MM`. */
function monthIndex(month: string): number {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return y * 12 + (m - 1);
}

/**
 * Each month from `from` to `to`, both included (at most one past MAX_MONTHS). Counted by index, not
 * compared as text: after 9999-12 comes 10000-01, which sorts before it, and `from=9999-12&to=9999-12`
 * was refused as more than 36 months.
 */
function monthsBetween(from: string, to: string): string[] {
  const count = Math.min(monthIndex(to) - monthIndex(from) + 1, MAX_MONTHS + 1);
  return Array.from({ length: Math.max(count, 0) }, (_, i) => addMonths(from, i));
}

/**
 * Scores trips in the caller's transaction (the one storing their journeys): each on the `driving_score` rule
 * of the policy's product version in force at its start (the defaults when it has none). The disputes of
 * the events of the trips they `replace` (voided by a re-cut) follow those events into them.
 */
export async function recordTripScores(
  trx: Executor,
  tenant: Tenant,
  policyId: string,
  trips: readonly TripToScore[],
  at: Date,
  replace: readonly string[] = [],
): Promise<void> {
  if (trips.length === 0) return;
  const rulesAt = await scoringRulesOf(trx, tenant, policyId);
  if (rulesAt === undefined) return;
  const scored: NewTripScore[] = trips.map((trip) => {
    const result = scoreTrip(trip.fixes, trip.distanceMetres, rulesAt(trip.startAt));
    return {
      journeyId: trip.journeyId,
      month: londonMonth(trip.startAt),
      startAt: trip.startAt,
      distanceMetres: trip.distanceMetres,
      nightMetres: result.scored ? result.nightMetres : 0,
      score: result.scored ? result.score : null,
      events: result.scored ? result.events : [],
    };
  });
  await insertTripScores(trx, tenant, policyId, scored, at);
  if (replace.length > 0)
    await carryDisputes(
      trx,
      policyId,
      { replaced: replace, replacements: trips.map((t) => t.journeyId) },
      rulesAt,
    );
}

const miles = (metres: number): number => Math.round((metres / METRES_PER_MILE) * 100) / 100;

function checkRange(from: string, to: string): void {
  if (from > to)
    throw new AppError('VALIDATION_FAILED', 'from is after to', {
      errors: [{ path: '/querystring/from', message: 'must not be after to' }],
    });
  if (monthsBetween(from, to).length > MAX_MONTHS)
    throw new AppError('VALIDATION_FAILED', `At most ${String(MAX_MONTHS)} months at a time`, {
      errors: [{ path: '/querystring/to', message: `must be within ${String(MAX_MONTHS)} months of from` }],
    });
}

export function createScoreService(deps: {
  db: Executor;
  clock: Clock;
  jobs: Jobs;
  notifications: NotificationService;
  logger?: Pick<FastifyBaseLogger, 'error'>;
}) {
  const { db, clock, jobs } = deps;
  jobs.define({ name: CLOSE_MONTHS_QUEUE, options: { policy: 'stately', retryLimit: 0 } });

  /** Closes the months that are over, a page at a time; returns how many this pass closed. */
  async function closeMonths(now: Date = clock.now()): Promise<number> {
    const current = londonMonth(now);
    let closed = 0;
    for (;;) {
      const page = await listMonthsToClose(db, current, CLOSE_PAGE);
      for (const m of page) {
        const done = await inTransaction(db, async (trx) => {
          await lockMonthScores(trx, m.policyId);
          const figures = monthFigures(await listMonthTrips(trx, m.policyId, m.month, m.month));
          const tenant = { companyId: m.companyId, environment: m.environment };
          const first = await insertScoreMonth(trx, {
            ...m,
            score: figures.score,
            distanceMetres: figures.metres,
            provisional: !monthIsFinal(monthEndAt(m.month), now, figures.metres),
            at: now,
          });
          if (!first) return false;
          const policy = await policyUsageTermsQuery(trx).where('p.id', '=', m.policyId).executeTakeFirst();
          await recordEvent(
            trx,
            tenant,
            'score.month_closed',
            {
              policy_reference: policy?.policy_reference ?? null,
              month: m.month,
              score: figures.score,
              provisional: !monthIsFinal(monthEndAt(m.month), now, figures.metres),
              distance_miles: miles(figures.metres),
              scored_trips: figures.count,
            },
            now,
          );
          return true;
        });
        if (done) closed++;
      }
      if (page.length < CLOSE_PAGE) break;
    }
    return closed;
  }

  return {
    /**
     * GET /policys/:ref/scores: each London month from `from` to `to` (`YYYY-MM`, inclusive; default the
     * last 12 months to this one) with its distance-weighted score, provisional until the month is over
     * and 50 miles are scored.
     */
    async listMonths(
      tenant: Tenant,
      reader: ScoreReader,
      reference: string,
      query: ScoresQuery,
    ): Promise<PolicyScores> {
      const now = clock.now();
      const policy = await readablePolicy(db, tenant, reader, reference);
      const to = query.to ?? londonMonth(now);
      // Never before the API's first month (its years are 1000–9999, as the schema's pattern says).
      const from = query.from ?? addMonths(to, -Math.min(11, monthIndex(to) - monthIndex(FIRST_MONTH)));
      checkRange(from, to);
      const [trips, closed, disputed] = await Promise.all([
        listMonthTrips(db, policy.id, from, to),
        listClosedMonths(db, policy.id, from, to),
        listDisputedMonths(db, policy.id, from, to),
      ]);
      const months: MonthScore[] = monthsBetween(from, to).map((month) => {
        const figures = monthFigures(trips.filter((t) => t.month === month));
        return {
          month,
          score: figures.score,
          provisional: !monthIsFinal(monthEndAt(month), now, figures.metres),
          closed: closed.has(month),
          distance_miles: miles(figures.metres),
          scored_trips: figures.count,
          disputed: disputed.has(month),
        };
      });
      return { policy_reference: policy.policy_reference, months };
    },

    closeMonths,

    /** Disputes of driving events and their decisions. */
    disputes: createDisputeService(deps),

    async registerWorkers(): Promise<void> {
      await jobs.work(CLOSE_MONTHS_QUEUE, async () => {
        await closeMonths();
      });
      // Hourly: a month closes within the hour after London's midnight that ends it.
      await jobs.schedule(CLOSE_MONTHS_QUEUE, '5 * * * *', {}, 'Europe/London');
    },
  };
}

export type ScoreService = ReturnType<typeof createScoreService>;
