import { decodePolyline } from '../../platform/geo/index.ts';
import { addDays, londonDate } from '../../platform/london-calendar.ts';
import { Decimal, poundsText, toPence } from '../../platform/money.ts';
import type { BilledJourney, Journey } from '../journeys/index.ts';
import type { PaymentRecordView, PolicySnapshot, VersionRecord } from '../policies/index.ts';
import type { RenewalTerms } from '../policies/rules/index.ts';
import type { Statement } from '../statements/index.ts';
import type {
  CancellationNoticeContent,
  CreditNoteContent,
  LonLat,
  RenewalNoticeContent,
  StatementContent,
  StatementDay,
  UsageUnit,
} from './document-content.ts';
import { addresseeOf, fromSeconds, priceOf, termOf } from './document-policy-content.ts';

/*
 * The content of the documents about money: a statement with its map, credit notes (a void credited,
 * a refund), the cancellation notice and the renewal notice, from their owners' reads.
 */

/** Points a route keeps on a statement's map: enough for its shape at A4, few enough to draw fast. */
const MAP_POINTS_PER_ROUTE = 120;
const money = (pence: number): string => `£${poundsText(pence)}`;

/** A journey's route as longitude/latitude pairs, thinned to at most `MAP_POINTS_PER_ROUTE`; none if undecodable. */
export function routeOf(journey: Pick<BilledJourney, 'route' | 'precision'>): LonLat[] {
  if (journey.route === '') return [];
  const decoded = decodePolyline(journey.route, journey.precision);
  if (!decoded.ok) return [];
  const step = Math.max(1, Math.ceil(decoded.count / MAP_POINTS_PER_ROUTE));
  const points: LonLat[] = [];
  for (let i = 0; i < decoded.count; i += step)
    points.push([decoded.points[2 * i + 1] ?? 0, decoded.points[2 * i] ?? 0]);
  const last = decoded.count - 1;
  if (last % step !== 0) points.push([decoded.points[2 * last + 1] ?? 0, decoded.points[2 * last] ?? 0]);
  return points;
}

/** Each London day of the period with journeys (not void): their count, distance and premium. */
function daysOf(journeys: readonly BilledJourney[]): StatementDay[] {
  const days = new Map<string, { journeyCount: number; distanceMetres: number; costPence: number }>();
  for (const journey of journeys) {
    if (journey.isVoid) continue;
    const date = londonDate(journey.startAt);
    const day = days.get(date) ?? { journeyCount: 0, distanceMetres: 0, costPence: 0 };
    day.journeyCount += 1;
    day.distanceMetres += journey.distanceMetres;
    day.costPence += journey.usagePremiumPence;
    days.set(date, day);
  }
  return [...days.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([date, day]) => ({ date, ...day }));
}

/** How a statement's amount is paid, in words. */
function howPaid(statement: Statement): string {
  const billed = toPence(statement.billed_premium);
  if (billed === 0) return 'There is nothing to pay for this period.';
  if (toPence(statement.carried_forward) > 0)
    return `${money(toPence(statement.carried_forward))} is below the smallest card payment we can take: it is added to your next statement.`;
  if (statement.payment?.payment_amount !== null && statement.payment?.payment_amount !== undefined)
    return `${money(billed)} charged to your card on file.`;
  return `${money(billed)} is due: add a card in your app, or contact us to pay.`;
}

/** A statement, its days and its map (`journeys`: the statement's journeys with their routes). */
export function statementContent(
  statement: Statement,
  journeys: readonly BilledJourney[],
  facts: { snapshot: PolicySnapshot; usageUnit: UsageUnit; issuedAt: Date },
): StatementContent {
  const p = (pounds: number) => toPence(pounds);
  return {
    policyReference: statement.policy_reference,
    issuedAt: facts.issuedAt,
    statementReference: statement.policy_version_reference,
    policyholder: addresseeOf(facts.snapshot),
    registrationMark: facts.snapshot.vehicle.reg,
    periodStartOn: londonDate(new Date(statement.statement_start_date)),
    periodEndOn: londonDate(new Date(statement.statement_end_date)),
    usageUnit: facts.usageUnit,
    days: daysOf(journeys),
    cappedDays: statement.capped_days.map((d) => ({
      date: d.date,
      drivenMetres: d.distance_driven_in_metres,
      chargedMetres: d.distance_charged_in_metres,
      creditPence: p(d.credit),
    })),
    distanceMetres: statement.distance_in_metres,
    journeyCount: statement.journey_count,
    usagePremiumPence: p(statement.usage_premium),
    subscriptionPremiumPence: p(statement.subscription_premium),
    capCreditPence: p(statement.cap_credit),
    annualCapCreditPence: p(statement.annual_cap_credit),
    freeDistanceCreditPence: p(statement.free_distance_credit),
    minimumTopUpPence: p(statement.minimum_top_up),
    scoreAdjustmentPence: p(statement.score_adjustment),
    creditsUsedPence: p(statement.credits_used),
    broughtForwardPence: p(statement.brought_forward),
    carriedForwardPence: p(statement.carried_forward),
    totalPremiumPence: p(statement.total_premium),
    billedPremiumPence: p(statement.billed_premium),
    howPaid: howPaid(statement),
    routes: journeys
      .filter((j) => !j.isVoid)
      .map(routeOf)
      .filter((r) => r.length >= 2),
  };
}

