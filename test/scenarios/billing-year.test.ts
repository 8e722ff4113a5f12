import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { billingDateIn, londonMidnight } from '../../src/modules/statements/rules/statement-period.ts';
import { fixedClock } from '../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../support/app.ts';
import { make, type JourneyOptions } from '../support/factories.ts';
import type { PolicyOverrides } from '../support/policy-arbitraries.ts';

// Thirteen months of one policy on billing day 31 and one on 29, from January 2024 (a leap year) to
// February 2025 (a common year), through both clock changes, every billing day run twice.
const clock = fixedClock('2024-01-15T12:00:00Z');
const unix = (iso: string | Date) => Math.floor(new Date(iso).getTime() / 1000);
let t: TestApp;
let company: Awaited<ReturnType<typeof createCompany>>;

before(async () => {
  t = await createTestApp({ overrides: { clock }, startJobs: false });
  company = await createCompany(t.app, 'Scenario');
});
after(() => t.close());

/** From 15 January 2024 to 15 March 2025 at 4.5p a mile, 12 installments of £10, billed on `billingDay`. */
const scenarioPolicy = (billingDay: number, email: string): PolicyOverrides => ({
  proposer: { email },
  policy: {
    start_date: unix('2024-01-15T00:00:00Z'),
    end_date: unix('2025-03-15T00:00:00Z'),
    billing_day_date: billingDay,
    inception_date: undefined,
  },
  pricing: { usage_rate: 0.045, subscription_premium: 10, subscription_installments: 12 },
});
/** A quarter of an hour through north London. */
const DRIVE: JourneyOptions = { points: [51.5, -0.12, 51.52, -0.1, 51.55, -0.09], durationSeconds: 900 };
const postJourney = (reference: string, startIso: string) =>
  make.journey(t.app, company, reference, startIso, DRIVE);

/** A policy's journeys as clients read them, with the statement that billed each. */
async function journeysOf(reference: string) {
  const r = await t.app.inject({
    url: `/journeys?policy_reference=${reference}&limit=500`,
    headers: company.sandbox,
  });
  assert.equal(r.statusCode, 200, r.body);
  return r.json<{
    journeys: Array<{
      journey_reference: string;
      is_void: boolean;
      usage_premium: number;
      statement_version_reference: string | null;
    }>;
  }>().journeys;
}

