/*
 * What the console reads of a quote: the quote as asked (`input`, typed `unknown` by the API because it is
 * the policy object as sent, or its pseudonym) and the breakdown's exact amounts in pence.
 */

/** The parts of a quote's input the quote page shows; empty strings where the input has none. */
export interface Applicant {
  readonly name: string;
  readonly email: string;
  readonly drivers: readonly string[];
  readonly vehicle: string;
  readonly reg: string;
  readonly valuePounds: number | undefined;
  readonly address: string;
  readonly cover: string;
  /** UNIX seconds, as the policy object has them. */
  readonly startAt: number | undefined;
  readonly endAt: number | undefined;
  readonly yearlyMileage: number | undefined;
}

type Fields = Readonly<Record<string, unknown>>;

const objectAt = (value: unknown, key: string): Fields => {
  const inner = typeof value === 'object' && value !== null ? (value as Fields)[key] : undefined;
  return typeof inner === 'object' && inner !== null && !Array.isArray(inner) ? (inner as Fields) : {};
};
const text = (fields: Fields, key: string): string => {
  const value = fields[key];
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
};
const numberAt = (fields: Fields, key: string): number | undefined => {
  const value = fields[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
};
const joined = (parts: readonly string[], separator: string): string =>
  parts.filter((part) => part !== '').join(separator);
const personName = (person: Fields): string =>
  joined([text(person, 'first_names'), text(person, 'last_names')], ' ');

/** The applicant, drivers, vehicle and cover of a quote's input, read defensively (any field may be absent). */
export function applicantOf(input: unknown): Applicant {
  const policy = objectAt(input, 'policy');
  const proposer = objectAt(input, 'proposer');
  const vehicle = objectAt(input, 'vehicle');
  const address = objectAt(policy, 'address');
  const extra =
    typeof input === 'object' && input !== null ? (input as Fields)['additional_drivers'] : undefined;
  const others = Array.isArray(extra)
    ? extra.map((driver: unknown) =>
        personName(typeof driver === 'object' && driver !== null ? (driver as Fields) : {}),
      )
    : [];
  return {
    name: personName(proposer),
    email: text(proposer, 'email'),
    drivers: [personName(proposer), ...others].filter((name) => name !== ''),
    vehicle: joined([text(vehicle, 'make'), text(vehicle, 'model')], ' '),
    reg: text(vehicle, 'reg'),
    valuePounds: numberAt(vehicle, 'current_value'),
    address: joined(
      ['line_1', 'line_2', 'line_3', 'city', 'postcode'].map((key) => text(address, key)),
      ', ',
    ),
    cover: text(policy, 'cover'),
    startAt: numberAt(policy, 'start_date'),
    endAt: numberAt(policy, 'end_date'),
    yearlyMileage: numberAt(vehicle, 'estimated_yearly_mileage'),
  };
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * An exact amount in pence (a decimal string, or an integer) as pounds, every digit kept: "31234.5678" is
 * "£312.345678", 30000 is "£300.00". Done on the digits, so no amount goes through a binary float.
 */
export function exactPounds(amountPence: string | number): string {
  const written = String(amountPence);
  const match = DECIMAL.exec(written);
  if (match === null) return written;
  const [, sign = '', whole = '0', fraction = ''] = match;
  const padded = whole.padStart(3, '0');
  const pounds = padded.slice(0, -2).replace(/^0+(?=\d)/, '');
  const decimals = `${padded.slice(-2)}${fraction}`.replace(/(\d{2}\d*?)0+$/, '$1');
  return `${sign}£${pounds.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${decimals}`;
}
