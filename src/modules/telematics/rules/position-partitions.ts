/**
 * Which monthly partitions of `positions` should exist at `now`, and which have passed retention. Pure.
 * Months are UTC calendar months: partition `positions_pYYYY_MM` holds [first of the month, first of
 * the next).
 */

/** Months ahead of the current one that the worker keeps ready. */
export const PARTITION_MONTHS_AHEAD = 2;

export interface Month {
  readonly year: number;
  /** 1–12. */
  readonly month: number;
}

const NAME = /^positions_p(\d{4})_(\d{2})$/;

export const partitionName = (m: Month): string =>
  `positions_p${String(m.year).padStart(4, '0')}_${String(m.month).padStart(2, '0')}`;

export function parsePartitionName(name: string): Month | undefined {
  const match = NAME.exec(name);
  if (match === null) return undefined;
  const month = Number(match[2]);
  return month >= 1 && month <= 12 ? { year: Number(match[1]), month } : undefined;
}

export const monthOf = (at: Date): Month => ({ year: at.getUTCFullYear(), month: at.getUTCMonth() + 1 });
export const addMonths = (m: Month, n: number): Month => {
  const index = m.year * 12 + (m.month - 1) + n;
  return { year: Math.floor(index / 12), month: (index % 12) + 1 };
};
export const monthStart = (m: Month): Date => new Date(Date.UTC(m.year, m.month - 1, 1));
export const monthEnd = (m: Month): Date => monthStart(addMonths(m, 1));

export interface PartitionPlan {
  /** Months to create, oldest first. */
  readonly create: readonly Month[];
  /** Existing partitions (by name) whose whole month is older than the retention cutoff. */
  readonly drop: readonly string[];
  /** Positions before this instant are past retention. */
  readonly cutoff: Date;
}

/**
 * The current month and PARTITION_MONTHS_AHEAD after it must exist; a partition is dropped once its
 * whole month ends at or before `now` − `retentionDays` (a partition only partly past retention stays,
 * so positions are kept at least `retentionDays`, and up to a month longer).
 */
export function planPartitions(now: Date, retentionDays: number, existing: readonly string[]): PartitionPlan {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  const have = new Set(existing);
  const current = monthOf(now);
  const create: Month[] = [];
  for (let i = 0; i <= PARTITION_MONTHS_AHEAD; i++) {
    const m = addMonths(current, i);
    if (!have.has(partitionName(m))) create.push(m);
  }
  const drop = existing.filter((name) => {
    const m = parsePartitionName(name);
    return m !== undefined && monthEnd(m).getTime() <= cutoff.getTime();
  });
  return { create, drop: drop.sort(), cutoff };
}
