import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { asTenant } from '../../src/modules/companies/index.ts';
import { DEFAULT_RETRY_DAYS, nextAttemptAt } from '../../src/modules/payments/rules/dunning.ts';
import {
  automaticPeriodEnd,
  billingDateIn,
  installmentsDue,
  isBillingDate,
  nextPeriod,
} from '../../src/modules/statements/rules/statement-period.ts';
import { fixedClock } from '../../src/platform/clock.ts';
import { addDays, londonDate, londonMidnight } from '../../src/platform/london-calendar.ts';
import { createCompany, createTestApp, type TestApp } from '../support/app.ts';
import { onPostgres } from '../support/database.ts';
import { make } from '../support/factories.ts';
import {
  SECOND_MS,
  datesBetween,
  expectedBillingDate,
  londonTime,
  modelPeriods,
  termInstallmentInstants,
  within,
  yearlyTerms,
  type Term,
} from './calendar-support.ts';

/**
 * R4, the billing calendar: billing days 1–31 × every month of 2027 and 2028 (2028 a leap year; BST
 * from 2027-03-28 to 2027-10-31 and from 2028-03-26 to 2028-10-29), on a fixed clock.
 * - CALENDAR the pure functions, for every billing day and a set of policy starts over two yearly
 *   terms: billing dates (29–31 on the last day of shorter months, none twice, none skipped),
 *   periods (each from the previous end + 1 s, to 23:59:59 London of the day before its billing
 *   date), installments (each of a term's 12 due once), and dunning days;
 * - SERVICE one policy per billing day from 1 January 2027, renewed for 2028 (automatically at the
 *   end of the term, or six weeks early by its insurer), then lapsed with a final statement; the
 *   clock moved a day at a time from 2027-01-01 to 2029-01-31 as the worker would (terms ended at
 *   00:30, `POST /admin/billing-runs` at 02:00 twice, payments due collected by the end of the day):
 *   its stored statements, installments and charges, and, for a third of the policies, a card that
 *   is always declined (a soft decline), the London days of every dunning attempt.
 * Nothing is random: the sizes below are the whole sweep. The service part runs on PGlite and
 * PostgreSQL alike.
 */
const YEARS = [2027, 2028] as const;
const FIRST_DAY = '2027-01-01';
const LAST_DAY = '2028-12-31';
const BILLING_DAYS = Array.from({ length: 31 }, (_, i) => i + 1);
/** Cover that starts on every day of January 2027, and on each day BST begins or ends (to 2030). */
const STARTS = [...datesBetween('2027-01-01', '2027-01-31'), '2027-03-28', '2027-10-31', '2028-03-26'];
const INSTALLMENTS = 12;
/** The worker's defaults (`BILLING_RUN_AT`, the end-of-terms job), London wall clock. */
const BILLING_RUN_MINUTES = 2 * 60;
const END_TERMS_MINUTES = 30;
const MINUTE_MS = 60_000;

const atLondon = (date: string, minutes: number): Date =>
  new Date(londonMidnight(date).getTime() + minutes * MINUTE_MS);
const iso = (at: Date): string => at.toISOString();

/** The installments of each term due within a period, as the service splits a period across a renewal. */
function installmentsInPeriod(
  terms: readonly Term[],
  billingDay: number,
  startAt: Date,
  endAt: Date,
): Date[] {
  return terms.flatMap((term) => {
    const from = Math.max(startAt.getTime(), term.startAt.getTime());
    const to = Math.min(endAt.getTime(), term.endAt.getTime());
    if (to < from) return [];
    return installmentsDue({
      policyStart: term.startAt,
      billingDay,
      count: INSTALLMENTS,
      periodStart: new Date(from),
      periodEnd: new Date(to),
    });
  });
}

