import type { PolicyInput, PolicyStatus, PolicyVersion, VersionType } from './policy-object-schemas.ts';

/** The stored snapshot of a version: the normalised policy object with its reference filled in. */
export type PolicySnapshot = Omit<PolicyInput, 'effective_date' | 'policy'> & {
  policy: PolicyInput['policy'] & { policy_reference: string };
};

export interface VersionRecord {
  readonly id: string;
  readonly sequence: number;
  readonly versionType: VersionType;
  readonly snapshot: PolicySnapshot;
  readonly effectiveAt: Date;
  readonly statementStartAt: Date | null;
  readonly statementEndAt: Date | null;
  readonly usagePremiumPence: number | null;
  readonly createdAt: Date;
  /** The term this version sets or ends (1 for the first, one more per renewal); null for statements. */
  readonly term: number | null;
  /** When a newer renewal replaced it, or a cancellation or a continuing renewal undid it. */
  readonly supersededAt: Date | null;
  /** Why it was written (a cancellation's reason), where the change gave one. */
  readonly reason?: string | null;
}

export type StoredStatus = 'active' | 'cancelled' | 'lapsed';

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** A version as the interface's version table shows it: denormalised fields, ISO dates, nulls for unknowns. */
export function versionView(policyReference: string, version: VersionRecord): PolicyVersion {
  const { policy, proposer, vehicle, pricing } = version.snapshot;
  return {
    version_type: version.versionType,
    policy_reference: policyReference,
    policy_version_reference: version.id,
    quote_reference: pricing.quote_reference ?? null,
    usage: policy.usage,
    vehicle_reg: vehicle.reg,
    address_postcode: policy.address.postcode,
    email: proposer.email,
    proposer_first_names: proposer.first_names,
    proposer_last_names: proposer.last_names,
    inception_date: policy.inception_date === undefined ? null : iso(policy.inception_date),
    effective_date: version.effectiveAt.toISOString(),
    start_date: iso(policy.start_date),
    end_date: iso(policy.end_date),
    upfront_rate: pricing.upfront_rate ?? null,
    subscription_rate: pricing.subscription_rate ?? null,
    usage_rate: pricing.usage_rate,
    upfront_premium: pricing.upfront_premium,
    subscription_premium: pricing.subscription_premium,
    usage_premium:
      version.versionType === 'st' && version.usagePremiumPence !== null
        ? version.usagePremiumPence / 100
        : (pricing.usage_premium ?? null),
    ipt_rate: pricing.ipt_rate ?? null,
    commission_rate: pricing.commission_rate ?? null,
    statement_start_date: version.statementStartAt?.toISOString() ?? null,
    statement_end_date: version.statementEndAt?.toISOString() ?? null,
    created_at: version.createdAt.toISOString(),
    superseded: version.supersededAt !== null,
  };
}

/**
 * The status clients see: a live policy is `pending` until its term starts, and `lapsed` once its term
 * has ended with nothing to follow it (`continues`: a stored renewal, or terms for automatic renewal),
 * before the daily job writes the lapse.
 */
export function statusAt(
  stored: StoredStatus,
  term: { readonly start_date: number; readonly end_date: number },
  now: Date,
  continues: boolean,
): PolicyStatus {
  if (stored !== 'active') return stored;
  if (now.getTime() < term.start_date * 1000) return 'pending';
  return now.getTime() > term.end_date * 1000 && !continues ? 'lapsed' : 'active';
}

/** Only a live policy can be adjusted, cancelled or renewed. */
export const isLive = (status: StoredStatus): boolean => status === 'active';

/** What telling the terms apart needs of a version. */
export interface TermMark {
  readonly sequence: number;
  readonly versionType: VersionType;
  readonly term: number | null;
  readonly supersededAt: Date | null;
}

/**
 * When a term's contract was concluded: its new business or renewal version written (and its documents
 * issued then), else its oldest version. A cancellation's cooling-off period runs from it.
 */
