/**
 * Pure rules of erasure (UK GDPR art. 17, issue 21): when a policyholder may be erased, and what their
 * records look like afterwards. No clock, no I/O: the service passes the time and the rows in.
 */

import { postcodeDistrict } from '../../../platform/postcodes.ts';

const DAY_MS = 86_400_000;

/** What erased names become: the bordereau's surname column then reads `Erased`. */
export const ERASED_NAME = 'Erased';
/** What an erased free-text occurrence of a personal value becomes. */
export const ERASED_TEXT = '[erased]';
/** A date of birth the schema still accepts (readers treat `dob` as required) that names nobody. */
export const ERASED_DATE = '1900-01-01';
/** A password hash no password verifies against (argon2 rejects it as malformed, which reads as false). */
export const UNUSABLE_PASSWORD_HASH = '!erased';
/** Personal values shorter than this are not searched for in free text: they would match ordinary words. */
export const MIN_NEEDLE_LENGTH = 3;

/** The pseudonymous email of an erased account: unique (as the reference is), never deliverable. */
export const erasedEmail = (userReference: string): string =>
  `erased-${userReference.toLowerCase()}@erased.invalid`;

/** The pseudonymous username of an erased account (unique per tenant, as the reference is). */
export const erasedUsername = (userReference: string): string => `erased-${userReference.toLowerCase()}`;

export type ErasureDecision =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: 'RETENTION_NOT_PASSED'; readonly allowedFrom: Date };

/**
 * Erasure is allowed once every policy has ended and `retentionDays` have passed since the last end
 * (`policyEnds`: each policy's current end, which a cancellation brings forward), or when forced by a
 * legal instruction. Without policies there is nothing to keep.
 */