describe('R4 calendar: the pure functions', () => {
  before(() => {
    process.stdout.write(
      `# R4 calendar sweep: ${String(BILLING_DAYS.length)} billing days × ${String(YEARS.length * 12)} months; ` +
        `${String(BILLING_DAYS.length * STARTS.length)} policies (${String(STARTS.length)} starts × 31 billing days) over two yearly terms; ` +
        `dunning from every day of ${FIRST_DAY}..${LAST_DAY}\n`,
    );
  });

  test('billing dates: each billing day once a month, on its day or the last day of a shorter month', () => {
    const days = datesBetween(FIRST_DAY, LAST_DAY);
    for (const billingDay of BILLING_DAYS) {
      const billed = days.filter((date) => isBillingDate(date, billingDay));
      const expected = YEARS.flatMap((year) =>
        Array.from({ length: 12 }, (_, m) => expectedBillingDate(year, m + 1, billingDay)),
      );
      assert.deepEqual(billed, expected, `billing day ${String(billingDay)}: none twice, none skipped`);
      for (const year of YEARS)
        for (let month = 1; month <= 12; month++)
          assert.equal(billingDateIn(year, month, billingDay), expectedBillingDate(year, month, billingDay));
    }
    // The days the promise names: the leap day, and the last day of every shorter month.
    assert.ok(isBillingDate('2028-02-29', 29) && isBillingDate('2028-02-29', 31));
    assert.ok(isBillingDate('2027-02-28', 29) && isBillingDate('2027-02-28', 30));
    assert.ok(!isBillingDate('2028-02-28', 29) && isBillingDate('2028-02-28', 28));
    assert.ok(isBillingDate('2027-04-30', 31) && !isBillingDate('2027-04-30', 29));
  });

  test('periods: continuous, each ending at 23:59:59 London the day before its billing date, across BST', () => {
    let periods = 0;
    let acrossClockChange = 0;
    for (const startOn of STARTS)
      for (const billingDay of BILLING_DAYS) {
        const terms = yearlyTerms(startOn, 2);
        const first = terms[0];
        assert.ok(first !== undefined);
        let previousEnd: Date | null = null;
        for (const period of modelPeriods(terms, billingDay)) {
          const end = period.billingDate === null ? period.endAt : automaticPeriodEnd(period.billingDate);
          const next = nextPeriod(previousEnd, first.startAt, end);
          assert.ok(next.ok, `${startOn} day ${String(billingDay)}: ${period.billingDate ?? 'final'}`);
          assert.equal(iso(next.start), iso(period.startAt));
          assert.equal(iso(next.end), iso(period.endAt));
          if (previousEnd !== null) assert.equal(next.start.getTime(), previousEnd.getTime() + SECOND_MS);
          assert.equal(londonTime(next.end), '23:59:59');
          if (period.billingDate !== null) {
            assert.equal(londonDate(next.end), addDays(period.billingDate, -1));
            assert.equal(next.end.getTime() + SECOND_MS, londonMidnight(period.billingDate).getTime());
          }
          // A period that holds a clock change is an hour shorter or longer than its calendar days.
          const wholeDays = (next.end.getTime() + SECOND_MS - next.start.getTime()) / 86_400_000;
          if (!Number.isInteger(wholeDays) && londonTime(next.start) === '00:00:00') acrossClockChange++;
          previousEnd = next.end;
          periods++;
        }
        assert.equal(
          iso(previousEnd ?? new Date(0)),
          iso(terms[1]?.endAt ?? new Date(0)),
          'to the end of cover',
        );
      }
    process.stdout.write(
      `# R4 periods: ${String(periods)} checked, ${String(acrossClockChange)} across a clock change\n`,
    );
    assert.ok(acrossClockChange > 0);
  });

  test("installments: each of a term's 12 falls due in exactly one period, on its billing date", () => {
    for (const startOn of STARTS)
      for (const billingDay of BILLING_DAYS) {
        const terms = yearlyTerms(startOn, 2);
        const seen = new Map<string, number>();
        for (const period of modelPeriods(terms, billingDay))
          for (const at of installmentsInPeriod(terms, billingDay, period.startAt, period.endAt))
            seen.set(iso(at), (seen.get(iso(at)) ?? 0) + 1);
        const expected = terms.flatMap((term) => termInstallmentInstants(term, billingDay, INSTALLMENTS));
        const label = `${startOn} day ${String(billingDay)}`;
        assert.equal(expected.length, 2 * INSTALLMENTS, label);
        assert.deepEqual([...seen.keys()], expected.map(iso), label);
        assert.ok(
          [...seen.values()].every((n) => n === 1),
          `${label}: none twice`,
        );
        for (const term of terms)
          assert.equal(
            expected.filter((at) => within(at, term.startAt, term.endAt)).length,
            INSTALLMENTS,
            `${label}: 12 in each term`,
          );
      }
  });

  test('dunning: after a decline at the billing run, each retry on its London day, then none', () => {
    for (const date of datesBetween(FIRST_DAY, LAST_DAY)) {
      const failedAt = atLondon(date, BILLING_RUN_MINUTES);
      DEFAULT_RETRY_DAYS.forEach((days, i) => {
        const at = nextAttemptAt(failedAt, i + 1, false);
        assert.ok(at !== null);
        assert.equal(londonDate(at), addDays(date, days), `${date}: retry ${String(i + 1)}`);
      });
      assert.equal(nextAttemptAt(failedAt, DEFAULT_RETRY_DAYS.length + 1, false), null, 'spent');
      assert.equal(nextAttemptAt(failedAt, 1, true), null, 'a hard decline waits for a new card');
    }
  });

  test('dunning: after a decline at any time of day (a statement on demand, a final statement at 00:30), each retry on its London day', () => {
    const missed: string[] = [];
    for (const date of datesBetween(FIRST_DAY, LAST_DAY))
      for (let minutes = 0; minutes < 24 * 60; minutes += 60) {
        const failedAt = atLondon(date, minutes);
        if (londonDate(failedAt) !== date) continue;
        DEFAULT_RETRY_DAYS.forEach((days, i) => {
          const at = nextAttemptAt(failedAt, i + 1, false);
          if (at === null || londonDate(at) !== addDays(date, days))
            missed.push(`${iso(failedAt)} retry ${String(i + 1)} → ${at === null ? 'none' : iso(at)}`);
        });
      }
    assert.deepEqual(missed.slice(0, 5), [], `${String(missed.length)} retries on another day`);
  });
});

