/** What a crash's first notice of loss holds, and when it is complete: pure, the time passed in. */

/** The crash file's trace: positions from 60 s before the impact to 30 s after (as telematics insurers keep). */
export const TRACE_BEFORE_SECONDS = 60;
export const TRACE_AFTER_SECONDS = 30;
/** Positions sent late by a device are waited for this long past the trace's end before the file is final. */
export const TRACE_GRACE_SECONDS = 10;
/** The most positions a trace holds (one a second over 90 s, with room for faster devices). */
export const TRACE_MAX_POSITIONS = 1000;
/** Hours a policyholder has to confirm or cancel a draft before it goes to staff, unless the company sets its own. */
export const DEFAULT_RESPONSE_HOURS = 24;

/** The trace's window around the impact, [from, to]. */
export function traceWindow(occurredAt: Date): { from: Date; to: Date } {
  return {
    from: new Date(occurredAt.getTime() - TRACE_BEFORE_SECONDS * 1000),
    to: new Date(occurredAt.getTime() + TRACE_AFTER_SECONDS * 1000),
  };
}

/** When the trace may be taken as final: its end, plus the grace for late positions. */
export const traceFinalAt = (occurredAt: Date): Date =>
  new Date(occurredAt.getTime() + (TRACE_AFTER_SECONDS + TRACE_GRACE_SECONDS) * 1000);

/** By when the policyholder should answer a draft opened at `openedAt`. */
export const respondBy = (openedAt: Date, responseHours: number): Date =>
  new Date(openedAt.getTime() + responseHours * 3_600_000);

/** A version of the policy as the claim needs it. */
export interface CoverVersion {
  readonly id: string;
  readonly sequence: number;
  readonly versionType: string;
  readonly effectiveAt: Date;
  readonly supersededAt: Date | null;
  readonly snapshot: {
    readonly policy?:
      { readonly cover?: unknown; readonly start_date?: unknown; readonly end_date?: unknown } | undefined;
    readonly vehicle?: Readonly<Record<string, unknown>> | undefined;
    readonly proposer?: Readonly<Record<string, unknown>> | undefined;
    readonly additional_drivers?: ReadonlyArray<Readonly<Record<string, unknown>>> | undefined;
  };
}

/** Versions that set what is covered: not statements, not renewals later undone. */
const SETS_COVER = new Set(['nb', 'mta', 'rn', 'cn', 'ls']);

/**
 * The version in force at `at`: of the versions that set cover and were never superseded, the latest to
 * take effect by then (the latest written among equals). Undefined when none had taken effect.
 */
export function versionInForce<V extends CoverVersion>(versions: readonly V[], at: Date): V | undefined {
  let best: V | undefined;
  for (const v of versions) {
    if (!SETS_COVER.has(v.versionType) || v.supersededAt !== null) continue;
    if (v.effectiveAt.getTime() > at.getTime()) continue;
    if (
      best === undefined ||
      v.effectiveAt.getTime() > best.effectiveAt.getTime() ||
      (v.effectiveAt.getTime() === best.effectiveAt.getTime() && v.sequence > best.sequence)
    )
      best = v;
  }
  return best;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const driverName = (d: Readonly<Record<string, unknown>> | undefined): string | null =>
  d === undefined
    ? null
    : [text(d['first_names']), text(d['last_names'])].filter((p) => p !== null).join(' ') || null;

/** What the claim keeps of the version in force: cover, drivers, vehicle, and whether the term covered the instant. */
export interface CoverSummary {
  readonly policy_version_reference: string;
  readonly version_type: string;
  readonly in_force: boolean;
  readonly cover: string | null;
  readonly drivers: string[];
  readonly vehicle: { reg: string | null; make: string | null; model: string | null };
}

/** The cover in force at `at` as the claim shows it; `in_force` false after a cancellation or lapse, or outside the term. */
export function coverSummary(version: CoverVersion, at: Date): CoverSummary {
  const { policy, vehicle, proposer, additional_drivers: others } = version.snapshot;
  const atS = at.getTime() / 1000;
  const start = typeof policy?.start_date === 'number' ? policy.start_date : undefined;
  const end = typeof policy?.end_date === 'number' ? policy.end_date : undefined;
  const inTerm = (start === undefined || atS >= start) && (end === undefined || atS < end);
  return {
    policy_version_reference: version.id,
    version_type: version.versionType,
    in_force: inTerm && version.versionType !== 'cn' && version.versionType !== 'ls',
    cover: text(policy?.cover),
    drivers: [proposer, ...(others ?? [])].map(driverName).filter((n): n is string => n !== null),
    vehicle: { reg: text(vehicle?.['reg']), make: text(vehicle?.['make']), model: text(vehicle?.['model']) },
  };
}
