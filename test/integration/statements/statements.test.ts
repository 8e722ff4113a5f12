import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { onPostgres } from '../../support/database.ts';
import { make } from '../../support/factories.ts';
import { dueForBilling } from '../../../src/modules/statements/billing-day-repository.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;
interface Statement {
  policy_version_reference: string;
  statement_start_date: string;
  statement_end_date: string;
  journey_count: number;
  usage_premium: number;
  subscription_premium: number;
  total_premium: number;
  billed_premium: number;
  credits_used: number;
  subscription_installments: number;
  distance_in_metres: number;
  journeys: Array<{ journey_reference: string; start_at: string; is_void: boolean; usage_premium: number }>;
  payment?: { payment_amount: number | null; error_message?: string };
}

// The example policy: term 2025-06-01 00:00 London (2025-05-31T23:00Z) to 2026-05-31, billing day 1,
// 12 installments of 29.99, usage 0.045 a mile.
const clock = fixedClock('2025-07-20T12:00:00Z');
const unix = (iso: string) => Date.parse(iso) / 1000;
let t: TestApp;
let acme: Company;
let other: Company;

before(async () => {
  t = await createTestApp({ overrides: { clock }, startJobs: true, listen: true });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
});
after(() => t.close());

const statement = (
  reference: string,
  effectiveIso?: string,
  headers: Record<string, string> = acme.sandbox,
) =>
  t.app.inject({
    method: 'POST',
    url: '/statements',
    headers,
    payload: {
      policy_reference: reference,
      ...(effectiveIso === undefined ? {} : { effective_date: unix(effectiveIso) }),
    },
  });

const pence = (pounds: number) => Math.round(pounds * 100);