test('13 months: every billing day billed once, periods continuous, every journey billed exactly once, totals to the penny', async () => {
  const policy31 = await make.policy(t.app, company, scenarioPolicy(31, 'scenario31@example.com'));
  const day31 = policy31.reference;
  const day29 = (await make.policy(t.app, company, scenarioPolicy(29, 'scenario29@example.com'))).reference;
  const premiums = new Map<string, number>();
  let voidedBilled: string | undefined;

  for (let m = 0; m < 14; m++) {
    const year = 2024 + Math.floor(m / 12);
    const month = (m % 12) + 1;
    // Two journeys a month for each policy, mid-month (one posted late, after the billing day).
    for (const reference of [day31, day29]) {
      const mid = `${String(year)}-${String(month).padStart(2, '0')}-16T08:00:00Z`;
      clock.set(new Date(Date.parse(mid) + 3_600_000));
      const j = await postJourney(reference, mid);
      premiums.set(j.journey_reference, Math.round(j.usage_premium * 100));
    }
    if (m === 5) {
      // Mid-period adjustment on 20 June 2024: the rate doubles from then on.
      clock.set('2024-06-20T12:00:00Z');
      await make.adjustment(t.app, company, policy31, { pricing: { usage_rate: 0.09 } });
      clock.set('2024-06-25T12:00:00Z');
      const after = await postJourney(day31, '2024-06-25T08:00:00Z');
      premiums.set(after.journey_reference, Math.round(after.usage_premium * 100));
    }
    for (const [, day] of [
      [day31, 31],
      [day29, 29],
    ] as const) {
      const date = billingDateIn(year, month, day);
      if (Date.parse(date) > Date.parse('2025-03-14')) continue;
      clock.set(new Date(londonMidnight(date).getTime() + 2 * 3_600_000));
      const first = await t.container.services.statements.runBillingDay(date);
      const second = await t.container.services.statements.runBillingDay(date);
      assert.equal(second.billed, 0, `re-running ${date} bills nobody`);
      assert.equal(first.failed + second.failed, 0);
    }
    if (m === 3) {
      // A late upload: a March journey posted in April after March was billed.
      clock.set('2024-04-30T10:00:00Z');
      const late = await postJourney(day31, '2024-03-20T08:00:00Z');
      premiums.set(late.journey_reference, Math.round(late.usage_premium * 100));
      // And a journey billed in March is voided: it becomes a credit.
      const billed = await journeysOf(day31).then((js) =>
        js.find((j) => j.statement_version_reference !== null),
      );
      assert.ok(billed !== undefined);
      voidedBilled = billed.journey_reference;
      const v = await t.app.inject({
        method: 'POST',
        url: `/journeys/${billed.journey_reference}/void`,
        headers: company.sandbox,
        payload: { reason: 'passenger' },
      });
      assert.equal(v.statusCode, 200, v.body);
    }
  }

  for (const reference of [day31, day29]) {
    const policy = await t.container.database.db
      .selectFrom('policies')
      .select('id')
      .where('policy_reference', '=', reference)
      .executeTakeFirstOrThrow();
    const rows = await t.container.database.db
      .selectFrom('statements')
      .selectAll()
      .where('policy_id', '=', policy.id)
      .orderBy('period_start_at')
      .execute();
    assert.equal(rows.length, 14, `${reference}: one statement per billing day`);
    assert.equal(rows[0]!.period_start_at.toISOString(), '2024-01-15T00:00:00.000Z');
    for (let i = 1; i < rows.length; i++) {
      assert.equal(
        rows[i]!.period_start_at.getTime(),
        rows[i - 1]!.period_end_at.getTime() + 1000,
        'continuous',
      );
    }
    for (const row of rows) {
      assert.equal(
        row.period_end_at.getTime(),
        londonMidnight(row.billing_date!).getTime() - 1000,
        'ends at the end of the previous London day',
      );
      assert.equal(row.total_premium_pence, row.usage_premium_pence + row.subscription_premium_pence);
      assert.equal(
        row.billed_premium_pence,
        row.total_premium_pence - row.credits_used_pence + row.brought_forward_pence,
      );
    }
    const dates = rows.map((r) => r.billing_date);
    if (reference === day29) assert.ok(dates.includes('2024-02-29') && dates.includes('2025-02-28'));
    if (reference === day31)
      assert.ok(dates.includes('2024-02-29') && dates.includes('2024-04-30') && dates.includes('2025-02-28'));
    // Installments: 12 at most over the term.
    assert.equal(
      rows.reduce((s, r) => s + r.installments, 0),
      12,
    );

    // Every non-void journey billed exactly once; usage totals add up to the penny.
    const journeys = await journeysOf(reference);
    for (const j of journeys) if (!j.is_void) assert.ok(j.statement_version_reference !== null, 'billed');
    const billedUsage = rows.reduce((s, r) => s + r.usage_premium_pence, 0);
    const journeyUsage = journeys
      .filter((j) => j.statement_version_reference !== null)
      .reduce((s, j) => s + Math.round(j.usage_premium * 100), 0);
    assert.equal(billedUsage, journeyUsage);
    for (const j of journeys)
      assert.equal(Math.round(j.usage_premium * 100), premiums.get(j.journey_reference));
  }
  // The policyholder is emailed each statement's totals.
  const emails = (await t.container.services.notifications.emailsTo('scenario31@example.com')).filter(
    (e) => e.template === 'statement-issued',
  );
  assert.equal(emails.length, 14);
  assert.ok(
    emails.some((e) => e.subject === 'Your statement for 2024-01-31 to 2024-02-28'),
    emails[1]?.subject ?? '',
  );
  assert.ok(emails.every((e) => e.text?.includes('Amount to pay: £') === true));
  // The voided, already billed journey came back as a credit exactly once.
  const credits = await t.container.database.db
    .selectFrom('policy_credits')
    .select(['amount_pence', 'source'])
    .where('source', '=', 'void')
    .execute();
  assert.equal(credits.length, 1);
  assert.equal(credits[0]!.amount_pence, premiums.get(voidedBilled!));
});
