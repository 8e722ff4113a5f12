/**
 * What each kind of document says, as plain data: money in integer pence, calendar days as London dates
 * (`YYYY-MM-DD`), instants as UTC `Date`s, distances in metres. Nothing here knows the database: the
 * documents service builds these from the owners' reads, and `render/` lays them out as PDF.
 */

export type UsageUnit = 'mile' | 'km';

/** The person a letter is addressed to: a name and the postal address lines (postcode last). */
export interface Addressee {
  readonly name: string;
  readonly addressLines: readonly string[];
}

/** Fields every document carries: whose policy, and the instant it was issued (also the PDF's dates). */
export interface DocumentCommon {
  /** The public policy reference, e.g. `MP-123456`. */
  readonly policyReference: string;
  /** When the document was made; fixed by the content so the same content gives the same bytes. */
  readonly issuedAt: Date;
}

/** A driver as the schedule and certificate name them. */
export interface DriverContent {
  readonly name: string;
  /** London date of birth. */
  readonly dateOfBirth: string;
  /** `policyholder` for the proposer, else the interface's relationship (e.g. `spouse`). */
  readonly relationship: string;
  readonly licenceType: string | null;
}

export interface VehicleContent {
  readonly registrationMark: string;
  readonly make: string;
  readonly model: string;
  readonly vin: string | null;
  readonly colour: string | null;
  readonly engineCc: number | null;
  readonly fuel: string | null;
  readonly valuePence: number | null;
  readonly overnightPostcode: string | null;
}

/** A product's pay-by-mile rules, structured; the renderer puts them into words. Absent rule: null. */
export interface PayByMileRules {
  readonly usageUnit: UsageUnit;
  /** Pence per unit of distance as exact decimal text (`'4.5'` is 4½p a mile). */
  readonly usageRatePencePerUnit: string;
  /** Most distance charged per London day, in `usageUnit`. */
  readonly dailyCapDistance: number | null;
  /** Most distance charged per policy year, in `usageUnit`. */
  readonly annualCapDistance: number | null;
  /** Distance not charged on each statement, in `usageUnit`. */
  readonly freeDistancePerStatement: number | null;
  readonly minimumUsagePremiumPence: number | null;
  readonly billingDistanceSource: 'gps' | 'odometer' | 'greater';
  /** The day of the month statements are made on. */
  readonly billingDayOfMonth: number;
}

/** A term's price: the fixed part, the rate per unit, installments and fees, in pence. */
export interface PriceContent {
  readonly upfrontPremiumPence: number;
  /** Each installment of the fixed subscription premium. */
  readonly subscriptionPremiumPence: number;
  readonly subscriptionInstallments: number;
  readonly usageUnit: UsageUnit;
  readonly usageRatePencePerUnit: string;
  /** The distance the price was estimated on, in `usageUnit`. */
  readonly estimatedDistance: number;
  /** Fixed part plus the usage premium of `estimatedDistance`. */
  readonly estimatedAnnualPremiumPence: number;
  /** Insurance premium tax as an exact percentage text (`'12'`); premiums include it. */
  readonly iptRatePercent: string;
  readonly adminFeePence: number;
  readonly adjustmentFeePence: number;
  readonly cancellationFeePence: number;
}

export interface TermContent {
  readonly startsAt: Date;
  readonly endsAt: Date;
}

/** The certificate of motor insurance (Road Traffic Act 1988 s.147; Motor Vehicles (Third Party Risks) Regulations 1972). */
export interface CertificateContent extends DocumentCommon {
  readonly certificateNumber: string;
  readonly registrationMark: string;
  /** Make and model, shown beside the registration mark. */
  readonly vehicleDescription: string;
  readonly policyholderName: string;
  /** Effective date and time of commencement of the insurance for the purposes of the Act. */
  readonly commencesAt: Date;
  /** Date (and time) of expiry. */
  readonly expiresAt: Date;
  /** Persons or classes of persons entitled to drive, one entry a line. */
  readonly personsEntitledToDrive: readonly string[];
  /** Limitations as to use, one entry a line. */
  readonly limitationsAsToUse: readonly string[];
  /** The authorised insurer who certifies the policy. */
  readonly insurerName: string;
}

export interface ScheduleContent extends DocumentCommon {
  /** The policy version this schedule states (the interface's `policy_version_reference`). */
  readonly policyVersionReference: string;
  readonly policyholder: Addressee;
  readonly email: string;
  readonly drivers: readonly DriverContent[];
  readonly vehicle: VehicleContent;
  /** The interface's cover code (`comprehensive`, …). */
  readonly cover: string;
  /** The interface's usage code (`sdp_commuting`, …). */
  readonly usage: string;
  readonly compulsoryExcessPence: number;
  readonly voluntaryExcessPence: number;
  readonly productName: string;
  readonly rules: PayByMileRules;
  readonly price: PriceContent;
  readonly term: TermContent;
  readonly autoRenew: boolean;
  readonly insurerName: string;
  readonly underwriterPolicyReference: string | null;
}

/** The insurance product information document: the IDD's standard headings, per product version. */
export interface IpidContent {
  readonly productReference: string;
  readonly productName: string;
  /** The product version's `effective_from` (London date). */
  readonly effectiveFrom: string;
  readonly issuedAt: Date;
  readonly insurerName: string;
  /** Where the insurer is authorised, e.g. 'Authorised by the PRA and regulated by the FCA and PRA, FRN 123456'. */
  readonly insurerRegulatoryStatus: string;
  readonly whatIsThisInsurance: string;
  readonly whatIsInsured: readonly string[];
  readonly whatIsNotInsured: readonly string[];
  readonly restrictions: readonly string[];
  readonly whereCovered: readonly string[];
  readonly obligations: readonly string[];
  readonly whenAndHowToPay: readonly string[];
  readonly whenCoverStartsAndEnds: readonly string[];
  readonly howToCancel: readonly string[];
}