describe('POST /statements', () => {
  test('a statement bills the period’s journeys and installments; periods are continuous; late journeys go to the next', async () => {
    const { reference } = await make.policy(t.app, acme);
    const a = await make.journey(t.app, acme, reference, '2025-06-03T08:00:00Z');
    const b = await make.journey(t.app, acme, reference, '2025-06-20T17:30:00Z');
    const r = await statement(reference, '2025-06-30T22:59:59Z');
    assert.equal(r.statusCode, 201, r.body);
    const first = r.json<Statement>();
    assert.equal(
      first.statement_start_date,
      '2025-05-31T23:00:00.000Z',
      'the first period starts at the policy start',
    );
    assert.equal(first.statement_end_date, '2025-06-30T22:59:59.000Z');
    assert.equal(first.journey_count, 2);
    assert.equal(
      pence(first.usage_premium),
      pence(a.usage_premium) + pence(b.usage_premium),
      'usage is the exact sum',
    );
    assert.equal(first.subscription_installments, 1);
    assert.equal(first.subscription_premium, 29.99);
    assert.equal(pence(first.total_premium), pence(first.usage_premium) + 2999);
    assert.equal(first.billed_premium, first.total_premium);
    assert.equal(first.payment, undefined, 'no card on file: no payment attempted');
    assert.match(first.journeys[0]!.start_at, /^2025-06-03T08:00:00/);

    // The same or an earlier end → 409; a late June journey lands in the next statement.
    const again = await statement(reference, '2025-06-30T22:59:59Z');
    assert.equal(again.statusCode, 409);
    assert.equal(again.json<{ code: string }>().code, 'STATEMENT_PERIOD_CONFLICT');
    const late = await make.journey(t.app, acme, reference, '2025-06-25T09:00:00Z');
    const july = await make.journey(t.app, acme, reference, '2025-07-05T09:00:00Z');
    const second = (await statement(reference, '2025-07-15T12:00:00Z')).json<Statement>();
    assert.equal(second.statement_start_date, '2025-06-30T23:00:00.000Z', 'previous end + 1 s');
    assert.deepEqual(
      new Set(second.journeys.map((j) => j.journey_reference)),
      new Set([late.journey_reference, july.journey_reference]),
    );
    assert.equal(second.subscription_installments, 1, 'the 1 July installment');

    const policy = (await t.app.inject({ url: `/policys/${reference}`, headers: acme.sandbox })).json<{
      versions: Array<
        Record<string, unknown> & {
          version_type: string;
          policy_version_reference: string;
          statement_start_date: string | null;
          usage_premium: number | null;
        }
      >;
    }>();
    const st = policy.versions.filter((v) => v.version_type === 'st');
    assert.equal(st.length, 2);
    assert.equal(st[0]!.statement_start_date, '2025-05-31T23:00:00.000Z');
    assert.equal(st[0]!.usage_premium, first.usage_premium);
    // A statement changes no term: its version shows the policy as the version before it does.
    const [nb] = policy.versions;
    const termsOf = (v: Record<string, unknown>) => {
      const {
        version_type,
        policy_version_reference,
        statement_start_date,
        statement_end_date,
        usage_premium,
        created_at,
        effective_date,
        ...terms
      } = v;
      return terms;
    };
    assert.deepEqual(termsOf(st[1]!), termsOf(nb!));
  });

  test('a voided billed journey becomes a credit; goodwill credits too; billed never goes negative', async () => {
    const { reference } = await make.policy(t.app, acme);
    const j = await make.journey(t.app, acme, reference, '2025-06-10T08:00:00Z');
    await statement(reference, '2025-06-30T22:59:59Z');
    const voided = await t.app.inject({
      method: 'POST',
      url: `/journeys/${j.journey_reference}/void`,
      headers: acme.sandbox,
      payload: { reason: 'passenger, not driver' },
    });
    assert.equal(voided.statusCode, 200, voided.body);
    const credit = await t.app.inject({
      method: 'POST',
      url: '/admin/credits',
      headers: t.adminHeaders,
      payload: {
        company_reference: acme.company_reference,
        environment: 'sandbox',
        policy_reference: reference,
        amount: 100,
        reason: 'goodwill',
      },
    });
    assert.equal(credit.statusCode, 201, credit.body);
    const next = (await statement(reference, '2025-07-15T12:00:00Z')).json<Statement>();
    assert.equal(next.journey_count, 0);
    assert.equal(next.credits_used, next.total_premium, 'credits pay it all');
    assert.equal(next.billed_premium, 0);
    const balance = await t.container.database.db
      .selectFrom('policy_credits')
      .select((eb) => eb.fn.sum<string>('amount_pence').as('s'))
      .where('source', '!=', 'refund')
      .executeTakeFirstOrThrow();
    assert.ok(Number(balance.s) >= 0, 'the ledger never goes below zero');
  });

  test('validation, authorisation and reads', async () => {
    const { reference } = await make.policy(t.app, acme);
    assert.equal(
      (
        await t.app.inject({
          method: 'POST',
          url: '/statements',
          headers: acme.sandbox,
          payload: { effective_date: 1 },
        })
      ).statusCode,
      422,
    );
    assert.equal(
      (
        await t.app.inject({
          method: 'POST',
          url: '/statements',
          headers: acme.sandbox,
          payload: { policy_reference: reference, effective_date: 'soon' },
        })
      ).statusCode,
      422,
    );
    assert.equal((await statement(reference, '2025-06-30T22:59:59Z', other.sandbox)).statusCode, 404);
    assert.equal((await statement(reference, '2025-06-30T22:59:59Z', {})).statusCode, 401);
    const created = (await statement(reference, '2025-06-30T22:59:59Z')).json<Statement>();
    const read = await t.app.inject({
      url: `/statements/${created.policy_version_reference}`,
      headers: acme.sandbox,
    });
    assert.equal(read.statusCode, 200);
    assert.deepEqual(read.json(), created);
    assert.equal(
      (await t.app.inject({ url: `/statements/${created.policy_version_reference}`, headers: other.sandbox }))
        .statusCode,
      404,
    );
    const list = await t.app.inject({
      url: `/statements?policy_reference=${reference}`,
      headers: acme.sandbox,
    });
    assert.equal(list.json<{ statements: unknown[] }>().statements.length, 1);
    assert.equal(
      (await t.app.inject({ url: `/statements?policy_reference=${reference}`, headers: other.sandbox }))
        .statusCode,
      404,
    );
  });
});

