/**
 * Document content for tests and the documents benchmark: every kind for a policy object (the OpenAPI
 * example, or one full of hostile text), brandings with PNG and SVG logos, and statements with routes.
 */
import { PNG } from 'pngjs';
import type {
  Branding,
  DocumentInput,
  LonLat,
  PayByMileRules,
  StatementContent,
} from '../../src/modules/documents/document-content.ts';
import {
  addresseeOf,
  certificateFromPolicy,
  defaultIpidContent,
  priceOf,
  scheduleFromPolicy,
  statementOfFactFromPolicy,
  type PolicyObject,
} from '../../src/modules/documents/render/policy-content.ts';
import { POLICY_INPUT_EXAMPLE, type PolicyInput } from '../../src/modules/policies/index.ts';

/** A deterministic PRNG (mulberry32): the same seed draws the same routes. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A 160×48 PNG logo: a coloured field with a white bar, made here so no binary sits in the repo. */
export function pngLogo(rgb: readonly [number, number, number] = [200, 40, 60]): Uint8Array {
  const png = new PNG({ width: 160, height: 48 });
  for (let y = 0; y < png.height; y += 1)
    for (let x = 0; x < png.width; x += 1) {
      const i = (y * png.width + x) * 4;
      const bar = y > 18 && y < 30 && x > 16 && x < 144;
      png.data[i] = bar ? 255 : rgb[0];
      png.data[i + 1] = bar ? 255 : rgb[1];
      png.data[i + 2] = bar ? 255 : rgb[2];
      png.data[i + 3] = 255;
    }
  return PNG.sync.write(png, { colorType: 2 });
}

/** An SVG logo with shapes and text, and an image link to a local file that must not be read. */
export const SVG_LOGO = new TextEncoder().encode(
  `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 200 60" width="200" height="60">
  <rect x="0" y="0" width="200" height="60" rx="10" fill="#0b6e4f"/>
  <circle cx="30" cy="30" r="18" fill="#f4d35e"/>
  <path d="M60 45 L90 15 L120 45 Z" fill="#ffffff"/>
  <text x="130" y="38" font-family="sans-serif" font-size="18" fill="#ffffff">Ŵ</text>
  <image x="0" y="0" width="10" height="10" xlink:href="/etc/passwd"/>
</svg>`,
);

export const EXAMPLE_BRANDING: Branding = {
  companyName: 'Acme Motor Insurance',
  insurerName: 'Acme Insurance plc',
  colourHex: '#1f4e79',
  logo: { mediaType: 'image/png', bytes: pngLogo() },
  templateVersion: 1,
};

export const HOSTILE_BRANDING: Branding = {
  companyName:
    'Cwmni Yswiriant Ŵyn a’r Ŷd \u202Egnihtemos\u202C <script>alert(1)</script> Spółka Zażółć Gęślą Jaźń',
  insurerName: 'Yswirwyr Łódź \u200F<b>plc</b>',
  colourHex: '#0b6e4f',
  logo: { mediaType: 'image/svg+xml', bytes: SVG_LOGO },
  templateVersion: 3,
};

/** The OpenAPI example policy, as a client sends it. */
export const examplePolicy = (): PolicyInput => structuredClone<PolicyInput>(POLICY_INPUT_EXAMPLE);

const HOSTILE_SURNAME =
  'Brzęczyszczykiewicz-Łączyńska-Żółć-Gęślą-Jaźń-Ąęółśżźćń-Wróblewska-Ŵŷŵŷŵŷ-Ddraig-Goch-Llanfair-Pwll';

/** A policy whose every free text is hostile: Welsh and Polish letters, RTL marks, markup, 100-letter words. */
export function hostilePolicy(): PolicyInput {
  const p = examplePolicy();
  p.proposer.first_names = 'Gwenllïan \u200FSiân\u200E Ŵyn';
  p.proposer.last_names = HOSTILE_SURNAME.slice(0, 100);
  p.proposer.email = 'gwenllian.zolc@example.org';
  p.proposer.occupation = '<script>document.location="x"</script>';
  p.policy.address = {
    line_1: '\u202ETŷ Ŵyn\u202C, Heol y <b>Frenhines</b>',
    line_2: 'ul. \u2067Świętokrzyska\u2069 12 \u200F',
    city: 'Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch',
    county: 'Ynys Môn',
    country: 'GB',
    postcode: 'LL61 5UJ',
  };
  p.policy.usage = 'business_class_1';
  p.vehicle.reg = 'CY19 WYN';
  p.vehicle.make = 'Škoda';
  p.vehicle.model = 'Octavia <img src=x onerror=alert(1)> vRS ąęł';
  p.vehicle.vin = 'TMBJJ7NE0K0123456';
  p.vehicle.overnight_postcode = 'LL61 5UJ';
  const [driver] = p.additional_drivers ?? [];
  if (driver !== undefined) {
    driver.first_names = 'Łukasz\u200F';
    driver.last_names = 'Żółkiewski-ap Gruffydd';
    driver.relationship = 'partner';
  }
  p.pricing.usage_rate = 0.0625;
  p.pricing.upfront_premium = 120.4;
  p.pricing.subscription_premium = 33.15;
  return p;
}

