import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { verifyPassword } from '../../../src/modules/accounts/index.ts';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { onPostgres } from '../../support/database.ts';
import { make } from '../../support/factories.ts';
import { examplePolicyInput, validPolicyInput } from '../../support/policy-arbitraries.ts';
import { startSmtpServer } from '../../support/smtp.ts';

type Company = Awaited<ReturnType<typeof createCompany>>;
interface PolicyBody {
  policy_reference: string;
  policy_version_reference: string;
  user_reference: string;
  status: string;
  policy: Record<string, unknown> & { policy_reference: string; policy_year?: number };
  versions: Array<Record<string, unknown> & { version_type: string; policy_version_reference: string }>;
  [key: string]: unknown;
}

// 2025-06-01T12:00:00Z: inside the example policy's term.
const clock = fixedClock('2025-06-01T12:00:00Z');
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let t: TestApp;
let acme: Company;
let other: Company;

before(async () => {
  smtp = await startSmtpServer();
  t = await createTestApp({ env: { SMTP_URL: smtp.url }, overrides: { clock }, startJobs: true });
  acme = await createCompany(t.app, 'Acme');
  other = await createCompany(t.app, 'Other');
});
after(async () => {
  await t.close();
  await smtp.close();
});

let emailCounter = 0;
const uniqueEmail = () => `driver${++emailCounter}.${Date.now()}@example.com`;

/** `POST /policys` with any body (the request under test); the answer as it is. */
async function postPolicy(headers: Record<string, string>, body: unknown) {
  return t.app.inject({ method: 'POST', url: '/policys', headers, payload: body as object });
}

