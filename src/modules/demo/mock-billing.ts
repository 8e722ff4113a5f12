import { addDays, londonDate, londonMidnight } from '../../platform/london-calendar.ts';
import { fromPence } from '../../platform/money.ts';
import { totalKilometres, totalMiles, usagePremiumPence } from '../journeys/index.ts';
import type { PaymentRecordView } from '../policies/index.ts';
import type { Statement } from '../statements/index.ts';
import type { MileageBudget } from '../usage/index.ts';
import { demoJourneys, type DemoJourney } from './mock-journeys.ts';
import {
  milesToMetres,
  MOCK_DEVICE_ID,
  MOCK_RULES,
  MOCK_USAGE_RATE,
  mockUuid,
  weekdayOf,
} from './rules/index.ts';

/*
 * The demo policy's account in the `mock` environment: its term, versions, monthly statements (free
 * distance and a goodwill credit on each, one capped day, the latest payment failed), card payments,
 * card, device and mileage budget, all derived from the demo journeys. Money in integer pence inside,
 * pounds at the edge, as the real service does.
 */

export const MOCK_NB_VERSION = '3b9f1c2e-6a4d-4e8b-9c1f-2d7e5a8b0c41';
export const MOCK_PAYMENT_METHOD = 'pm_mock_1PqXyZ2eZvKYlo2C';
export const MOCK_NB_PAYMENT_INTENT = 'pi_mock_3PqXyZ2eZvKYlo2C';
const SUBSCRIPTION_PENCE = 2999;
const UPFRONT_PENCE = 9550;
const GOODWILL_PENCE = 500;
const BUDGET_MILES = 400;
const DECLINE = { code: 'insufficient_funds', message: 'Your card has insufficient funds.' };

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();
/** The first day of the month `months` after `date`'s, `YYYY-MM-01`. */
const firstOfMonth = (date: string, months: number): string =>
  new Date(Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1 + months, 1))
    .toISOString()
    .slice(0, 10);
const midnightOf = (date: string): number => londonMidnight(date).getTime() / 1000;

export interface DemoStatement {
  readonly view: Statement;
  /** UNIX seconds, inclusive. */
  readonly start: number;
  readonly end: number;
  readonly billedPence: number;
  readonly paid: boolean;
}

export interface DemoAccount {
  readonly policyReference: string;
  /** UNIX seconds: the term is [start, end], a year from London midnight on the first of the month two months ago. */
  readonly term: { readonly start: number; readonly end: number };
  readonly journeys: readonly DemoJourney[];
  /** Oldest first. */
  readonly statements: readonly DemoStatement[];
}

/** The last Saturday on or before `date` (`YYYY-MM-DD`). */
const saturdayOnOrBefore = (date: string): string => addDays(date, -((weekdayOf(date) + 1) % 7));

/**
 * The demo account as it stands at `now`. The term always starts on the first of the month two months
 * before, so there are always two monthly statements and weeks of journeys since; it is the same for
 * the same day.
 */
export function demoAccount(policyReference: string, now: Date): DemoAccount {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const today = londonDate(now);
  const termStart = firstOfMonth(today, -2);
  const term = { start: midnightOf(termStart), end: midnightOf(firstOfMonth(today, 10)) - 1 };
  const periods = [0, 1].map((i) => ({
    start: midnightOf(firstOfMonth(today, i - 2)),
    end: midnightOf(firstOfMonth(today, i - 1)) - 1,
    reference: mockUuid(`statement:${policyReference}:${firstOfMonth(today, i - 2)}`),
  }));
  const estimatedDay = addDays(today, -9);
  // The Saturday trip to Bath and back: the last Saturday of the latest statement's period.
  const cappedDay = saturdayOnOrBefore(addDays(firstOfMonth(today, 0), -1));
  const days = {
    termStart,
    cappedDay,
    estimatedDay: estimatedDay === cappedDay ? addDays(estimatedDay, -1) : estimatedDay,
    voidDay: addDays(today, -4),
  };
  const versions = [
    { reference: MOCK_NB_VERSION, effectiveAt: term.start },
    ...periods.map((p) => ({ reference: p.reference, effectiveAt: p.end })),
  ];
  const statementOf = (startAt: number): string | null =>
    periods.find((p) => p.start <= startAt && startAt <= p.end)?.reference ?? null;
  const journeys = demoJourneys(policyReference, days, versions, statementOf, nowSeconds);
  const statements = periods.map((period, i) =>
    demoStatement(
      policyReference,
      period,
      journeys.filter((j) => !j.is_void && j.statement_version_reference === period.reference),
      { goodwillPence: GOODWILL_PENCE, current: i === periods.length - 1, paid: i < periods.length - 1 },
    ),
  );
  return { policyReference, term, journeys, statements };
}