export interface FactAnswer {
  readonly question: string;
  readonly answer: string;
}

/** What the proposer told us, every answer of the policy object, grouped, to check and correct. */
export interface StatementOfFactContent extends DocumentCommon {
  readonly policyVersionReference: string;
  readonly policyholder: Addressee;
  readonly sections: ReadonlyArray<{ readonly heading: string; readonly answers: readonly FactAnswer[] }>;
}

export interface RenewalNoticeContent extends DocumentCommon {
  readonly policyholder: Addressee;
  readonly registrationMark: string;
  readonly currentTerm: TermContent;
  readonly newTerm: TermContent;
  /** This year's price (ICOBS 6.5: shown beside the new one). */
  readonly lastYearPrice: PriceContent;
  readonly newPrice: PriceContent;
  /** What was paid over the ending term, when known. */
  readonly lastYearPaidPence: number | null;
  readonly autoRenew: boolean;
  /** The last London day on which auto-renewal can be stopped with no charge. */
  readonly cancelAutoRenewalBy: string;
  /** How to stop auto-renewal, one step a line. */
  readonly howToCancelAutoRenewal: readonly string[];
}

/** One London day of a statement. */
export interface StatementDay {
  readonly date: string;
  readonly journeyCount: number;
  readonly distanceMetres: number;
  readonly costPence: number;
}

export interface StatementCappedDay {
  readonly date: string;
  readonly drivenMetres: number;
  readonly chargedMetres: number;
  readonly creditPence: number;
}

/** A longitude, latitude pair in degrees (GeoJSON order). */
export type LonLat = readonly [number, number];

export interface StatementContent extends DocumentCommon {
  /** The statement's `policy_version_reference`. */
  readonly statementReference: string;
  readonly policyholder: Addressee;
  readonly registrationMark: string;
  /** First and last London day of the period, inclusive. */
  readonly periodStartOn: string;
  readonly periodEndOn: string;
  readonly usageUnit: UsageUnit;
  readonly days: readonly StatementDay[];
  readonly cappedDays: readonly StatementCappedDay[];
  readonly distanceMetres: number;
  readonly journeyCount: number;
  readonly usagePremiumPence: number;
  readonly subscriptionPremiumPence: number;
  readonly capCreditPence: number;
  readonly annualCapCreditPence: number;
  readonly freeDistanceCreditPence: number;
  readonly minimumTopUpPence: number;
  /** Price by driving score: negative a discount, positive a surcharge. */
  readonly scoreAdjustmentPence: number;
  readonly creditsUsedPence: number;
  readonly broughtForwardPence: number;
  readonly carriedForwardPence: number;
  readonly totalPremiumPence: number;
  readonly billedPremiumPence: number;
  /** How the billed amount is paid, in words (e.g. 'Charged to the card ending 4242 on 2026-01-01'). */
  readonly howPaid: string;
  /** The period's journeys as coarse polylines; the map draws them over the outline of Great Britain. */
  readonly routes: ReadonlyArray<readonly LonLat[]>;
}

export interface CreditNoteLine {
  readonly description: string;
  readonly amountPence: number;
}

export interface CreditNoteContent extends DocumentCommon {
  readonly creditNoteNumber: string;
  readonly policyholder: Addressee;
  /** `void`: a journey voided after it was billed; `refund`: money returned. */
  readonly reason: 'void' | 'refund';
  /** The statement or payment it corrects. */
  readonly relatesTo: string;
  readonly lines: readonly CreditNoteLine[];
  readonly totalPence: number;
  /** Where the credit goes, in words (the ledger, or the card refunded). */
  readonly settlement: string;
}

export interface CancellationNoticeContent extends DocumentCommon {
  readonly policyholder: Addressee;
  readonly registrationMark: string;
  /** When cover ends. */
  readonly effectiveAt: Date;
  readonly reason: string;
  readonly lines: readonly CreditNoteLine[];
  /** Positive: refunded to the policyholder; negative: due from them; zero: nothing either way. */
  readonly balancePence: number;
  readonly settlement: string;
}

/** A document to render: its kind and the content of that kind. */
export type DocumentInput =
  | { readonly kind: 'certificate'; readonly content: CertificateContent }
  | { readonly kind: 'schedule'; readonly content: ScheduleContent }
  | { readonly kind: 'ipid'; readonly content: IpidContent }
  | { readonly kind: 'statement_of_fact'; readonly content: StatementOfFactContent }
  | { readonly kind: 'renewal_notice'; readonly content: RenewalNoticeContent }
  | { readonly kind: 'statement'; readonly content: StatementContent }
  | { readonly kind: 'credit_note'; readonly content: CreditNoteContent }
  | { readonly kind: 'cancellation_notice'; readonly content: CancellationNoticeContent };

export interface BrandingLogo {
  readonly mediaType: 'image/png' | 'image/svg+xml';
  readonly bytes: Uint8Array;
}

/** How a company's documents look: from its template (versioned), or `defaultBranding`. */
export interface Branding {
  readonly companyName: string;
  readonly insurerName: string;
  /** `#rrggbb`. */
  readonly colourHex: string;
  readonly logo?: BrandingLogo;
  readonly templateVersion: number;
}

export const DEFAULT_COLOUR_HEX = '#1f4e79';

/** The branding a company without a template of its own uses: its name, a dark blue, no logo, version 0. */
export function defaultBranding(companyName: string, insurerName: string = companyName): Branding {
  return { companyName, insurerName, colourHex: DEFAULT_COLOUR_HEX, templateVersion: 0 };
}