describe('POST /policys (create)', () => {
  test('201 with the stored object, references, one nb version, the account, and the welcome email over SMTP', async () => {
    const email = uniqueEmail();
    const input = examplePolicyInput({ proposer: { email } });
    const r = await postPolicy(acme.sandbox, input);
    assert.equal(r.statusCode, 201, r.body);
    const body = r.json<PolicyBody>();
    assert.match(body.policy_reference, /^[a-z]+-[a-z]+-[a-z]+$/);
    assert.equal(body.policy.policy_reference, body.policy_reference);
    assert.match(body.policy_version_reference, /^[0-9a-f-]{36}$/);
    assert.equal(body.versions.length, 1);
    assert.equal(body.versions[0]!.version_type, 'nb');
    assert.equal(body.versions[0]!.policy_version_reference, body.policy_version_reference);
    assert.equal(body.versions[0]!.email, email);
    assert.equal(body.versions[0]!.start_date, new Date(input.policy.start_date * 1000).toISOString());
    assert.match(body.user_reference, /^usr_/);
    assert.equal(body.status, 'active');
    assert.deepEqual(body['vehicle'], input.vehicle);

    const [message] = await smtp.waitFor(email);
    const username = /Username: (\S+)/.exec(message!.text)?.[1];
    const password = /Temporary password: (\S+)/.exec(message!.text)?.[1];
    assert.ok(
      username !== undefined && password !== undefined,
      'welcome email has the username and temporary password lines',
    );
    assert.match(message!.raw, /text\/html/, 'an HTML part too');
    const user = await t.container.database.db
      .selectFrom('users')
      .selectAll()
      .where('user_reference', '=', body.user_reference)
      .executeTakeFirstOrThrow();
    assert.equal(user.username, username);
    assert.ok(
      await verifyPassword(user.password_hash, password),
      'the stored argon2id hash accepts the emailed password',
    );
    assert.match(user.password_hash, /^\$argon2id\$/);
    assert.equal(user.password_is_temporary, true);
    assert.equal(
      user.temporary_password_expires_at?.toISOString(),
      new Date(clock.now().getTime() + 30 * 86_400_000).toISOString(),
    );
    // NOTE: the SMTP server has the message before the worker records it as sent (a commit after the
    // delivery), so the outbox is read once that record is made, within a bounded wait.
    let sent = await t.container.services.notifications.emailsTo(email);
    for (let tries = 0; tries < 100 && sent.some((e) => e.status === 'pending'); tries++) {
      await sleep(50);
      sent = await t.container.services.notifications.emailsTo(email);
    }
    // A sent email's body (with the password) is not kept.
    assert.deepEqual(
      sent.map((e) => [e.status, e.text]),
      [['sent', null]],
    );
  });

  test('a second policy for the same email joins the account and sends no new password', async () => {
    const email = uniqueEmail();
    const first = (
      await postPolicy(acme.sandbox, examplePolicyInput({ proposer: { email } }))
    ).json<PolicyBody>();
    const second = await postPolicy(
      acme.sandbox,
      examplePolicyInput({ proposer: { email: email.toUpperCase() }, vehicle: { reg: 'AB12CDE' } }),
    );
    assert.equal(second.statusCode, 201);
    assert.equal(second.json<PolicyBody>().user_reference, first.user_reference);
    assert.notEqual(second.json<PolicyBody>().policy_reference, first.policy_reference);
    // Emails go out from parallel workers, so they may arrive in either order.
    const messages = await smtp.waitFor(email, 2);
    const withPassword = messages.filter((m) => /Temporary password/.test(m.text));
    assert.equal(withPassword.length, 1, 'only the first policy sends a password');
    assert.ok(
      messages.some(
        (m) => /added to your existing account/.test(m.text) && !/Temporary password/.test(m.text),
      ),
    );
    // Another company's policy for the same email is another account.
    const elsewhere = (
      await postPolicy(other.sandbox, examplePolicyInput({ proposer: { email } }))
    ).json<PolicyBody>();
    assert.notEqual(elsewhere.user_reference, first.user_reference);
  });

  test('an invalid body → 422 listing every failing path', async () => {
    const input = examplePolicyInput({
      proposer: { email: 'not-an-email', dob: '1990-02-30' },
      policy: { billing_day_date: 32 },
    }) as Record<string, unknown>;
    input['colour'] = 'red';
    const r = await postPolicy(acme.sandbox, input);
    assert.equal(r.statusCode, 422);
    const paths = r.json<{ errors: Array<{ path: string }> }>().errors.map((e) => e.path);
    for (const path of ['/body/proposer/email', '/body/policy/billing_day_date', '/body/colour'])
      assert.ok(paths.includes(path), `${path} in ${paths.join(', ')}`);
    const cross = await postPolicy(acme.sandbox, examplePolicyInput({ proposer: { dob: '1990-02-30' } }));
    assert.equal(cross.statusCode, 422, 'a day that does not exist');
    assert.ok(
      cross.json<{ errors: Array<{ path: string }> }>().errors.some((e) => e.path === '/body/proposer/dob'),
    );
  });

  test('client credentials are required', async () => {
    assert.equal((await postPolicy({}, examplePolicyInput())).statusCode, 401);
    assert.equal(
      (await postPolicy({ ...acme.sandbox, client_secret: 'wrong' }, examplePolicyInput())).statusCode,
      401,
    );
  });

  test('property: any valid policy object round-trips through POST and GET', async () => {
    await fc.assert(
      // Payment blocks are the payments tests' business: here they would name made-up processor payments.
      fc.asyncProperty(
        // A term that ended before the test's present is brought over as history (`backfill`).
        validPolicyInput().map(({ payment: _payment, ...rest }) =>
          rest.policy.end_date * 1000 <= clock.now().getTime() ? { ...rest, backfill: true } : rest,
        ),
        async (input) => {
          const created = await postPolicy(acme.sandbox, input);
          assert.equal(created.statusCode, 201, created.body);
          const reference = created.json<PolicyBody>().policy_reference;
          const read = await t.app.inject({ url: `/policys/${reference}`, headers: acme.sandbox });
          assert.equal(read.statusCode, 200);
          const body = read.json<PolicyBody>();
          assert.deepEqual(body, created.json());
          assert.deepEqual(body['proposer'] !== undefined, true);
          assert.equal((body['pricing'] as { usage_rate: number }).usage_rate, input.pricing.usage_rate);
          assert.equal((body['vehicle'] as { reg: string }).reg, input.vehicle.reg);
          assert.equal(body.policy['start_date'], input.policy.start_date);
        },
      ),
      { numRuns: 12 },
    );
  });
});