export function termConcludedAt(term: Term<Pick<VersionRecord, 'versionType' | 'createdAt'>>): Date {
  const opening = term.versions.find((v) => v.versionType === 'nb' || v.versionType === 'rn');
  return (opening ?? term.versions[0] ?? term.latest).createdAt;
}

/** One term of a policy: the versions that set it, oldest first, and the latest (the term as it stands). */
export interface Term<V> {
  readonly term: number;
  readonly versions: readonly V[];
  readonly latest: V;
}

/** Versions that set a term's cover and price and still count: nb, mta and rn, not superseded. */
export const setsTerm = (v: TermMark): boolean =>
  v.term !== null &&
  v.supersededAt === null &&
  (v.versionType === 'nb' || v.versionType === 'mta' || v.versionType === 'rn');

/**
 * The term in force at `at` and the one stored after it (a renewal written before its start): the
 * latest term that has started by then, else the first. A term's start is its latest version's start
 * date, so an adjustment that moves the start moves the term. Undefined when nothing sets a term.
 */
export function termsAt<V extends TermMark>(
  versions: readonly V[],
  at: Date,
  startSecondsOf: (version: V) => number,
): { current: Term<V>; next: Term<V> | undefined } | undefined {
  const byTerm = new Map<number, V[]>();
  for (const v of versions) {
    if (!setsTerm(v) || v.term === null) continue;
    const list = byTerm.get(v.term) ?? [];
    list.push(v);
    byTerm.set(v.term, list);
  }
  const terms: Array<Term<V>> = [];
  for (const [term, list] of [...byTerm.entries()].sort(([a], [b]) => a - b)) {
    const sorted = list.toSorted((a, b) => a.sequence - b.sequence);
    const latest = sorted.at(-1);
    if (latest !== undefined) terms.push({ term, versions: sorted, latest });
  }
  const first = terms[0];
  if (first === undefined) return undefined;
  const started = terms.filter((t) => startSecondsOf(t.latest) * 1000 <= at.getTime());
  const current = started.at(-1) ?? first;
  return { current, next: terms.find((t) => t.term > current.term) };
}

export interface RenewalTerms {
  readonly pricing: PolicyInput['pricing'];
  readonly startDate: number;
  readonly endDate: number;
  /** Blocks of the policy object sent for the new term, replacing the current ones (absent: carried over). */
  readonly replaced?: Partial<Pick<PolicySnapshot, 'proposer' | 'vehicle' | 'additional_drivers' | 'custom'>>;
  /** Fields of the policy block sent for the new term. */
  readonly policyFields?: Partial<PolicyInput['policy']>;
}

const LONDON_PARTS = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/London',
  hourCycle: 'h23',
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
});

interface LocalTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

function londonLocal(unixSeconds: number): LocalTime {
  const parts = Object.fromEntries(
    LONDON_PARTS.formatToParts(new Date(unixSeconds * 1000)).map((p) => [p.type, Number(p.value)]),
  );
  return {
    year: parts['year'] ?? 0,
    month: parts['month'] ?? 1,
    day: parts['day'] ?? 1,
    hour: parts['hour'] ?? 0,
    minute: parts['minute'] ?? 0,
    second: parts['second'] ?? 0,
  };
}

const asIfUtc = (t: LocalTime): number =>
  Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second) / 1000;

/** The instant (UNIX seconds) a Europe/London wall-clock time names (the later offset, if it repeats). */
function fromLondonLocal(local: LocalTime): number {
  let guess = asIfUtc(local);
  // Two corrections settle the offset (GMT or BST) of the instant itself.
  for (let i = 0; i < 2; i++) guess = asIfUtc(local) - (asIfUtc(londonLocal(guess)) - guess);
  return guess;
}

/**
 * Whole calendar months from one London wall-clock time to another, when it is exactly that. NOTE: from
 * a day a shorter month lacks (29 February, a 31st), the months end on that month's last day (as
 * `addMonths` puts them) or, read the other way, at the start of the 1st after it: a year's term from
 * 29 February 2024 ends at the start of 28 February 2025 or of 1 March 2025, and either is twelve months,
 * so its renewals keep to a year instead of keeping its 365 or 366 days and drifting a day a year.
 */