describe('R4 calendar: the service, day by day', () => {
  const clock = fixedClock('2026-12-01T12:00:00Z');
  let t: TestApp;
  let company: Awaited<ReturnType<typeof createCompany>>;
  /** Billing days whose policy's card is always declined (a soft decline: dunning retries it). */
  const DECLINED = new Set(BILLING_DAYS.filter((d) => d % 3 === 0));
  /** Billing days whose policy is renewed early by its insurer (`auto_renew: false`) rather than automatically. */
  const RENEWED_EARLY = new Set(BILLING_DAYS.filter((d) => d % 2 === 0));
  const RENEW_EARLY_ON = '2027-11-20';
  const RENEW_AUTOMATICALLY_ON = '2027-06-15';
  const policies = new Map<number, string>();
  const pricingOf = new Map<string, unknown>();
  const unix = (at: Date): number => Math.floor(at.getTime() / 1000);
  const payments = (payload: Record<string, unknown>) =>
    t.app.inject({
      method: 'POST',
      url: '/payments',
      headers: company.sandbox,
      payload: { product_reference: 'calendar', ...payload },
    });

  before(async () => {
    t = await createTestApp({ overrides: { clock }, listen: true });
    company = await createCompany(t.app, 'Calendar');
    process.stdout.write(
      `# R4 service: ${String(BILLING_DAYS.length)} policies (one per billing day, ${String(DECLINED.size)} with a declined card, ` +
        `${String(RENEWED_EARLY.size)} renewed early on ${RENEW_EARLY_ON}, the rest automatically), ` +
        `${String(datesBetween(FIRST_DAY, '2029-01-31').length)} days from ${FIRST_DAY} (${onPostgres ? 'PostgreSQL' : 'PGlite'})\n`,
    );
  });
  after(() => t.close());

  /** A policy from 00:00 London on 1 January 2027 for a year, bound with a card payment. */
  async function policyBilledOn(billingDay: number): Promise<string> {
    const [term] = yearlyTerms(FIRST_DAY, 1);
    assert.ok(term !== undefined);
    const { reference, input } = await make.cardPaidPolicy(
      t,
      company,
      {
        proposer: { email: `calendar${String(billingDay)}@example.com` },
        policy: {
          start_date: unix(term.startAt),
          end_date: unix(term.endAt),
          inception_date: unix(term.startAt),
          billing_day_date: billingDay,
          auto_renew: !RENEWED_EARLY.has(billingDay),
        },
        pricing: { upfront_premium: 95.5, subscription_premium: 10, subscription_installments: INSTALLMENTS },
      },
      { productReference: 'calendar' },
    );
    pricingOf.set(reference, input.pricing);
    if (DECLINED.has(billingDay)) {
      const card = await payments({
        type: 'ADD_NEW_PAYMENT_METHOD',
        policy_reference: reference,
        payment_method_id: 'pm_card_chargeDeclinedInsufficientFunds',
      });
      assert.equal(card.statusCode, 200, card.body);
    }
    return reference;
  }

  async function renew(reference: string, expectScheduled: boolean): Promise<void> {
    const renewed = await t.app.inject({
      method: 'POST',
      url: `/policys/${reference}/renewals`,
      headers: company.sandbox,
      payload: { pricing: pricingOf.get(reference) },
    });
    assert.equal(renewed.statusCode, expectScheduled ? 202 : 201, renewed.body);
  }

  /** Statement payments' attempt counts, by payment id. */
  async function attemptCounts(): Promise<Map<string, number>> {
    const rows = await t.container.database.db
      .selectFrom('payments')
      .select(['id', 'attempts'])
      .where('purpose', '=', 'statement')
      .execute();
    return new Map(rows.map((r) => [r.id, r.attempts]));
  }

  test('two years of billing days: statements continuous, installments once each, charges once, dunning on its days', async () => {
    for (const billingDay of BILLING_DAYS) policies.set(billingDay, await policyBilledOn(billingDay));

    const attemptDays = new Map<string, string[]>();
    let seen = await attemptCounts();
    const runs = { billed: 0, again: 0 };
    for (const date of datesBetween(FIRST_DAY, '2029-01-31')) {
      // The worker's day: terms that ended are renewed or lapse (a lapse issues the final statement),
      clock.set(atLondon(date, END_TERMS_MINUTES));
      const ended = await t.container.services.policies.endTerms();
      // (the final statement is a job's: issued here as the job would, once)
      if (ended.lapsed > 0) {
        const lapsed = await t.container.database.db
          .selectFrom('policies')
          .select(['policy_reference', 'company_id', 'current_end_at'])
          .where('status', '=', 'lapsed')
          .where('policy_reference', 'in', [...policies.values()])
          .execute();
        for (const row of lapsed)
          await t.container.services.statements.issueFinal(
            asTenant(row.company_id, 'sandbox'),
            row.policy_reference,
            row.current_end_at,
          );
      }
      // then the billing run (run twice: the second bills nobody), and payments due all day long.
      clock.set(atLondon(date, BILLING_RUN_MINUTES));
      for (const pass of [0, 1]) {
        const run = await t.app.inject({
          method: 'POST',
          url: '/admin/billing-runs',
          headers: t.adminHeaders,
          payload: { date },
        });
        assert.equal(run.statusCode, 200, run.body);
        const counts = run.json<{ billed: number; failed: number }>();
        assert.equal(counts.failed, 0, `${date}: ${run.body}`);
        if (pass === 0) runs.billed += counts.billed;
        else runs.again += counts.billed;
      }
      // Midday: renewal terms are stored, for automatic renewal at the end of the term, or (by the
      // insurers who renew by hand) written as the next term six weeks early.
      if (date === RENEW_AUTOMATICALLY_ON || date === RENEW_EARLY_ON) {
        clock.set(atLondon(date, 12 * 60));
        for (const billingDay of BILLING_DAYS)
          if (RENEWED_EARLY.has(billingDay) === (date === RENEW_EARLY_ON))
            await renew(policies.get(billingDay) ?? '', date === RENEW_AUTOMATICALLY_ON);
      }
      // The worker looks every 10 s; one look at the end of the day finds what fell due in it.
      clock.set(new Date(londonMidnight(addDays(date, 1)).getTime() - SECOND_MS));
      await t.container.services.payments.collectDue();
      const now = await attemptCounts();
      for (const [id, attempts] of now) {
        const before = seen.get(id) ?? 0;
        for (let n = before; n < attempts; n++) attemptDays.set(id, [...(attemptDays.get(id) ?? []), date]);
      }
      seen = now;
    }
    assert.equal(runs.again, 0, 'a billing day run again bills nobody');

    const terms = yearlyTerms(FIRST_DAY, 2);
    const failures: string[] = [];
    const check = (ok: boolean, message: string) => {
      if (!ok) failures.push(message);
    };
    let statementCount = 0;
    let retryCount = 0;
    for (const billingDay of BILLING_DAYS) {
      const label = `day ${String(billingDay)}`;
      const policy = await t.container.database.db
        .selectFrom('policies')
        .select('id')
        .where('policy_reference', '=', policies.get(billingDay) ?? '')
        .executeTakeFirstOrThrow();
      const rows = await t.container.database.db
        .selectFrom('statements as s')
        .leftJoin('payments as p', 'p.id', 's.payment_id')
        .select([
          's.period_start_at',
          's.period_end_at',
          's.billing_date',
          's.final',
          's.installments',
          's.subscription_premium_pence',
          's.billed_premium_pence',
          'p.id as payment_id',
          'p.status as payment_status',
          'p.amount_pence',
          'p.attempts',
        ])
        .where('s.policy_id', '=', policy.id)
        .orderBy('s.period_start_at')
        .execute();
      statementCount += rows.length;
      const model = modelPeriods(terms, billingDay);
      const billedOn = rows.map((r) => r.billing_date ?? 'final');
      const expectedOn = model.map((p) => p.billingDate ?? 'final');
      check(
        JSON.stringify(billedOn) === JSON.stringify(expectedOn),
        `${label}: ${String(billedOn.length)} statements, expected ${String(expectedOn.length)}; ` +
          `not billed on ${expectedOn.filter((d) => !billedOn.includes(d)).join(' ') || '-'}, ` +
          `billed on other days ${billedOn.filter((d) => !expectedOn.includes(d)).join(' ') || '-'}`,
      );
      rows.forEach((row, i) => {
        const at = `${label} ${row.billing_date ?? 'final'}`;
        const previous = rows[i - 1];
        check(
          previous === undefined
            ? iso(row.period_start_at) === iso(terms[0]?.startAt ?? new Date(0))
            : row.period_start_at.getTime() === previous.period_end_at.getTime() + SECOND_MS,
          `${at}: starts ${iso(row.period_start_at)}, not 1 s after the previous end`,
        );
        check(londonTime(row.period_end_at) === '23:59:59', `${at}: ends ${iso(row.period_end_at)}`);
        if (row.billing_date !== null)
          check(
            row.period_end_at.getTime() + SECOND_MS === londonMidnight(row.billing_date).getTime(),
            `${at}: ends ${iso(row.period_end_at)}, not the end of the day before`,
          );
        const expected = installmentsInPeriod(
          terms,
          billingDay,
          row.period_start_at,
          row.period_end_at,
        ).length;
        check(
          row.installments === expected,
          `${at}: ${String(row.installments)} installments, expected ${String(expected)}`,
        );
        check(row.subscription_premium_pence === row.installments * 1000, `${at}: subscription premium`);
        // Installments are this book's only charge: a statement owes them, and is charged them once.
        if (row.billed_premium_pence === 0)
          check(row.payment_id === null, `${at}: nothing to charge, charged`);
        else {
          check(
            Number(row.amount_pence) === row.billed_premium_pence,
            `${at}: charged ${String(row.amount_pence)}`,
          );
          const days = attemptDays.get(row.payment_id ?? '') ?? [];
          const chargedOn = row.billing_date ?? addDays(londonDate(row.period_end_at), 1);
          const expectedDays = DECLINED.has(billingDay)
            ? [chargedOn, ...DEFAULT_RETRY_DAYS.map((d) => addDays(chargedOn, d))]
            : [chargedOn];
          check(
            JSON.stringify(days) === JSON.stringify(expectedDays),
            `${at}: attempts on ${days.join(' ')}; expected ${expectedDays.join(' ')}`,
          );
          check(
            row.payment_status === (DECLINED.has(billingDay) ? 'failed' : 'succeeded'),
            `${at}: payment ${String(row.payment_status)}`,
          );
          if (DECLINED.has(billingDay)) retryCount += Math.max(0, days.length - 1);
        }
      });
      const total = rows.reduce((sum, r) => sum + r.installments, 0);
      check(total === 2 * INSTALLMENTS, `${label}: ${String(total)} installments over two terms`);
    }
    process.stdout.write(
      `# R4 service: ${String(statementCount)} statements, ${String(runs.billed)} billed by runs, ${String(retryCount)} dunning retries, ${String(failures.length)} failures\n`,
    );
    assert.deepEqual(failures, []);
  });
});