/** A statement as the billing rules write one: daily cap, free distance, minimum, credits (pence). */
function demoStatement(
  policyReference: string,
  period: { start: number; end: number; reference: string },
  journeys: readonly DemoJourney[],
  options: { goodwillPence: number; current: boolean; paid: boolean },
): DemoStatement {
  const premium = (metres: number) => usagePremiumPence(MOCK_USAGE_RATE, metres, 'mile');
  const distance = journeys.reduce((sum, j) => sum + j.distance_in_metres, 0);
  const seconds = journeys.reduce((sum, j) => sum + j.duration_in_seconds, 0);
  const usagePence = journeys.reduce((sum, j) => sum + j.usagePremiumPence, 0);
  const capMetres = milesToMetres(MOCK_RULES.daily_cap_distance);
  const byDay = new Map<string, number>();
  for (const j of journeys) byDay.set(j.day, (byDay.get(j.day) ?? 0) + j.distance_in_metres);
  const cappedDays = [...byDay]
    .filter(([, driven]) => driven > capMetres)
    .map(([date, driven]) => ({
      date,
      distance_driven_in_metres: driven,
      distance_charged_in_metres: capMetres,
      creditPence: premium(driven - capMetres),
    }));
  const capPence = cappedDays.reduce((sum, d) => sum + d.creditPence, 0);
  const charged = distance - cappedDays.reduce((sum, d) => sum + d.distance_driven_in_metres - capMetres, 0);
  const freePence = premium(Math.min(charged, milesToMetres(MOCK_RULES.free_distance_per_statement)));
  const afterCredits = usagePence - capPence - freePence;
  const topUpPence = Math.max(0, MOCK_RULES.minimum_usage_premium * 100 - afterCredits);
  const totalPence = usagePence + SUBSCRIPTION_PENCE;
  const creditsPence = Math.min(options.goodwillPence, totalPence - capPence - freePence + topUpPence);
  const billedPence = totalPence - capPence - freePence + topUpPence - creditsPence;
  return {
    start: period.start,
    end: period.end,
    billedPence,
    paid: options.paid,
    view: {
      policy_reference: policyReference,
      policy_version_reference: period.reference,
      current: options.current,
      distance_in_metres: distance,
      duration_in_mins: Math.round(seconds / 60),
      total_miles: totalMiles(distance),
      total_kms: totalKilometres(distance),
      subscription_premium: fromPence(SUBSCRIPTION_PENCE),
      usage_premium: fromPence(usagePence),
      total_premium: fromPence(totalPence),
      billed_premium: fromPence(billedPence),
      capped_days: cappedDays.map(({ creditPence, ...day }) => ({ ...day, credit: fromPence(creditPence) })),
      cap_credit: fromPence(capPence),
      annual_cap_credit: 0,
      free_distance_credit: fromPence(freePence),
      minimum_top_up: fromPence(topUpPence),
      // The demo's product does not price by score.
      score_adjustment: 0,
      score_months: [],
      credits_used: fromPence(creditsPence),
      carried_forward: 0,
      brought_forward: 0,
      subscription_installments: 1,
      statement_start_date: iso(period.start),
      statement_end_date: iso(period.end),
      journey_count: journeys.length,
      journeys: journeys.map((j) => ({
        journey_reference: j.journey_reference,
        provider_reference: j.provider_reference,
        policy_reference: j.policy_reference,
        policy_version_reference: j.policy_version_reference,
        route: j.route,
        distance_in_metres: j.distance_in_metres,
        distance_units: j.distance_units,
        total_miles: j.total_miles,
        total_kms: j.total_kms,
        usage_rate: j.usage_rate,
        usage_premium: j.usage_premium,
        start_lat: j.start_lat,
        start_long: j.start_long,
        end_lat: j.end_lat,
        end_long: j.end_long,
        start_at: iso(j.start_at),
        end_at: iso(j.end_at),
        start_name: j.start_name,
        end_name: j.end_name,
        start_postcode: j.start_postcode,
        end_postcode: j.end_postcode,
        is_void: j.is_void,
        source: j.source,
        is_estimated: j.is_estimated,
      })),
      odometer: null,
      payment: options.paid
        ? { payment_amount: fromPence(billedPence) }
        : { payment_amount: null, error_message: DECLINE.message },
    },
  };
}

