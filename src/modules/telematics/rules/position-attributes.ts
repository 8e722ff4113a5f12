/**
 * A position's other attributes: what a tracker sends beyond the fields Milepost reads (altitude,
 * satellites, hdop, battery, rssi, its own I/O values), kept with the position and given back as it
 * came. Bounded, so that a position stays a small row however chatty the device: at most
 * MAX_ATTRIBUTES_PER_POSITION of them, named by at most MAX_ATTRIBUTE_NAME_CHARS characters of
 * ATTRIBUTE_NAME_PATTERN, each a number, a boolean or a string of at most MAX_ATTRIBUTE_TEXT_CHARS
 * characters. Pure.
 */

export const MAX_ATTRIBUTES_PER_POSITION = 32;
export const MAX_ATTRIBUTE_NAME_CHARS = 64;
export const MAX_ATTRIBUTE_TEXT_CHARS = 256;
/** A letter or `_`, then letters, digits, `_`, `.` and `-`: names every tracker protocol uses, nothing to escape. */
export const ATTRIBUTE_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_.-]*$';
const NAME = new RegExp(ATTRIBUTE_NAME_PATTERN);

export type AttributeValue = number | string | boolean;
export type PositionAttributes = Readonly<Record<string, AttributeValue>>;

/** The fields of a position Milepost reads itself; every other key is an attribute. */
export const KNOWN_POSITION_FIELDS: ReadonlySet<string> = new Set([
  'time',
  'lat',
  'lon',
  'speed_kmh',
  'heading',
  'accuracy_m',
  'ignition',
  'odometer_metres',
]);

export interface AttributeProblem {
  /** Index in the batch's `positions`. */
  readonly index: number;
  /** The attribute at fault; undefined when it is the position's (too many). */
  readonly name?: string;
  readonly message: string;
}

function valueProblem(value: unknown): string | undefined {
  if (typeof value === 'boolean') return undefined;
  if (typeof value === 'number')
    return Number.isFinite(value) ? undefined : 'must be a finite number (an attribute)';
  // Characters as the schema counts them: code points, not UTF-16 units.
  if (typeof value === 'string')
    return value.length <= MAX_ATTRIBUTE_TEXT_CHARS || Array.from(value).length <= MAX_ATTRIBUTE_TEXT_CHARS
      ? undefined
      : `must be at most ${String(MAX_ATTRIBUTE_TEXT_CHARS)} characters (an attribute)`;
  return 'must be a number, a string or a boolean (an attribute)';
}

/** The first attribute of a batch's positions out of bounds, or undefined when all are within them. */
export function findAttributeProblem(positions: readonly object[]): AttributeProblem | undefined {
  for (let index = 0; index < positions.length; index++) {
    const position = positions[index] as Record<string, unknown>;
    let count = 0;
    for (const name of Object.keys(position)) {
      if (KNOWN_POSITION_FIELDS.has(name)) continue;
      count++;
      if (name.length > MAX_ATTRIBUTE_NAME_CHARS)
        return {
          index,
          name,
          message: `is an attribute name longer than ${String(MAX_ATTRIBUTE_NAME_CHARS)} characters`,
        };
      if (!NAME.test(name))
        return {
          index,
          name,
          message:
            'is not an attribute name: it must start with a letter or `_` and hold only letters, digits, `_`, `.` and `-`',
        };
      const problem = valueProblem(position[name]);
      if (problem !== undefined) return { index, name, message: problem };
    }
    if (count > MAX_ATTRIBUTES_PER_POSITION)
      return {
        index,
        message: `has ${String(count)} other attributes; at most ${String(MAX_ATTRIBUTES_PER_POSITION)}`,
      };
  }
  return undefined;
}

/**
 * The first attribute problem of a batch as a field error: its JSON pointer under `root` (where the
 * batch sits in what was received, e.g. `/body`) and its message; undefined when there is none.
 */
export function attributeFieldError(
  positions: readonly object[],
  root: string,
): { path: string; message: string } | undefined {
  const problem = findAttributeProblem(positions);
  if (problem === undefined) return undefined;
  const name =
    problem.name === undefined ? '' : `/${problem.name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
  return { path: `${root}/positions/${String(problem.index)}${name}`, message: problem.message };
}

/** A position's attributes (its keys other than the known fields), or null when it has none. */
export function otherAttributes(position: object): PositionAttributes | null {
  let attributes: Record<string, AttributeValue> | null = null;
  for (const [name, value] of Object.entries(position)) {
    if (KNOWN_POSITION_FIELDS.has(name) || value === undefined) continue;
    // A dictionary without a prototype: no name can reach one (input safety refuses them first too).
    attributes ??= Object.create(null) as Record<string, AttributeValue>;
    attributes[name] = value as AttributeValue;
  }
  return attributes;
}