/** The credit note of a journey voided after a statement billed it: credited on the next statement. */
export function voidCreditNoteContent(
  journey: Journey,
  snapshot: PolicySnapshot,
  issuedAt: Date,
): CreditNoteContent {
  const amount = toPence(journey.usage_premium);
  const day = londonDate(fromSeconds(journey.start_at));
  const miles = new Decimal(journey.distance_in_metres).dividedBy(1609.344).toDecimalPlaces(1).toString();
  return {
    policyReference: journey.policy_reference,
    issuedAt,
    creditNoteNumber: `CN-${journey.journey_reference.slice(0, 8).toUpperCase()}`,
    policyholder: addresseeOf(snapshot),
    reason: 'void',
    relatesTo: `Journey ${journey.journey_reference} on ${day}, billed on statement ${journey.policy_version_reference}`,
    lines: [
      {
        description: `Journey on ${day} (${miles} miles) voided${journey.void_reason === null ? '' : `: ${journey.void_reason}`}`,
        amountPence: amount,
      },
    ],
    totalPence: amount,
    settlement: 'Credited on your next statement.',
  };
}

/** The credit note of a refund to the card. */
export function refundCreditNoteContent(
  policyReference: string,
  refund: PaymentRecordView,
  snapshot: PolicySnapshot,
  issuedAt: Date,
): CreditNoteContent {
  const amount = toPence(refund.amount);
  return {
    policyReference,
    issuedAt,
    creditNoteNumber: `CN-${refund.payment_reference.slice(0, 8).toUpperCase()}`,
    policyholder: addresseeOf(snapshot),
    reason: 'refund',
    relatesTo: `Payment ${refund.payment_reference} (${refund.purpose.replace(/_/g, ' ')})`,
    lines: [{ description: `Refund (${refund.purpose.replace(/_/g, ' ')})`, amountPence: amount }],
    totalPence: amount,
    settlement: 'Refunded to the card you paid with; it may take up to 10 working days to show.',
  };
}

/** The cancellation notice of a `cn` version: when cover ends, and the refund or amount due. */
export function cancellationNoticeContent(
  policyReference: string,
  version: VersionRecord,
  payments: readonly PaymentRecordView[],
  issuedAt: Date,
): CancellationNoticeContent {
  const settled = payments.filter(
    (p) => p.policy_version_reference === version.id && p.status !== 'failed' && p.status !== 'canceled',
  );
  const lines = settled.map((p) => ({
    description:
      p.type === 'refund' ? 'Refund of premium for the time not on cover' : 'Amount due on cancellation',
    amountPence: p.type === 'refund' ? toPence(p.amount) : -toPence(p.amount),
  }));
  const balance = lines.reduce((sum, l) => sum + l.amountPence, 0);
  return {
    policyReference,
    issuedAt,
    policyholder: addresseeOf(version.snapshot),
    registrationMark: version.snapshot.vehicle.reg,
    effectiveAt: version.effectiveAt,
    reason: version.reason ?? 'Cancelled at your request.',
    lines,
    balancePence: balance,
    settlement:
      balance > 0
        ? `${money(balance)} is refunded to the card you paid with.`
        : balance < 0
          ? `${money(-balance)} is charged to your card on file.`
          : 'There is no refund and nothing more to pay.',
  };
}

/** The new term's snapshot of renewal terms stored for automatic renewal: the current one with what they replace. */
function renewedFrom(current: PolicySnapshot, terms: RenewalTerms): PolicySnapshot {
  return {
    ...current,
    ...terms.replaced,
    policy: {
      ...current.policy,
      ...terms.policyFields,
      start_date: terms.startDate,
      end_date: terms.endDate,
    },
    pricing: terms.pricing,
  };
}

/** The renewal notice: the new term and price beside this year's, and how to stop automatic renewal. */
export function renewalNoticeContent(
  policyReference: string,
  current: PolicySnapshot,
  renewal: PolicySnapshot | RenewalTerms,
  facts: { usageUnit: UsageUnit; autoRenew: boolean; issuedAt: Date },
): RenewalNoticeContent {
  const next = 'startDate' in renewal ? renewedFrom(current, renewal) : renewal;
  const newTerm = termOf(next);
  const lastDay = addDays(londonDate(newTerm.startsAt), -1);
  return {
    policyReference,
    issuedAt: facts.issuedAt,
    policyholder: addresseeOf(next),
    registrationMark: next.vehicle.reg,
    currentTerm: termOf(current),
    newTerm,
    lastYearPrice: priceOf(current, current.pricing.usage_unit ?? facts.usageUnit),
    newPrice: priceOf(next, next.pricing.usage_unit ?? facts.usageUnit),
    lastYearPaidPence: null,
    autoRenew: facts.autoRenew,
    cancelAutoRenewalBy: lastDay,
    howToCancelAutoRenewal: [
      `To stop your policy renewing, tell us by ${lastDay}: in your app, by email or by phone.`,
      'If you stop it, cover ends at the end of your current term and nothing more is charged for the new one.',
      'You can also cancel within 14 days of the new term starting, and pay only for the time on cover and the distance driven.',
    ],
  };
}