export const PAY_BY_MILE_RULES: PayByMileRules = {
  usageUnit: 'mile',
  usageRatePencePerUnit: '4.5',
  dailyCapDistance: 100,
  annualCapDistance: 8000,
  freeDistancePerStatement: 10,
  minimumUsagePremiumPence: 500,
  billingDistanceSource: 'gps',
  billingDayOfMonth: 1,
};

/** The references a policy's documents carry. */
export interface DocumentIds {
  readonly policyReference: string;
  readonly versionReference: string;
  readonly issuedAt: Date;
  /** Where its journeys are, for the statement's routes. */
  readonly home: LonLat;
  readonly seed: number;
}

export const EXAMPLE_IDS: DocumentIds = {
  policyReference: 'MP-123456',
  versionReference: '5b1c2f0e-6a3d-4e8b-9c71-2d4f6a8b0c13',
  issuedAt: new Date('2025-06-01T08:30:00Z'),
  home: [-0.1, 51.52],
  seed: 7,
};

export const HOSTILE_IDS: DocumentIds = {
  policyReference: 'MP-987654',
  versionReference: 'c0ffee00-1234-4abc-8def-0123456789ab',
  issuedAt: new Date('2025-06-01T08:30:00Z'),
  home: [-4.3, 53.22],
  seed: 11,
};

/** `count` coarse routes wandering from `home`, each 20–60 points. */
export function routesNear(home: LonLat, count: number, random: () => number): LonLat[][] {
  return Array.from({ length: count }, () => {
    let lng = home[0] + (random() - 0.5) * 0.2;
    let lat = home[1] + (random() - 0.5) * 0.12;
    const heading = random() * 2 * Math.PI;
    const route: LonLat[] = [];
    for (let i = 0, n = 20 + Math.floor(random() * 40); i < n; i += 1) {
      lng += Math.cos(heading) * 0.004 + (random() - 0.5) * 0.003;
      lat += Math.sin(heading) * 0.0025 + (random() - 0.5) * 0.002;
      route.push([Math.round(lng * 1e5) / 1e5, Math.round(lat * 1e5) / 1e5]);
    }
    return route;
  });
}

/** A June statement: two journeys a day, one capped day, credits, brought and carried amounts. */
export function statementFor(p: PolicyObject, ids: DocumentIds, routeCount = 60): StatementContent {
  const random = seeded(ids.seed);
  const days = Array.from({ length: 30 }, (_, i) => {
    const distanceMetres = 5_000 + Math.floor(random() * 60_000);
    return {
      date: `2025-06-${String(i + 1).padStart(2, '0')}`,
      journeyCount: 2,
      distanceMetres,
      costPence: Math.round((distanceMetres / 1609.344) * 4.5),
    };
  });
  const distanceMetres = days.reduce((sum, d) => sum + d.distanceMetres, 0);
  const usagePremiumPence = days.reduce((sum, d) => sum + d.costPence, 0);
  return {
    policyReference: ids.policyReference,
    issuedAt: new Date('2025-07-01T03:00:00Z'),
    statementReference: ids.versionReference,
    policyholder: addresseeOf(p),
    registrationMark: p.vehicle.reg,
    periodStartOn: '2025-06-01',
    periodEndOn: '2025-06-30',
    usageUnit: 'mile',
    days,
    cappedDays: [{ date: '2025-06-14', drivenMetres: 210_000, chargedMetres: 160_934, creditPence: 219 }],
    distanceMetres,
    journeyCount: 60,
    usagePremiumPence,
    subscriptionPremiumPence: 2999,
    capCreditPence: 219,
    annualCapCreditPence: 0,
    freeDistanceCreditPence: 45,
    minimumTopUpPence: 0,
    scoreAdjustmentPence: 0,
    creditsUsedPence: 120,
    broughtForwardPence: 0,
    carriedForwardPence: 0,
    totalPremiumPence: usagePremiumPence + 2999,
    billedPremiumPence: usagePremiumPence + 2999 - 120,
    howPaid: 'Charged to the card ending 4242 on 1 July 2025.',
    routes: routesNear(ids.home, routeCount, random),
  };
}

