import { randomBytes, randomInt } from 'node:crypto';

/**
 * The first 24 characters of time-ordered ids (the UUIDv7 layout: this millisecond, then random bits)
 * that end in a policy's index: each primary key grows at its right edge, as a sequence's would,
 * instead of at a random page (random uuids made the seed slow down as the indexes outgrew memory).
 */
function timeOrderedPrefix(): string {
  const time = Date.now().toString(16).padStart(12, '0');
  const random = randomBytes(3).toString('hex');
  const variant = (8 + randomInt(4)).toString(16);
  return `${time.slice(0, 8)}-${time.slice(8)}-7${random.slice(0, 3)}-${variant}${random.slice(3)}-`;
}

/** The first 24 characters of each kind's ids in a seeding; a policy's index makes the last 12. */
export interface IdPrefixes {
  readonly user: string;
  readonly policy: string;
  readonly version: string;
  readonly statement: string;
  readonly journey: string;
}

/** A seeding's id prefixes, one per kind, drawn now. */
export function idPrefixes(): IdPrefixes {
  return {
    user: timeOrderedPrefix(),
    policy: timeOrderedPrefix(),
    version: timeOrderedPrefix(),
    statement: timeOrderedPrefix(),
    journey: timeOrderedPrefix(),
  };
}