describe('GET /policys/:policy_reference', () => {
  test('another company or environment gets 404', async () => {
    const created = (await make.policy<PolicyBody>(t.app, acme)).body;
    const url = `/policys/${created.policy_reference}`;
    assert.equal((await t.app.inject({ url, headers: acme.sandbox })).statusCode, 200);
    assert.equal((await t.app.inject({ url, headers: other.sandbox })).statusCode, 404);
    assert.equal((await t.app.inject({ url, headers: acme.production })).statusCode, 404);
    assert.equal(
      (await t.app.inject({ url: '/policys/no-such-policy', headers: acme.sandbox })).statusCode,
      404,
    );
  });
});

describe('adjustment, cancellation, renewal', () => {
  test('an adjustment writes an mta version; earlier snapshots stay as they were', async () => {
    const created = (await make.policy<PolicyBody>(t.app, acme)).body;
    const adjustment = examplePolicyInput({
      policy: { policy_reference: created.policy_reference },
      vehicle: { reg: 'XY99ZZZ' },
      pricing: { usage_rate: 0.07 },
    });
    const r = await postPolicy(acme.sandbox, {
      ...adjustment,
      effective_date: Math.floor(clock.now().getTime() / 1000),
    });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json<PolicyBody>();
    assert.deepEqual(
      body.versions.map((v) => v.version_type),
      ['nb', 'mta'],
    );
    assert.equal(
      body.versions[0]!.vehicle_reg,
      created.versions[0]!.vehicle_reg,
      'the nb snapshot is unchanged',
    );
    assert.equal(body.versions[1]!.vehicle_reg, 'XY99ZZZ');
    assert.equal(body.versions[1]!.usage_rate, 0.07);
    assert.equal(body.versions[1]!.effective_date, clock.now().toISOString());
    assert.equal(body.policy_version_reference, body.versions[1]!.policy_version_reference);
    assert.equal(body.user_reference, created.user_reference);
    const missing = await postPolicy(
      acme.sandbox,
      examplePolicyInput({ policy: { policy_reference: 'no-such-policy' } }),
    );
    assert.equal(missing.statusCode, 404);
    const otherTenant = await postPolicy(other.sandbox, adjustment);
    assert.equal(otherTenant.statusCode, 404);
  });

  test('cancellation (both forms) writes cn; a cancelled policy cannot be adjusted (409)', async () => {
    const a = (await make.policy<PolicyBody>(t.app, acme)).body;
    const r = await t.app.inject({
      method: 'DELETE',
      url: `/policys/${a.policy_reference}`,
      headers: acme.sandbox,
      payload: { reason: 'sold the car' },
    });
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.json<PolicyBody>().status, 'cancelled');
    assert.deepEqual(
      r.json<PolicyBody>().versions.map((v) => v.version_type),
      ['nb', 'cn'],
    );
    const adjust = await postPolicy(
      acme.sandbox,
      examplePolicyInput({ policy: { policy_reference: a.policy_reference } }),
    );
    assert.equal(adjust.statusCode, 409);
    assert.equal(adjust.json<{ code: string }>().code, 'POLICY_NOT_ACTIVE');
    assert.equal(
      (await t.app.inject({ method: 'DELETE', url: `/policys/${a.policy_reference}`, headers: acme.sandbox }))
        .statusCode,
      409,
    );

    const b = (await make.policy<PolicyBody>(t.app, acme)).body;
    const byBody = await t.app.inject({
      method: 'DELETE',
      url: '/policys',
      headers: acme.sandbox,
      payload: { policy_reference: b.policy_reference },
    });
    assert.equal(byBody.statusCode, 200);
    assert.equal(byBody.json<PolicyBody>().versions.at(-1)?.version_type, 'cn');
    assert.equal(
      (
        await t.app.inject({
          method: 'DELETE',
          url: '/policys',
          headers: other.sandbox,
          payload: { policy_reference: b.policy_reference },
        })
      ).statusCode,
      404,
    );
    assert.equal(
      (
        await t.app.inject({
          method: 'DELETE',
          url: '/policys',
          headers: acme.sandbox,
          payload: { reference: 'x' },
        })
      ).statusCode,
      422,
    );

    const events = await t.container.database.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('type', '=', 'policy.cancelled')
      .execute();
    assert.ok(
      events.some((e) => (e.data as { policy_reference: string }).policy_reference === a.policy_reference),
    );
  });

  test('renewal writes rn with policy_year + 1 and the new term', async () => {
    const { input, body: created } = await make.policy<PolicyBody>(t.app, acme, {
      policy: { auto_renew: false, policy_year: 1 },
    });
    const r = await t.app.inject({
      method: 'POST',
      url: `/policys/${created.policy_reference}/renewals`,
      headers: acme.sandbox,
      payload: { pricing: { ...input.pricing, usage_rate: 0.05 } },
    });
    assert.equal(r.statusCode, 201, r.body);
    const body = r.json<PolicyBody & { renewal?: Record<string, unknown> }>();
    const rn = body.versions.at(-1);
    assert.equal(rn?.version_type, 'rn');
    // Until the new term starts the policy reads as the current term, the renewal beside it.
    assert.equal(body.status, 'active');
    assert.equal(body.policy.policy_year, 1);
    assert.equal(body.policy['start_date'], input.policy.start_date);
    assert.notEqual(body.policy_version_reference, rn.policy_version_reference);
    // Continuous: the new term starts 1 s after the last ends, and ends on the same London anniversary.
    assert.deepEqual(body.renewal, {
      start_date: input.policy.end_date + 1,
      end_date: Date.parse('2027-05-31T22:59:59Z') / 1000,
      policy_year: 2,
      policy_version_reference: rn.policy_version_reference,
      automatic: false,
      pricing: { ...(body['pricing'] as object), usage_rate: 0.05 },
    });
    // From the new term's start, the renewal is the policy.
    clock.set(new Date((input.policy.end_date + 1) * 1000));
    try {
      const later = (
        await t.app.inject({ url: `/policys/${created.policy_reference}`, headers: acme.sandbox })
      ).json<PolicyBody & { renewal?: unknown }>();
      assert.equal(later.status, 'active');
      assert.equal(later.policy.policy_year, 2);
      assert.equal(later.policy['start_date'], input.policy.end_date + 1);
      assert.equal((later['pricing'] as { usage_rate: number }).usage_rate, 0.05);
      assert.equal(later.renewal, undefined);
    } finally {
      clock.set('2025-06-01T12:00:00Z');
    }
    assert.equal(
      (
        await t.app.inject({
          method: 'POST',
          url: `/policys/${created.policy_reference}/renewals`,
          headers: other.sandbox,
          payload: { pricing: input.pricing },
        })
      ).statusCode,
      404,
    );
    assert.equal(
      (
        await t.app.inject({
          method: 'POST',
          url: `/policys/${created.policy_reference}/renewals`,
          headers: acme.sandbox,
          payload: {},
        })
      ).statusCode,
      422,
    );
  });

  test('the daily job renews auto-renewing policies with terms, lapses the rest, and a re-run writes nothing', async () => {
    const base = examplePolicyInput();
    const { reference: auto } = await make.policy(t.app, acme, { policy: { auto_renew: true } });
    const { reference: plain } = await make.policy(t.app, acme, { policy: { auto_renew: false } });
    const scheduled = await t.app.inject({
      method: 'POST',
      url: `/policys/${auto}/renewals`,
      headers: acme.sandbox,
      payload: { pricing: base.pricing },
    });
    assert.equal(scheduled.statusCode, 202, scheduled.body);
    assert.equal(scheduled.json<PolicyBody>().versions.length, 1, 'nothing written yet');

    const afterEnd = new Date((base.policy.end_date + 3600) * 1000);
    const first = await t.container.services.policies.endTerms(afterEnd);
    assert.ok(first.renewed >= 1 && first.lapsed >= 1);
    const again = await t.container.services.policies.endTerms(afterEnd);
    assert.deepEqual(again, { renewed: 0, lapsed: 0 });

    const autoNow = (
      await t.app.inject({ url: `/policys/${auto}`, headers: acme.sandbox })
    ).json<PolicyBody>();
    assert.deepEqual(
      autoNow.versions.map((v) => v.version_type),
      ['nb', 'rn'],
    );
    const plainNow = (
      await t.app.inject({ url: `/policys/${plain}`, headers: acme.sandbox })
    ).json<PolicyBody>();
    assert.deepEqual(
      plainNow.versions.map((v) => v.version_type),
      ['nb', 'ls'],
    );
    assert.equal(plainNow.status, 'lapsed');
  });

  test(
    'concurrent adjustments give two versions and lose neither',
    { skip: !onPostgres && 'row locks are exercised on PostgreSQL' },
    async () => {
      const created = (await make.policy<PolicyBody>(t.app, acme)).body;
      const adjust = (reg: string) =>
        postPolicy(
          acme.sandbox,
          examplePolicyInput({ policy: { policy_reference: created.policy_reference }, vehicle: { reg } }),
        );
      const results = await Promise.all([adjust('AA11AAA'), adjust('BB22BBB'), adjust('CC33CCC')]);
      assert.deepEqual(
        results.map((r) => r.statusCode),
        [200, 200, 200],
      );
      const final = (
        await t.app.inject({ url: `/policys/${created.policy_reference}`, headers: acme.sandbox })
      ).json<PolicyBody>();
      assert.deepEqual(
        final.versions.map((v) => v.version_type),
        ['nb', 'mta', 'mta', 'mta'],
      );
      assert.deepEqual(
        new Set(final.versions.slice(1).map((v) => v['vehicle_reg'])),
        new Set(['AA11AAA', 'BB22BBB', 'CC33CCC']),
      );
    },
  );
});