/** Every kind of document for a policy object, as the documents service would issue them. */
export function documentsFor(p: PolicyObject, ids: DocumentIds, branding: Branding): DocumentInput[] {
  const at = {
    policyReference: ids.policyReference,
    issuedAt: ids.issuedAt,
    insurerName: branding.insurerName,
  };
  const holder = addresseeOf(p);
  const price = priceOf(p);
  const newPrice = {
    ...price,
    upfrontPremiumPence: price.upfrontPremiumPence + 1250,
    usageRatePencePerUnit: '4.8',
    estimatedAnnualPremiumPence:
      price.estimatedAnnualPremiumPence + 1250 + Math.round(0.3 * price.estimatedDistance),
  };
  return [
    {
      kind: 'certificate',
      content: certificateFromPolicy(p, { ...at, certificateNumber: `${ids.policyReference}-C1` }),
    },
    {
      kind: 'schedule',
      content: scheduleFromPolicy(p, {
        ...at,
        policyVersionReference: ids.versionReference,
        productName: 'Pay-by-mile car',
        rules: PAY_BY_MILE_RULES,
      }),
    },
    {
      kind: 'ipid',
      content: defaultIpidContent({
        productReference: p.policy.product_reference ?? 'pay-by-mile-car',
        productName: 'Pay-by-mile car',
        effectiveFrom: '2025-01-01',
        issuedAt: ids.issuedAt,
        insurerName: branding.insurerName,
        insurerRegulatoryStatus:
          'Authorised by the Prudential Regulation Authority and regulated by the Financial Conduct Authority and the Prudential Regulation Authority, FRN 123456',
        rules: PAY_BY_MILE_RULES,
      }),
    },
    {
      kind: 'statement_of_fact',
      content: statementOfFactFromPolicy(p, { ...at, policyVersionReference: ids.versionReference }),
    },
    {
      kind: 'renewal_notice',
      content: {
        ...at,
        policyholder: holder,
        registrationMark: p.vehicle.reg,
        currentTerm: { startsAt: new Date('2025-05-31T23:00:00Z'), endsAt: new Date('2026-05-31T22:59:59Z') },
        newTerm: { startsAt: new Date('2026-05-31T23:00:00Z'), endsAt: new Date('2027-05-31T22:59:59Z') },
        lastYearPrice: price,
        newPrice,
        lastYearPaidPence: 68_412,
        autoRenew: true,
        cancelAutoRenewalBy: '2026-05-30',
        howToCancelAutoRenewal: [
          'In the app: Policy › Renewal › Stop auto-renewal.',
          'By email to renewals@example.com, or by phone on 0300 123 4567.',
        ],
      },
    },
    { kind: 'statement', content: statementFor(p, ids) },
    {
      kind: 'credit_note',
      content: {
        ...at,
        creditNoteNumber: `${ids.policyReference}-CN-0001`,
        policyholder: holder,
        reason: 'void',
        relatesTo: `Statement ${ids.versionReference}`,
        lines: [
          {
            description: `Journey on 12 June 2025, 14.2 miles, voided: ${p.vehicle.reg} was not driven`,
            amountPence: 64,
          },
        ],
        totalPence: 64,
        settlement: 'Credited to your account: it is used against your next statement before any charge.',
      },
    },
    {
      kind: 'cancellation_notice',
      content: {
        ...at,
        policyholder: holder,
        registrationMark: p.vehicle.reg,
        effectiveAt: new Date('2025-09-15T23:00:00Z'),
        reason: 'Cancelled at your request',
        lines: [
          { description: 'Unused fixed premium (pro rata)', amountPence: 6_880 },
          { description: 'Cancellation fee', amountPence: -5_000 },
        ],
        balancePence: 1_880,
        settlement: 'Refunded to the card ending 4242 within 5 working days.',
      },
    },
  ];
}