describe('billing runs and final statements', () => {
  test('a policy that breaks its chunk is billed alone and fails; the rest of the chunk is billed', async () => {
    const { reference: good } = await make.policy(t.app, acme, { policy: { billing_day_date: 20 } });
    const { reference: broken } = await make.policy(t.app, acme, { policy: { billing_day_date: 20 } });
    await make.journey(t.app, acme, good, '2025-06-05T08:00:00Z');
    // Broken data: the row's version count is behind its versions, so the statement's version collides
    // with one already stored (a unique key) inside the chunk's transaction.
    await sql`
      update policies set version_count = version_count - 1 where policy_reference = ${broken}`.execute(
      t.container.database.db,
    );
    const counts = await t.container.services.statements.runBillingDay('2025-06-20');
    assert.equal(counts.failed, 1);
    assert.ok(counts.billed >= 1);
    const statementsOf = async (reference: string) =>
      (await t.app.inject({ url: `/statements?policy_reference=${reference}`, headers: acme.sandbox })).json<{
        statements: Statement[];
      }>().statements;
    const billed = (await statementsOf(good))[0];
    assert.ok(billed !== undefined);
    assert.equal(billed.journey_count, 1);
    assert.equal(billed.statement_end_date, '2025-06-19T22:59:59.000Z');
    assert.equal((await statementsOf(broken)).length, 0, 'nothing of the failed policy was written');
  });

  test('a billing day bills every due policy once, however often it runs', async () => {
    const { reference: due } = await make.policy(t.app, acme, { policy: { billing_day_date: 31 } });
    const { reference: notDue } = await make.policy(t.app, acme, { policy: { billing_day_date: 15 } });
    await make.journey(t.app, acme, due, '2025-06-12T08:00:00Z');
    // 2025-06-30 is the last day of June: billing day 31 falls on it.
    const run = await t.app.inject({
      method: 'POST',
      url: '/admin/billing-runs',
      headers: t.adminHeaders,
      payload: { date: '2025-06-30' },
    });
    assert.equal(run.statusCode, 200, run.body);
    const counts = run.json<{ due: number; billed: number; already_billed: number; failed: number }>();
    assert.ok(counts.billed >= 1 && counts.failed === 0);
    const rerun = (
      await t.app.inject({
        method: 'POST',
        url: '/admin/billing-runs',
        headers: t.adminHeaders,
        payload: { date: '2025-06-30' },
      })
    ).json<typeof counts>();
    assert.equal(rerun.billed, 0);
    assert.equal(rerun.already_billed, counts.billed);
    const statements = (
      await t.app.inject({ url: `/statements?policy_reference=${due}`, headers: acme.sandbox })
    ).json<{ statements: Statement[] }>().statements;
    assert.equal(statements.length, 1);
    assert.equal(
      statements[0]!.statement_end_date,
      '2025-06-29T22:59:59.000Z',
      'the end of the day before, London time',
    );
    assert.equal(
      (await t.app.inject({ url: `/statements?policy_reference=${notDue}`, headers: acme.sandbox })).json<{
        statements: unknown[];
      }>().statements.length,
      0,
    );
    assert.equal(
      (
        await t.app.inject({
          method: 'POST',
          url: '/admin/billing-runs',
          headers: t.adminHeaders,
          payload: { date: '2025-02-30' },
        })
      ).statusCode,
      422,
    );
    assert.equal(
      (await t.app.inject({ method: 'POST', url: '/admin/billing-runs', payload: { date: '2025-06-30' } }))
        .statusCode,
      401,
    );
  });

  test('the due policies are read a page at a time, each once, in order within each billing day', async () => {
    const newPolicy = async (billingDay: number) =>
      (await make.policy(t.app, acme, { policy: { billing_day_date: billingDay } })).reference;
    const created = [
      ...(await Promise.all([30, 30, 30].map((day) => newPolicy(day)))),
      ...(await Promise.all([31, 31].map((day) => newPolicy(day)))),
    ];
    await newPolicy(15);
    const db = t.container.database.db;
    // 2025-06-30, the last day of June: billing days 30 and 31 are due on it.
    const due = {
      billingDays: [30, 31],
      billingInstant: new Date('2025-06-30T00:00:00+01:00'),
      date: '2025-06-30',
    };
    const read = async (pageSize: number) => {
      const pages = [];
      for await (const page of dueForBilling(db, { ...due, pageSize })) pages.push(page);
      return pages;
    };
    const whole = await read(1000);
    assert.equal(whole.length, 2, 'a page a billing day');
    const paged = await read(2);
    assert.ok(paged.length >= 3 && paged.every((page) => page.length >= 1 && page.length <= 2));
    assert.deepEqual(paged.flat(), whole.flat(), 'the pages hold the same policies in the same order');
    const references = paged.flat().map((p) => p.reference);
    assert.equal(new Set(references).size, references.length, 'no policy twice');
    for (const reference of created) assert.ok(references.includes(reference), reference);
    const days = await db
      .selectFrom('policies')
      .select(['id', 'billing_day'])
      .where('policy_reference', 'in', references)
      .execute();
    const dayOf = new Map(days.map((d) => [d.id, d.billing_day]));
    const keys = paged.flat().map((p) => [dayOf.get(p.id) ?? 0, p.id] as const);
    for (let i = 1; i < keys.length; i++) {
      const [dayBefore, idBefore] = keys[i - 1] ?? [0, ''];
      const [day, id] = keys[i] ?? [0, ''];
      assert.ok(dayBefore < day || (dayBefore === day && idBefore < id), 'by billing day, then id');
    }
  });

  test("a first statement ending before the policy's start: 409 naming the start_date", async () => {
    const { reference } = await make.policy(t.app, acme);
    const r = await t.app.inject({
      method: 'POST',
      url: '/statements',
      headers: acme.sandbox,
      payload: { policy_reference: reference, effective_date: Date.parse('2025-05-01T00:00:00Z') / 1000 },
    });
    assert.equal(r.statusCode, 409, r.body);
    const problem = r.json<{ code: string; detail: string }>();
    assert.equal(problem.code, 'STATEMENT_PERIOD_CONFLICT');
    assert.match(problem.detail, /start_date \(2025-05-31T23:00:00\.000Z\)/);
  });

  test('a billing run for a day after today (Europe/London) is refused and bills nothing', async () => {
    const { reference } = await make.policy(t.app, acme, { policy: { billing_day_date: 25 } });
    // The clock stands at 2025-07-20: the 21st has not begun in London.
    const future = await t.app.inject({
      method: 'POST',
      url: '/admin/billing-runs',
      headers: t.adminHeaders,
      payload: { date: '2025-07-25' },
    });
    assert.equal(future.statusCode, 422, future.body);
    assert.equal(future.json<{ code: string }>().code, 'BILLING_DATE_IN_FUTURE');
    assert.equal(
      (await t.app.inject({ url: `/statements?policy_reference=${reference}`, headers: acme.sandbox })).json<{
        statements: unknown[];
      }>().statements.length,
      0,
    );
    const today = await t.app.inject({
      method: 'POST',
      url: '/admin/billing-runs',
      headers: t.adminHeaders,
      payload: { date: '2025-07-20' },
    });
    assert.equal(today.statusCode, 200, today.body);
  });

  test('a cancellation issues the final statement up to its effective date', async () => {
    const { reference } = await make.policy(t.app, acme);
    await make.journey(t.app, acme, reference, '2025-07-02T08:00:00Z');
    const cancelled = await t.app.inject({
      method: 'DELETE',
      url: `/policys/${reference}`,
      headers: acme.sandbox,
      payload: { effective_date: unix('2025-07-10T00:00:00Z') },
    });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    let statements: Statement[] = [];
    for (let i = 0; i < 100 && statements.length === 0; i++) {
      statements = (
        await t.app.inject({ url: `/statements?policy_reference=${reference}`, headers: acme.sandbox })
      ).json<{ statements: Statement[] }>().statements;
      if (statements.length === 0) await sleep(100);
    }
    assert.equal(statements.length, 1);
    assert.equal(statements[0]!.statement_end_date, '2025-07-10T00:00:00.000Z');
    assert.equal(statements[0]!.journey_count, 1);
    assert.equal((await statement(reference)).statusCode, 409, 'nothing more to bill on a cancelled policy');
  });

  test('a final statement does not bill an installment falling due at the instant cover ends', async () => {
    const finalOf = async (reference: string): Promise<Statement> => {
      for (let i = 0; i < 100; i++) {
        const listed = (
          await t.app.inject({ url: `/statements?policy_reference=${reference}`, headers: acme.sandbox })
        ).json<{ statements: Statement[] }>().statements;
        const last = listed.find((s) => s.statement_end_date !== '2025-06-30T22:59:59.000Z');
        if (last !== undefined) return last;
        await sleep(100);
      }
      throw new Error('no final statement');
    };
    const cancel = (reference: string, iso: string) =>
      t.app.inject({
        method: 'DELETE',
        url: `/policys/${reference}`,
        headers: acme.sandbox,
        payload: { effective_date: unix(iso) },
      });
    // Cancelled from inception: the first installment falls due at the start, when cover ends.
    const fromStart = await make.policy(t.app, acme);
    assert.equal((await cancel(fromStart.reference, '2025-05-31T23:00:00Z')).statusCode, 200);
    const first = await finalOf(fromStart.reference);
    assert.equal(first.subscription_installments, 0, 'no installment for no cover');
    assert.equal(first.billed_premium, 0);
    // Cancelled at 00:00 on the 1 July billing day, after June was billed: July's installment buys nothing.
    const { reference } = await make.policy(t.app, acme);
    assert.equal((await statement(reference, '2025-06-30T22:59:59Z')).statusCode, 201);
    assert.equal((await cancel(reference, '2025-06-30T23:00:00Z')).statusCode, 200);
    const last = await finalOf(reference);
    assert.equal(last.statement_end_date, '2025-06-30T23:00:00.000Z');
    assert.equal(last.subscription_installments, 0, 'the 1 July installment is not billed');
    assert.equal(last.subscription_premium, 0);
    assert.equal(last.billed_premium, 0);
  });

  test(
    'concurrent statements for one policy never overlap nor bill a journey twice',
    { skip: !onPostgres && 'row locks are exercised on PostgreSQL' },
    async () => {
      const { reference } = await make.policy(t.app, acme);
      for (let d = 1; d <= 6; d++)
        await make.journey(t.app, acme, reference, `2025-06-0${String(d)}T08:00:00Z`);
      const results = await Promise.all([
        statement(reference, '2025-06-30T22:59:59Z'),
        statement(reference, '2025-06-30T22:59:59Z'),
        statement(reference, '2025-07-10T00:00:00Z'),
      ]);
      const ok = results.filter((r) => r.statusCode === 201).map((r) => r.json<Statement>());
      assert.ok(results.every((r) => r.statusCode === 201 || r.statusCode === 409));
      assert.equal(
        ok.reduce((sum, s) => sum + s.journey_count, 0),
        6,
        'every journey billed exactly once',
      );
      const rows = await t.container.database.db
        .selectFrom('statements')
        .select(['period_start_at', 'period_end_at'])
        .where(
          'id',
          'in',
          ok.map((s) => s.policy_version_reference),
        )
        .orderBy('period_start_at')
        .execute();
      for (let i = 1; i < rows.length; i++)
        assert.equal(rows[i]!.period_start_at.getTime(), rows[i - 1]!.period_end_at.getTime() + 1000);
    },
  );

  test(
    'journeys stored and voided while statements are written are billed exactly once, or credited',
    { skip: !onPostgres && 'row locks are exercised on PostgreSQL' },
    async () => {
      const { reference } = await make.policy(t.app, acme);
      const early = [];
      for (let d = 1; d <= 8; d++)
        early.push(await make.journey(t.app, acme, reference, `2025-06-0${String(d)}T08:00:00Z`));
      // Uploads, voids and two statements all at once; which statement wins a race is up to the database.
      const racing = await Promise.all([
        ...Array.from({ length: 12 }, (_, i) =>
          make.journey(t.app, acme, reference, `2025-06-${String(10 + i)}T09:00:00Z`),
        ),
        statement(reference, '2025-06-15T00:00:00Z'),
        ...early.map((j) =>
          t.app.inject({
            method: 'POST',
            url: `/journeys/${j.journey_reference}/void`,
            headers: acme.sandbox,
            payload: { reason: 'race' },
          }),
        ),
        statement(reference, '2025-06-25T00:00:00Z'),
      ]);
      for (const r of racing)
        if ('statusCode' in r) assert.ok([200, 201, 409].includes(r.statusCode), r.body);
      assert.equal((await statement(reference)).statusCode, 201, 'the rest is billed now');

      const listed = await t.app.inject({
        url: `/statements?policy_reference=${reference}`,
        headers: acme.sandbox,
      });
      const statements = listed.json<{ statements: Statement[] }>().statements;
      const times = new Map<string, number>();
      let billedThenVoided = 0;
      for (const st of statements) {
        assert.equal(st.journeys.length, st.journey_count);
        assert.equal(
          pence(st.usage_premium),
          st.journeys.reduce((sum, j) => sum + pence(j.usage_premium), 0),
        );
        for (const j of st.journeys) {
          times.set(j.journey_reference, (times.get(j.journey_reference) ?? 0) + 1);
          if (j.is_void) billedThenVoided++;
        }
      }
      assert.equal(
        times.size,
        statements.reduce((sum, st) => sum + st.journey_count, 0),
        'none twice',
      );
      const voided = new Set(early.map((j) => j.journey_reference));
      assert.equal([...times.keys()].filter((id) => !voided.has(id)).length, 12, 'every upload billed');
      const credits = await t.container.database.db
        .selectFrom('policy_credits as c')
        .innerJoin('policies as p', 'p.id', 'c.policy_id')
        .select('c.amount_pence')
        .where('p.policy_reference', '=', reference)
        .where('c.source', '=', 'void')
        .execute();
      assert.equal(credits.length, billedThenVoided, 'each billed journey voided is credited once');
    },
  );
});

