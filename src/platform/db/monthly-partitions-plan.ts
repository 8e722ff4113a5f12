/**
 * Which monthly partitions of a table should exist at `now`, and which have passed retention. Pure.
 * Months are UTC calendar months: partition `<table>_pYYYY_MM` holds [first of the month, first of the
 * next); `<table>_default` takes whatever no month covers.
 */

/** Months ahead of the current one that the worker keeps ready. */
export const PARTITION_MONTHS_AHEAD = 2;

export interface Month {
  readonly year: number;
  /** 1–12. */
  readonly month: number;
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** `positions_p2025_06` for June 2025 of `positions`. */
export const partitionName = (table: string, m: Month): string =>
  `${table}_p${pad(m.year, 4)}_${pad(m.month, 2)}`;

/** The DEFAULT partition's name: rows of months that have no partition of their own. */
export const defaultPartitionName = (table: string): string => `${table}_default`;

/** The month a partition of `table` holds, or undefined for any other name (the DEFAULT one included). */
export function parsePartitionName(table: string, name: string): Month | undefined {
  const prefix = `${table}_p`;
  if (!name.startsWith(prefix)) return undefined;
  const match = /^(\d{4})_(\d{2})$/.exec(name.slice(prefix.length));
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
  /** Existing partitions (by name, oldest first) whose whole month is older than the retention cutoff. */
  readonly drop: readonly string[];
  /** Rows before this instant are past retention; undefined: the table is kept whole. */
  readonly cutoff: Date | undefined;
}

/**
 * The current month and PARTITION_MONTHS_AHEAD after it must exist; a partition is dropped once its
 * whole month ends at or before `now` − `retentionDays` (a partition only partly past retention stays,
 * so rows are kept at least `retentionDays`, and up to a month longer). Without `retentionDays`
 * (undefined) nothing is dropped.
 */
export function planPartitions(
  table: string,
  now: Date,
  retentionDays: number | undefined,
  existing: readonly string[],
): PartitionPlan {
  const cutoff =
    retentionDays === undefined ? undefined : new Date(now.getTime() - retentionDays * 86_400_000);
  const have = new Set(existing);
  const current = monthOf(now);
  const create: Month[] = [];
  for (let i = 0; i <= PARTITION_MONTHS_AHEAD; i++) {
    const m = addMonths(current, i);
    if (!have.has(partitionName(table, m))) create.push(m);
  }
  const drop = existing.filter((name) => {
    const m = parsePartitionName(table, name);
    return m !== undefined && cutoff !== undefined && monthEnd(m).getTime() <= cutoff.getTime();
  });
  return { create, drop: drop.sort(), cutoff };
}