function wholeMonthsBetween(from: LocalTime, to: LocalTime): number | undefined {
  const months = (to.year - from.year) * 12 + (to.month - from.month);
  if (to.hour !== from.hour || to.minute !== from.minute || to.second !== from.second) return undefined;
  if (months > 0 && addMonths(from, months).day === to.day) return months;
  if (to.day === 1 && months > 1) {
    const lastDay = addMonths(from, months - 1);
    if (lastDay.day < from.day) return months - 1;
  }
  return undefined;
}

function addMonths(local: LocalTime, months: number): LocalTime {
  const index = local.year * 12 + (local.month - 1) + months;
  const year = Math.floor(index / 12);
  const month = (index % 12) + 1;
  // 29 February falls on 28 February in a common year, as a 31st falls on a shorter month's last day.
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return { ...local, year, month, day: Math.min(local.day, lastDay) };
}

/**
 * The next term, in UNIX seconds: it starts 1 s after the current one ends (terms are inclusive of
 * their last second, so they neither overlap nor leave a gap) unless told otherwise, and ends on the
 * same Europe/London calendar anniversary and wall-clock time as the current one: a term of whole
 * calendar months (a year, most often) is followed by one as many months long, so ten yearly renewals
 * all end at 23:59:59 on the same date whatever BST does. A term of another length keeps its length.
 * The month count is read from the term's start to the second after its end, wall clock to wall clock.
 */
export function nextTerm(
  current: { startDate: number; endDate: number },
  requested: { startDate?: number | undefined; endDate?: number | undefined },
): { startDate: number; endDate: number } {
  const startDate = requested.startDate ?? current.endDate + 1;
  if (requested.endDate !== undefined) return { startDate, endDate: requested.endDate };
  const months = wholeMonthsBetween(londonLocal(current.startDate), londonLocal(current.endDate + 1));
  if (months === undefined || requested.startDate !== undefined)
    return { startDate, endDate: startDate + (current.endDate - current.startDate) };
  return { startDate, endDate: fromLondonLocal(addMonths(londonLocal(current.endDate + 1), months)) - 1 };
}

/** The snapshot of a renewal: the latest snapshot with the new term's dates, pricing and policy year. */
export function renewedSnapshot(latest: PolicySnapshot, terms: RenewalTerms): PolicySnapshot {
  const snapshot = structuredClone(latest);
  Object.assign(snapshot, structuredClone(terms.replaced ?? {}));
  snapshot.policy = {
    ...snapshot.policy,
    ...structuredClone(terms.policyFields ?? {}),
    policy_reference: latest.policy.policy_reference,
    start_date: terms.startDate,
    end_date: terms.endDate,
    policy_year: terms.policyFields?.policy_year ?? (latest.policy.policy_year ?? 1) + 1,
  };
  snapshot.pricing = structuredClone(terms.pricing);
  delete snapshot.payment;
  return snapshot;
}

/** What the daily job does with a live policy whose term has ended: renew on stored terms, or lapse. */
export function termEndAction(
  policy: { status: StoredStatus; endAt: Date; autoRenew: boolean; hasRenewalTerms: boolean },
  now: Date,
): 'renew' | 'lapse' | 'none' {
  if (policy.status !== 'active' || policy.endAt.getTime() > now.getTime()) return 'none';
  return policy.autoRenew && policy.hasRenewalTerms ? 'renew' : 'lapse';
}

/**
 * How far a policy is billed: the end (inclusive, whole seconds) of the latest statement's period, or
 * undefined before the first. A cancellation takes effect no earlier: the statements already issued
 * billed the cover up to it, and a cancellation does not unbill them.
 */
export function billedThrough(
  versions: ReadonlyArray<Pick<VersionRecord, 'versionType' | 'statementEndAt' | 'supersededAt'>>,
): Date | undefined {
  let latest: Date | undefined;
  for (const version of versions) {
    const end = version.versionType === 'st' && version.supersededAt === null ? version.statementEndAt : null;
    if (end !== null && (latest === undefined || end.getTime() > latest.getTime())) latest = end;
  }
  return latest;
}