/** When a statement's card payment was taken: a minute after its period ends. */
const billedAt = (statement: DemoStatement): number => statement.end + 1 + 60;

/** The card payments of the demo policy, oldest first: the upfront premium, then each statement's. */
export function demoPayments(account: DemoAccount): PaymentRecordView[] {
  const record = (
    name: string,
    fields: Pick<
      PaymentRecordView,
      'purpose' | 'status' | 'amount' | 'policy_version_reference' | 'decline_code' | 'error_message'
    > & { at: number; attempts: number },
  ): PaymentRecordView => {
    const { at, ...shown } = fields;
    return {
      ...shown,
      payment_reference: `pay_mock_${mockUuid(name).slice(0, 8)}`,
      type: 'charge',
      refunded_amount: 0,
      currency: 'GBP',
      payment_provider: 'stripe',
      provider_payment_reference:
        name === 'nb'
          ? MOCK_NB_PAYMENT_INTENT
          : `pi_mock_${mockUuid(`pi:${name}`).replaceAll('-', '').slice(0, 16)}`,
      payment_method_id: MOCK_PAYMENT_METHOD,
      next_attempt_at: null,
      created_at: iso(at),
    };
  };
  return [
    record('nb', {
      purpose: 'new_business',
      status: 'succeeded',
      amount: fromPence(UPFRONT_PENCE),
      policy_version_reference: MOCK_NB_VERSION,
      decline_code: null,
      error_message: null,
      at: account.term.start,
      attempts: 1,
    }),
    ...account.statements.map((s) =>
      record(s.view.policy_version_reference, {
        purpose: 'statement',
        status: s.paid ? 'succeeded' : 'failed',
        amount: fromPence(s.billedPence),
        policy_version_reference: s.view.policy_version_reference,
        decline_code: s.paid ? null : DECLINE.code,
        error_message: s.paid ? null : DECLINE.message,
        at: billedAt(s),
        // NOTE: dunning has given up on the failed one: it waits for a new card (RETRY_PAYMENT).
        attempts: s.paid ? 1 : 3,
      }),
    ),
  ];
}

/** The default card: a Visa ending 4242, valid for two more years. */
export function demoCard(now: Date) {
  return {
    payment_method_id: MOCK_PAYMENT_METHOD,
    brand: 'visa',
    last4: '4242',
    exp_month: 8,
    exp_year: now.getUTCFullYear() + 2,
  };
}

/** The OBD dongle bound since the term started, last seen at the end of the latest trip. */
export function demoDevice(account: DemoAccount, now: Date) {
  const lastTrip = account.journeys.findLast((j) => j.source === 'device');
  const lastSeen = lastTrip?.end_at ?? account.term.start;
  const online = now.getTime() / 1000 - lastSeen <= MOCK_RULES.device_offline.after_hours * 3600;
  return {
    device_id: MOCK_DEVICE_ID,
    kind: 'obd' as const,
    vin: 'WVWZZZ1KZAW000001',
    policy_reference: account.policyReference,
    status: online ? ('online' as const) : ('offline' as const),
    last_seen_at: iso(lastSeen),
    bindings: [
      { policy_reference: account.policyReference, bound_at: iso(account.term.start), unbound_at: null },
    ],
    created_at: iso(account.term.start),
  };
}

/** The monthly mileage budget with this Europe/London month's distance (journeys not void). */
export function demoBudget(account: DemoAccount, now: Date, distancePerMonth = BUDGET_MILES): MileageBudget {
  const month = londonDate(now).slice(0, 7);
  const metres = account.journeys
    .filter((j) => !j.is_void && londonDate(new Date(j.start_at * 1000)).startsWith(month))
    .reduce((sum, j) => sum + j.distance_in_metres, 0);
  return {
    policy_reference: account.policyReference,
    distance_per_month: distancePerMonth,
    usage_unit: 'mile',
    month,
    distance_this_month_in_metres: metres,
    exceeded: metres > milesToMetres(distancePerMonth),
  };
}
