// Coded values in words, in one place: every page shows a code through these, never raw.
import type { components, PolicyDetails } from '../../../sdk/src/index.ts';

/**
 * The policy object's coded fields (the interface leaves their values open: free text). Listed here are the
 * codes insurers send for them, as in the API's examples; a code not listed is shown as words made from it.
 */
export type CodedField =
  | 'cover'
  | 'usage'
  | 'colour'
  | 'fuel'
  | 'type'
  | 'body_type'
  | 'owner'
  | 'keeper'
  | 'parked_location'
  | 'licence_type'
  | 'employment'
  | 'relationship'
  | 'modification';

const OWNERS: Readonly<Record<string, string>> = {
  proposer: 'You',
  policyholder: 'You',
  spouse: 'Your spouse or partner',
  partner: 'Your spouse or partner',
  parent: 'Your parent',
  company: 'A company',
  employer: 'Your employer',
  leasing: 'A leasing company',
  lease: 'A leasing company',
  finance: 'A finance company',
};

const LABELS: Readonly<Record<CodedField, Readonly<Record<string, string>>>> = {
  cover: {
    comprehensive: 'Comprehensive',
    comp: 'Comprehensive',
    third_party_fire_theft: 'Third party, fire and theft',
    third_party_fire_and_theft: 'Third party, fire and theft',
    tpft: 'Third party, fire and theft',
    third_party: 'Third party only',
    third_party_only: 'Third party only',
    tpo: 'Third party only',
  },
  usage: {
    sdp: 'Social, domestic and pleasure',
    sdp_commuting: 'Social, domestic and pleasure, with commuting',
    sdpc: 'Social, domestic and pleasure, with commuting',
    commuting: 'Social, domestic and pleasure, with commuting',
    business: 'Business use',
    business_1: 'Business use (class 1)',
    business_2: 'Business use (class 2)',
    business_3: 'Commercial travelling (class 3)',
  },
  // Colours read as themselves ("blue" → "Blue", "dark_grey" → "Dark grey"); only odd codes are listed.
  colour: { gray: 'Grey', multi: 'Multicoloured', multicolour: 'Multicoloured' },
  fuel: {
    petrol: 'Petrol',
    diesel: 'Diesel',
    electric: 'Electric',
    ev: 'Electric',
    bev: 'Electric',
    hybrid: 'Hybrid',
    hev: 'Hybrid',
    plug_in_hybrid: 'Plug-in hybrid',
    phev: 'Plug-in hybrid',
    lpg: 'LPG',
    hydrogen: 'Hydrogen',
  },
  type: { car: 'Car', van: 'Van', motorcycle: 'Motorcycle', motorbike: 'Motorcycle', motorhome: 'Motorhome' },
  body_type: {
    hatchback: 'Hatchback',
    saloon: 'Saloon',
    estate: 'Estate',
    suv: 'SUV',
    mpv: 'MPV',
    coupe: 'Coupé',
    convertible: 'Convertible',
    cabriolet: 'Convertible',
    pickup: 'Pick-up',
    pick_up: 'Pick-up',
  },
  owner: OWNERS,
  keeper: OWNERS,
  parked_location: {
    driveway: 'On a driveway',
    drive: 'On a driveway',
    garage: 'In a garage',
    locked_garage: 'In a locked garage',
    street: 'On the street',
    road: 'On the street',
    car_park: 'In a car park',
    private_property: 'On private property',
  },
  licence_type: {
    full_uk: 'Full UK licence',
    provisional_uk: 'Provisional UK licence',
    full_eu: 'Full EU licence',
    full_eea: 'Full EEA licence',
    international: 'International licence',
    automatic_uk: 'Full UK licence (automatics only)',
  },
  employment: {
    employed: 'Employed',
    self_employed: 'Self-employed',
    unemployed: 'Unemployed',
    retired: 'Retired',
    student: 'Student',
    full_time_education: 'In full-time education',
    homemaker: 'Looking after the home',
    house_person: 'Looking after the home',
  },
  relationship: {
    spouse: 'Spouse',
    civil_partner: 'Civil partner',
    partner: 'Partner',
    common_law_partner: 'Partner',
    parent: 'Parent',
    child: 'Son or daughter',
    offspring: 'Son or daughter',
    sibling: 'Brother or sister',
    employee: 'Employee',
    friend: 'Friend',
    other: 'Other',
  },
  modification: {
    alloy_wheels: 'Alloy wheels',
    tow_bar: 'Tow bar',
    towbar: 'Tow bar',
    roof_rack: 'Roof rack',
    tinted_windows: 'Tinted windows',
    body_kit: 'Body kit',
    lowered_suspension: 'Lowered suspension',
    engine_remap: 'Engine remap',
  },
};

/**
 * A coded value in words: the label the field's code has, else words made from the code ("dark_grey" →
 * "Dark grey"). A value with capitals or spaces is taken to be words already ("Blue", "Mr") and kept.
 */
export function codeLabel(field: CodedField, code: string): string {
  const key = code
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  const known = LABELS[field][key];
  if (known !== undefined) return known;
  if (/[A-Z\s]/.test(code)) return code.trim();
  const words = code.replace(/[_-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A policy version's type (nb, mta, st, cn, rn, ls) in words. */
export const VERSION_TYPE_LABELS: Readonly<
  Record<PolicyDetails['versions'][number]['version_type'], string>
> = {
  nb: 'New policy',
  mta: 'Change to the policy',
  st: 'Statement',
  cn: 'Cancellation',
  rn: 'Renewal',
  ls: 'Lapsed',
};

/** A policy's status in words. */
export const POLICY_STATUS_LABELS: Readonly<Record<PolicyDetails['status'], string>> = {
  pending: 'Starts soon',
  active: 'Active',
  cancelled: 'Cancelled',
  lapsed: 'Lapsed',
};

/** A telematics device's kind in words. */
export const DEVICE_KIND_LABELS: Readonly<Record<components['schemas']['Device']['kind'], string>> = {
  obd: 'OBD dongle',
  connected_car: 'Connected car',
  phone: 'Phone app',
};

const CARD_BRANDS: Readonly<Record<string, string>> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  amex: 'American Express',
  discover: 'Discover',
  diners: 'Diners Club',
  jcb: 'JCB',
  unionpay: 'UnionPay',
};

/** A card brand as the processor codes it ("amex") in words; an unknown one as sent, none as "Card". */
export const cardBrandLabel = (brand: string | null): string =>
  brand === null ? 'Card' : (CARD_BRANDS[brand] ?? brand);
