/** A statement as the API shows it: rows, journeys, odometer and payment → the interface's fields. */
import { fromPence } from '../../platform/money.ts';
import { totalKilometres, totalMiles, type BilledJourney } from '../journeys/index.ts';
import type { ChargeOutcome } from '../payments/index.ts';
import type { StatementOdometer } from './odometer-billing.ts';
import { discrepancyPercent } from './rules/odometer.ts';
import type { CappedDay } from './rules/usage-rules.ts';
import type { ScoreMonthLine } from './score-billing.ts';
import type { StatementRow } from './statement-repository.ts';
import type { Statement } from './statement-schemas.ts';

export type StatementView = Statement;

const journeyInStatement = (j: BilledJourney) => ({
  journey_reference: j.id,
  provider_reference: j.providerReference,
  policy_reference: j.policyReference,
  policy_version_reference: j.policyVersionId,
  route: j.route,
  distance_in_metres: j.distanceMetres,
  distance_units: j.distanceUnit === 'km' ? 'kms' : 'miles',
  total_miles: totalMiles(j.distanceMetres),
  total_kms: totalKilometres(j.distanceMetres),
  usage_rate: Number(j.usageRate),
  usage_premium: fromPence(j.usagePremiumPence),
  start_lat: j.startLat,
  start_long: j.startLng,
  end_lat: j.endLat,
  end_long: j.endLng,
  start_at: j.startAt.toISOString(),
  end_at: j.endAt.toISOString(),
  start_name: j.startName,
  end_name: j.endName,
  start_postcode: j.startPostcode,
  end_postcode: j.endPostcode,
  is_void: j.isVoid,
  source: j.source,
  is_estimated: j.source === 'estimate',
});

/** A statement's odometer block: the readings it compared and the distances between them. */
const odometerInStatement = (o: StatementOdometer) => {
  const odometerMetres = o.end.readingMetres - o.start.readingMetres;
  return {
    start_reading_metres: o.start.readingMetres,
    start_reading_time: o.start.at.toISOString(),
    end_reading_metres: o.end.readingMetres,
    end_reading_time: o.end.at.toISOString(),
    odometer_distance_in_metres: odometerMetres,
    gps_distance_in_metres: o.gpsMetres,
    discrepancy_percent: discrepancyPercent(odometerMetres, o.gpsMetres),
  };
};

const scoreMonthsOf = (row: StatementRow): ScoreMonthLine[] =>
  typeof row.score_months === 'string'
    ? (JSON.parse(row.score_months) as ScoreMonthLine[])
    : row.score_months;

/** Hundredths of a percent as a percentage (two decimals at most, exact in decimal text). */
const percentOf = (basisPoints: number): number => Number((basisPoints / 100).toFixed(2));

const cappedDaysOf = (row: StatementRow): CappedDay[] =>
  typeof row.capped_days === 'string' ? (JSON.parse(row.capped_days) as CappedDay[]) : row.capped_days;

export function toView(
  policyReference: string,
  row: StatementRow,
  journeys: BilledJourney[],
  current: boolean,
  payment: ChargeOutcome | undefined,
  odometer: StatementOdometer | undefined,
): StatementView {
  return {
    policy_reference: policyReference,
    policy_version_reference: row.id,
    current,
    distance_in_metres: row.distance_metres,
    duration_in_mins: Math.round(row.duration_seconds / 60),
    total_miles: totalMiles(row.distance_metres),
    total_kms: totalKilometres(row.distance_metres),
    subscription_premium: fromPence(row.subscription_premium_pence),
    usage_premium: fromPence(row.usage_premium_pence),
    total_premium: fromPence(row.total_premium_pence),
    billed_premium: fromPence(row.billed_premium_pence),
    capped_days: cappedDaysOf(row).map((d) => ({
      date: d.date,
      distance_driven_in_metres: d.drivenMetres,
      distance_charged_in_metres: d.chargedMetres,
      credit: fromPence(d.creditPence),
    })),
    cap_credit: fromPence(row.cap_credit_pence),
    annual_cap_credit: fromPence(row.annual_cap_credit_pence),
    free_distance_credit: fromPence(row.free_distance_credit_pence),
    minimum_top_up: fromPence(row.minimum_top_up_pence),
    score_adjustment: fromPence(row.score_adjustment_pence),
    score_months: scoreMonthsOf(row).map((m) => ({
      month: m.month,
      score: m.score,
      adjustment_percent: percentOf(m.basisPoints),
      usage_premium: fromPence(m.usagePence),
      adjusted_before: fromPence(m.adjustedBeforePence),
      adjustment: fromPence(m.adjustmentPence),
    })),
    credits_used: fromPence(row.credits_used_pence),
    carried_forward: fromPence(row.carried_forward_pence),
    brought_forward: fromPence(row.brought_forward_pence),
    subscription_installments: row.installments,
    statement_start_date: row.period_start_at.toISOString(),
    statement_end_date: row.period_end_at.toISOString(),
    journey_count: row.journey_count,
    journeys: journeys.map(journeyInStatement),
    odometer: odometer === undefined ? null : odometerInStatement(odometer),
    ...(payment === undefined
      ? {}
      : {
          payment: {
            payment_amount: payment.payment_amount,
            ...(payment.error_message === undefined ? {} : { error_message: payment.error_message }),
          },
        }),
  };
}