describe('lifecycle emails', () => {
  test('the policyholder is emailed when their policy is adjusted, cancelled, renewed and when it lapses', async () => {
    /** The email to `to` with this subject, however many others arrive first. */
    const emailAbout = async (to: string, subject: string) => {
      for (let count = 1; ; count++) {
        const found = (await smtp.waitFor(to, count)).find((m) => m.text.includes(`Subject: ${subject}`));
        if (found !== undefined) return found;
      }
    };

    const changed = uniqueEmail();
    const created = await make.policy(t.app, acme, { proposer: { email: changed } });
    await make.adjustment(t.app, acme, created, { vehicle: { colour: 'Green' } });
    assert.match((await emailAbout(changed, 'Your policy has been changed')).text, /Effective from/);
    const cancelled = await t.app.inject({
      method: 'DELETE',
      url: `/policys/${created.reference}`,
      headers: acme.sandbox,
      payload: { reason: 'sold the car' },
    });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    const cancellation = await emailAbout(changed, 'Your policy has been cancelled');
    assert.match(cancellation.text, /Cancelled from: 2025-06-01/);

    const renewing = uniqueEmail();
    const toRenew = await make.policy(t.app, acme, {
      proposer: { email: renewing },
      policy: { auto_renew: false },
    });
    const renewed = await t.app.inject({
      method: 'POST',
      url: `/policys/${toRenew.reference}/renewals`,
      headers: acme.sandbox,
      payload: { pricing: toRenew.input.pricing },
    });
    assert.equal(renewed.statusCode, 201, renewed.body);
    const renewal = await emailAbout(renewing, 'Your policy has been renewed');
    assert.match(renewal.text, /New term: 2026-06-01 to 2027-05-31/);

    const lapsing = uniqueEmail();
    await make.policy(t.app, acme, { proposer: { email: lapsing }, policy: { auto_renew: false } });
    await t.container.services.policies.endTerms(new Date('2026-06-01T12:00:00Z'));
    const lapse = await emailAbout(lapsing, 'Your policy has ended');
    assert.match(lapse.text, /Ended on: 2026-05-31/);
  });
});