describe('payment collection', () => {
  test('billed premium is charged to the card; a decline returns the statement with the error', async () => {
    const pay = async (card: string) => {
      const intent = (
        await t.app.inject({
          method: 'POST',
          url: '/payments',
          headers: acme.sandbox,
          payload: { type: 'CREATE_PAYMENT_INTENT', product_reference: 'ppm', amount: 9550 },
        })
      ).json<Record<string, string>>();
      const base = t.container.gateways.sandboxBaseUrl()!;
      await fetch(
        `${base}/sandbox/stripe/v1/payment_intents/${intent['payment_provider_transaction_ref']!}/confirm`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            client_secret: intent['payment_temporary_token']!,
            payment_method: 'pm_card_visa',
          }),
        },
      );
      const { reference } = await make.policy(t.app, acme, {
        payment: {
          provider_payment_reference: intent['payment_provider_transaction_ref']!,
          provider_customer_reference: intent['payment_provider_customer_ref']!,
          payment_provider: 'stripe',
          payment_amount: 95.5,
          payment_method_id: undefined,
        },
      });
      if (card !== 'pm_card_visa') {
        await t.app.inject({
          method: 'POST',
          url: '/payments',
          headers: acme.sandbox,
          payload: {
            type: 'ADD_NEW_PAYMENT_METHOD',
            product_reference: 'ppm',
            policy_reference: reference,
            payment_method_id: card,
          },
        });
      }
      return reference;
    };
    const good = await pay('pm_card_visa');
    await make.journey(t.app, acme, good, '2025-06-10T08:00:00Z');
    const paid = (await statement(good, '2025-06-30T22:59:59Z')).json<Statement>();
    assert.deepEqual(paid.payment, { payment_amount: paid.billed_premium });

    const bad = await pay('pm_card_chargeDeclinedInsufficientFunds');
    const declined = await statement(bad, '2025-06-30T22:59:59Z');
    assert.equal(declined.statusCode, 201);
    const body = declined.json<Statement>();
    assert.equal(body.payment?.payment_amount, null);
    assert.match(body.payment.error_message ?? '', /insufficient|declined/i);
  });
});
