/**
 * Which rules of a product bill a given time. Pure: no I/O, time is passed in.
 */
export interface VersionInTime {
  readonly sequence: number;
  readonly effectiveFrom: Date;
}

/**
 * The version in force at `at`: the one with the latest `effectiveFrom` not after `at` (the later
 * written when two share it). Before the first version took effect, the first one: a product's
 * rules apply from its creation, and a policy that started earlier is billed by them too.
 */
export function productVersionAt<V extends VersionInTime>(versions: readonly V[], at: Date): V | undefined {
  let found: V | undefined;
  for (const v of versions) {
    if (v.effectiveFrom.getTime() > at.getTime()) continue;
    if (
      found === undefined ||
      v.effectiveFrom.getTime() > found.effectiveFrom.getTime() ||
      (v.effectiveFrom.getTime() === found.effectiveFrom.getTime() && v.sequence > found.sequence)
    )
      found = v;
  }
  return found ?? versions[0];
}