describe('policy.created_at', () => {
  test('what the client sent comes back as sent; when absent, the creation time', async () => {
    const sent = examplePolicyInput({
      proposer: { email: uniqueEmail() },
      policy: { created_at: 1_746_000_000 },
    });
    const created = await postPolicy(acme.sandbox, sent);
    assert.equal(created.statusCode, 201, created.body);
    const reference = created.json<PolicyBody>().policy_reference;
    assert.equal(created.json<PolicyBody>().policy['created_at'], 1_746_000_000);
    const read = await t.app.inject({ url: `/policys/${reference}`, headers: acme.sandbox });
    assert.equal(read.json<PolicyBody>().policy['created_at'], 1_746_000_000);

    const absent = examplePolicyInput({ proposer: { email: uniqueEmail() } });
    delete absent.policy.created_at;
    const filled = (await postPolicy(acme.sandbox, absent)).json<PolicyBody>();
    assert.equal(filled.policy['created_at'], Math.floor(clock.now().getTime() / 1000));
  });
});

describe('renewal with the whole policy object', () => {
  test('new vehicle, address, pricing and dates replace the current ones; the rest carries over', async () => {
    const email = uniqueEmail();
    const { input, body: created } = await make.policy<PolicyBody>(t.app, acme, {
      proposer: { email },
      policy: { auto_renew: false },
    });
    const start = input.policy.end_date + 1;
    const end = start + 365 * 86_400 - 1;
    const { policy_year: _year, ...currentPolicy } = input.policy;
    const renewal = {
      policy: {
        ...currentPolicy,
        policy_reference: created.policy_reference,
        start_date: start,
        end_date: end,
        address: { ...input.policy.address, line_1: '2 New Street', postcode: 'sw1a 2aa' },
      },
      vehicle: { ...input.vehicle, reg: 'LB24 XYZ', make: 'Kia', model: 'Niro' },
      pricing: { ...input.pricing, usage_rate: 0.05, upfront_premium: 120 },
    };
    const r = await t.app.inject({
      method: 'POST',
      url: `/policys/${created.policy_reference}/renewals`,
      headers: acme.sandbox,
      payload: renewal,
    });
    assert.equal(r.statusCode, 201, r.body);
    const body = r.json<PolicyBody>();
    assert.equal(body.versions.at(-1)?.version_type, 'rn');
    clock.set(new Date(start * 1000));
    const read = (
      await t.app.inject({ url: `/policys/${created.policy_reference}`, headers: acme.sandbox })
    ).json<
      PolicyBody & { vehicle: { reg: string }; pricing: { usage_rate: number }; proposer: { email: string } }
    >();
    assert.equal(read.policy['start_date'], start);
    assert.equal(read.policy['end_date'], end);
    assert.equal(read.policy.policy_year, (input.policy.policy_year ?? 1) + 1);
    assert.equal(
      (read.policy['address'] as { postcode: string }).postcode,
      'SW1A 2AA',
      'normalised as on creation',
    );
    assert.equal(read.vehicle.reg, 'LB24 XYZ');
    assert.equal(read.pricing.usage_rate, 0.05);
    assert.equal(read.proposer.email, email, 'blocks not sent carry over');
    clock.set('2025-06-01T12:00:00Z');

    const wrong = await t.app.inject({
      method: 'POST',
      url: `/policys/${created.policy_reference}/renewals`,
      headers: acme.sandbox,
      payload: { policy: { policy_reference: 'someone-else-entirely' }, pricing: input.pricing },
    });
    assert.equal(wrong.statusCode, 422, wrong.body);
    assert.equal(
      wrong.json<{ errors: Array<{ path: string }> }>().errors[0]?.path,
      '/body/policy/policy_reference',
    );
    const invalidBlocks = await t.app.inject({
      method: 'POST',
      url: `/policys/${created.policy_reference}/renewals`,
      headers: acme.sandbox,
      payload: {
        vehicle: { ...input.vehicle, overnight_postcode: 'NOT A POSTCODE' },
        pricing: input.pricing,
      },
    });
    assert.equal(invalidBlocks.statusCode, 422, invalidBlocks.body);
  });
});