export function decideErasure(input: {
  readonly policyEnds: readonly Date[];
  readonly now: Date;
  readonly retentionDays: number;
  readonly force: boolean;
}): ErasureDecision {
  if (input.force || input.policyEnds.length === 0) return { ok: true };
  const lastEndMs = Math.max(...input.policyEnds.map((end) => end.getTime()));
  // NOTE: a policy still running ends after now, so its end plus the retention is later still: one
  // comparison covers "every policy has ended" and "the retention has passed".
  const allowedFrom = new Date(lastEndMs + input.retentionDays * DAY_MS);
  return input.now.getTime() >= allowedFrom.getTime()
    ? { ok: true }
    : { ok: false, reason: 'RETENTION_NOT_PASSED', allowedFrom };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const textOf = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined;

/** A person block (the proposer or a named driver) reduced to the pseudonyms the schema requires. */
function erasedPerson(withEmail: string | undefined): JsonObject {
  return {
    first_names: ERASED_NAME,
    last_names: ERASED_NAME,
    ...(withEmail === undefined ? {} : { email: withEmail }),
    dob: ERASED_DATE,
  };
}

/**
 * A policy snapshot (or stored renewal terms, which share its blocks) after erasure: the proposer and
 * each named driver keep only pseudonymous names, email and date of birth (every other personal field,
 * phone, licence, employment, convictions and claims included, is dropped); the address keeps its
 * country and its postcode's district (the bordereau's district column), `line_1` becomes `Erased`;
 * the vehicle loses its VIN and parking place and keeps its overnight postcode's district; `custom`
 * (free key/values a client may have filled with anything) is dropped. Pricing, dates, cover and the
 * payment block (processor ids) are financial records and stay. Idempotent.
 */
export function pseudonymiseSnapshot(snapshot: unknown, userReference: string): unknown {
  if (!isObject(snapshot)) return snapshot;
  const out: JsonObject = { ...snapshot };
  if (isObject(out['proposer'])) out['proposer'] = erasedPerson(erasedEmail(userReference));
  if (Array.isArray(out['additional_drivers']))
    out['additional_drivers'] = out['additional_drivers'].map(() => erasedPerson(undefined));
  const policy = out['policy'];
  if (isObject(policy) && isObject(policy['address'])) {
    const address = policy['address'];
    const postcode = textOf(address['postcode']);
    out['policy'] = {
      ...policy,
      address: {
        line_1: ERASED_NAME,
        ...(address['country'] === undefined ? {} : { country: address['country'] }),
        postcode: postcode === undefined ? '' : postcodeDistrict(postcode),
      },
    };
  }
  const vehicle = out['vehicle'];
  if (isObject(vehicle)) {
    const { vin: _vin, parked_location: _parked, overnight_postcode: overnight, ...rest } = vehicle;
    const overnightText = textOf(overnight);
    out['vehicle'] = {
      ...rest,
      ...(overnightText === undefined ? {} : { overnight_postcode: postcodeDistrict(overnightText) }),
    };
  }
  delete out['custom'];
  return out;
}

/** The account's own fields that name the person. */
export interface AccountValues {
  readonly email: string;
  readonly username: string;
  readonly firstNames: string;
  readonly lastNames: string;
}

const PERSON_TEXT_FIELDS = [
  'first_names',
  'last_names',
  'email',
  'phone_number',
  'mobile_number',
  'dob',
  'licence_issued_date',
  'residency_date',
] as const;

function addPerson(values: Set<string>, person: unknown): void {
  if (!isObject(person)) return;
  for (const field of PERSON_TEXT_FIELDS) {
    const value = textOf(person[field]);
    if (value !== undefined) values.add(value);
  }
  const first = textOf(person['first_names']);
  const last = textOf(person['last_names']);
  if (first !== undefined && last !== undefined) values.add(`${first} ${last}`);
}

/**
 * Every personal value of the account and of the snapshots (and renewal terms) of their policies: what
 * must appear nowhere once they are erased. Erasure searches the free text of their records for these
 * (names, email, username, phone numbers, address lines, postcodes with and without the space, dates
 * of birth and licence, VIN); values shorter than MIN_NEEDLE_LENGTH are left out. Pseudonyms are never
 * returned, so running it over erased records finds nothing.
 */
export function personalValues(account: AccountValues, snapshots: readonly unknown[]): string[] {
  const values = new Set<string>([
    account.email,
    account.username,
    account.firstNames,
    account.lastNames,
    `${account.firstNames} ${account.lastNames}`,
  ]);
  for (const snapshot of snapshots) {
    if (!isObject(snapshot)) continue;
    addPerson(values, snapshot['proposer']);
    const drivers = snapshot['additional_drivers'];
    if (Array.isArray(drivers)) for (const driver of drivers) addPerson(values, driver);
    const policy = snapshot['policy'];
    const address = isObject(policy) ? policy['address'] : undefined;
    if (isObject(address)) {
      for (const field of ['line_1', 'line_2', 'line_3'] as const) {
        const value = textOf(address[field]);
        if (value !== undefined) values.add(value);
      }
      addPostcode(values, address['postcode']);
    }
    const vehicle = snapshot['vehicle'];
    if (isObject(vehicle)) {
      const vin = textOf(vehicle['vin']);
      if (vin !== undefined) values.add(vin);
      addPostcode(values, vehicle['overnight_postcode']);
    }
  }
  const pseudonyms = new Set(
    [ERASED_NAME, `${ERASED_NAME} ${ERASED_NAME}`, ERASED_DATE, ERASED_TEXT].map((p) => p.toLowerCase()),
  );
  return (
    [...values]
      .map((value) => value.trim())
      .filter(
        (value) =>
          value.length >= MIN_NEEDLE_LENGTH &&
          !pseudonyms.has(value.toLowerCase()) &&
          !value.toLowerCase().endsWith('@erased.invalid') &&
          !value.toLowerCase().startsWith('erased-'),
      )
      // Longest first: a full name is replaced whole before its first name is.
      .sort((a, b) => b.length - a.length || a.localeCompare(b))
  );
}

function addPostcode(values: Set<string>, postcode: unknown): void {
  const text = textOf(postcode);
  if (text === undefined) return;
  const upper = text.trim().toUpperCase();
  // Only a full postcode names a street; a district (what erasure keeps) does not.
  if (postcodeDistrict(upper) === upper.replace(/\s+/g, '')) return;
  values.add(upper);
  values.add(upper.replace(/\s+/g, ''));
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A case-insensitive matcher of any of `needles` (longest first), or undefined when there are none. */
export function needleMatcher(needles: readonly string[]): RegExp | undefined {
  if (needles.length === 0) return undefined;
  const sorted = [...needles].sort((a, b) => b.length - a.length);
  return new RegExp(sorted.map(escapeRegExp).join('|'), 'giu');
}

/** `text` with every occurrence of a needle replaced by ERASED_TEXT. */
export function scrubText(text: string, matcher: RegExp | undefined): string {
  if (matcher === undefined) return text;
  matcher.lastIndex = 0;
  return text.replace(matcher, ERASED_TEXT);
}

/**
 * A JSON value with every string (not keys) scrubbed of the needles; `changed` tells whether anything
 * was replaced, so that untouched rows are not written.
 */
export function scrubJson(value: unknown, matcher: RegExp | undefined): { value: unknown; changed: boolean } {
  if (matcher === undefined) return { value, changed: false };
  const state = { changed: false };
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') {
      const scrubbed = scrubText(node, matcher);
      if (scrubbed !== node) state.changed = true;
      return scrubbed;
    }
    if (Array.isArray(node)) return node.map(walk);
    if (isObject(node)) {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) out[key] = walk(child);
      return out;
    }
    return node;
  };
  const result = walk(value);
  return { value: state.changed ? result : value, changed: state.changed };
}
