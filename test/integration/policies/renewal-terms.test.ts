import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { encodePolyline } from '../../../src/platform/geo/index.ts';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { examplePolicyInput, type PolicyOverrides } from '../../support/policy-arbitraries.ts';

/**
 * The terms of a policy over time: a renewal written before its term starts waits beside the term in
 * force, changes made meanwhile act on the right term, and a term that has ended is never active.
 * The example policy's term is 2025-06-01 to 2026-05-31 (London); "now" is mid-September 2025.
 */
type Company = Awaited<ReturnType<typeof createCompany>>;
interface Version {
  version_type: string;
  policy_version_reference: string;
  start_date: string;
  end_date: string;
  effective_date: string;
  superseded: boolean;
}
interface Renewal {
  start_date: number;
  end_date: number;
  policy_year?: number;
  policy_version_reference: string | null;
  automatic: boolean;
  pricing: { usage_rate: number };
}
interface PolicyBody {
  policy_reference: string;
  policy_version_reference: string;
  status: string;
  policy: { start_date: number; end_date: number; policy_year?: number };
  vehicle: { reg: string };
  pricing: { usage_rate: number };
  renewal?: Renewal;
  versions: Version[];
}
interface Problem {
  code: string;
  errors?: Array<{ path: string; message: string }>;
}

const NOW = '2025-09-15T12:00:00Z';
const clock = fixedClock(NOW);
const unix = (iso: string): number => Date.parse(iso) / 1000;
const TERM_END = examplePolicyInput().policy.end_date;
const NEXT_START = TERM_END + 1;
/** Green Park to Aldwych. */
const CROSS_LONDON = [51.501, -0.1416, 51.5115, -0.116];

let t: TestApp;
let acme: Company;

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme');
});
after(async () => {
  await t.close();
});

/** The example's term, not renewed by itself unless `overrides` (merged shallowly) say so. */
const terms = (overrides: PolicyOverrides = {}): PolicyOverrides => ({
  policy: { auto_renew: false },
  ...overrides,
});
const create = async (overrides: PolicyOverrides = {}) =>
  (await make.policy<PolicyBody>(t.app, acme, terms(overrides))).body;
async function read(reference: string): Promise<PolicyBody> {
  const r = await t.app.inject({ url: `/policys/${reference}`, headers: acme.sandbox });
  assert.equal(r.statusCode, 200, r.body);
  return r.json<PolicyBody>();
}
async function renew(reference: string, usageRate: number, expected = 201): Promise<PolicyBody> {
  const r = await t.app.inject({
    method: 'POST',
    url: `/policys/${reference}/renewals`,
    headers: acme.sandbox,
    payload: { pricing: { ...examplePolicyInput().pricing, usage_rate: usageRate } },
  });
  assert.equal(r.statusCode, expected, r.body);
  return r.json<PolicyBody>();
}
/** A 15-minute drive across central London starting at `startIso`, rated by the policy. */
const drive = (reference: string, startIso: string) =>
  make.journey(t.app, acme, reference, startIso, { points: CROSS_LONDON, durationSeconds: 900 });
async function during<T>(iso: string, work: () => Promise<T>): Promise<T> {
  clock.set(iso);
  try {
    return await work();
  } finally {
    clock.set(NOW);
  }
}
const live = (versions: Version[]) => versions.filter((v) => !v.superseded);

describe('a renewal written early', () => {
  test('leaves the current term in force, shown beside it as `renewal`, until its start', async () => {
    const created = await create();
    const renewed = await renew(created.policy_reference, 0.07);
    const rn = renewed.versions.at(-1);
    assert.equal(rn?.version_type, 'rn');
    for (const body of [renewed, await read(created.policy_reference)]) {
      assert.equal(body.status, 'active');
      assert.equal(body.policy.start_date, created.policy.start_date);
      assert.equal(body.policy.end_date, TERM_END);
      assert.equal(body.pricing.usage_rate, created.pricing.usage_rate);
      assert.equal(body.policy_version_reference, created.policy_version_reference);
      assert.equal(body.renewal?.start_date, NEXT_START);
      assert.equal(body.renewal.end_date, unix('2027-05-31T22:59:59Z'));
      assert.equal(body.renewal.policy_year, (created.policy.policy_year ?? 1) + 1);
      assert.equal(body.renewal.policy_version_reference, rn.policy_version_reference);
      assert.equal(body.renewal.automatic, false);
      assert.equal(body.renewal.pricing.usage_rate, 0.07);
    }
    // Journeys are rated by the term in force at their start.
    assert.equal((await drive(created.policy_reference, '2025-09-14T08:00:00Z')).usage_rate, 0.045);
    await during('2026-06-02T12:00:00Z', async () => {
      // The view read (and kept) before the start gives way to the new term at its start.
      const later = await read(created.policy_reference);
      assert.equal(later.status, 'active');
      assert.equal(later.policy.start_date, NEXT_START);
      assert.equal(later.pricing.usage_rate, 0.07);
      assert.equal(later.renewal, undefined);
      assert.equal((await drive(created.policy_reference, '2026-06-01T08:00:00Z')).usage_rate, 0.07);
      assert.equal((await drive(created.policy_reference, '2026-05-31T08:00:00Z')).usage_rate, 0.045);
    });
  });

  test('terms stored for automatic renewal show as `renewal` too (202)', async () => {
    const created = await create({ policy: { auto_renew: true } });
    const scheduled = await renew(created.policy_reference, 0.05, 202);
    for (const body of [scheduled, await read(created.policy_reference)]) {
      assert.deepEqual(
        body.versions.map((v) => v.version_type),
        ['nb'],
      );
      assert.equal(body.renewal?.automatic, true);
      assert.equal(body.renewal.policy_version_reference, null);
      assert.equal(body.renewal.start_date, NEXT_START);
      assert.equal(body.renewal.pricing.usage_rate, 0.05);
    }
  });

  test('a second renewal replaces the first (kept in the history, superseded); they never stack', async () => {
    const created = await create();
    const first = (await renew(created.policy_reference, 0.06)).versions.at(-1);
    const second = await renew(created.policy_reference, 0.08);
    const renewals = second.versions.filter((v) => v.version_type === 'rn');
    assert.equal(renewals.length, 2);
    assert.deepEqual(
      renewals.map((v) => [v.policy_version_reference === first?.policy_version_reference, v.superseded]),
      [
        [true, true],
        [false, false],
      ],
    );
    assert.equal(
      renewals[1]?.start_date,
      new Date(NEXT_START * 1000).toISOString(),
      'same term, not a year on',
    );
    assert.equal(second.renewal?.policy_version_reference, renewals[1].policy_version_reference);
    assert.equal(second.renewal.pricing.usage_rate, 0.08);
    await during('2026-06-02T12:00:00Z', async () => {
      assert.equal((await drive(created.policy_reference, '2026-06-01T08:00:00Z')).usage_rate, 0.08);
    });
  });
});

describe('changes after an early renewal', () => {
  test('an adjustment of the current term keeps the renewal, and reaches no further than its term', async () => {
    const made = await make.policy<PolicyBody>(t.app, acme, terms());
    const created = made.body;
    const renewed = await renew(created.policy_reference, 0.07);
    const { body } = await make.adjustment<PolicyBody>(t.app, acme, made, {
      vehicle: { reg: 'LB24 NEW' },
      pricing: { usage_rate: 0.05 },
    });
    assert.equal(body.vehicle.reg, 'LB24 NEW');
    assert.equal(body.policy.end_date, TERM_END);
    assert.deepEqual(body.renewal, renewed.renewal, 'the stored renewal is kept');
    assert.deepEqual(
      live(body.versions).map((v) => v.version_type),
      ['nb', 'rn', 'mta'],
    );
    await during('2025-10-01T12:00:00Z', async () => {
      assert.equal((await drive(created.policy_reference, '2025-09-30T08:00:00Z')).usage_rate, 0.05);
    });
    await during('2026-06-02T12:00:00Z', async () => {
      const later = await read(created.policy_reference);
      assert.equal(later.policy.start_date, NEXT_START);
      assert.equal(later.pricing.usage_rate, 0.07);
      assert.equal((await drive(created.policy_reference, '2026-06-01T08:00:00Z')).usage_rate, 0.07);
    });
    // The daily job sees the renewal's end, not the adjusted term's: nothing lapses at TERM_END.
    const ended = await t.container.services.policies.endTerms(new Date((TERM_END + 3600) * 1000));
    assert.equal((await read(created.policy_reference)).status, 'active', JSON.stringify(ended));
  });

  test('an adjustment naming the renewal’s start adjusts the renewal', async () => {
    const made = await make.policy<PolicyBody>(t.app, acme, terms());
    const created = made.body;
    const renewed = await renew(created.policy_reference, 0.07);
    const { body } = await make.adjustment<PolicyBody>(t.app, acme, made, {
      policy: {
        start_date: renewed.renewal?.start_date,
        end_date: renewed.renewal?.end_date,
        policy_year: 2,
      },
      pricing: { usage_rate: 0.065 },
    });
    assert.equal(body.pricing.usage_rate, created.pricing.usage_rate, 'the current term is untouched');
    assert.equal(body.renewal?.pricing.usage_rate, 0.065);
    assert.equal(body.renewal.policy_version_reference, body.versions.at(-1)?.policy_version_reference);
  });

  test('a cancellation takes effect when it says and ends the stored renewal with it', async () => {
    const created = await create();
    await renew(created.policy_reference, 0.07);
    const at = unix('2025-09-20T00:00:00Z');
    const r = await t.app.inject({
      method: 'DELETE',
      url: `/policys/${created.policy_reference}`,
      headers: acme.sandbox,
      payload: { effective_date: at, reason: 'sold the car' },
    });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json<PolicyBody>();
    assert.equal(body.status, 'cancelled');
    assert.equal(body.renewal, undefined);
    const cn = body.versions.at(-1);
    assert.equal(cn?.version_type, 'cn');
    assert.equal(cn.effective_date, new Date(at * 1000).toISOString(), 'not at the renewal’s start');
    assert.equal(cn.end_date, new Date(TERM_END * 1000).toISOString(), 'on the current term');
    assert.deepEqual(
      body.versions.filter((v) => v.version_type === 'rn').map((v) => v.superseded),
      [true],
    );
    assert.deepEqual(await read(created.policy_reference), body);
    const journey = await during('2025-09-22T12:00:00Z', () =>
      t.app.inject({
        method: 'POST',
        url: '/journeys',
        headers: acme.sandbox,
        payload: {
          policy_reference: created.policy_reference,
          route: encodePolyline(CROSS_LONDON, 5),
          start_time: unix('2025-09-21T08:00:00Z'),
          end_time: unix('2025-09-21T08:15:00Z'),
        },
      }),
    );
    assert.equal(journey.json<Problem>().code, 'POLICY_NOT_ACTIVE');
  });
});

describe('a term that has ended', () => {
  const ended = () =>
    terms({
      policy: {
        start_date: unix('2024-06-01T00:00:00+01:00'),
        end_date: unix('2025-05-31T23:59:59+01:00'),
        inception_date: unix('2024-06-01T00:00:00+01:00'),
      },
    });

  test('is refused on creation (422 POLICY_TERM_ENDED) unless brought over with backfill', async () => {
    const refused = await t.app.inject({
      method: 'POST',
      url: '/policys',
      headers: acme.sandbox,
      payload: examplePolicyInput(ended()),
    });
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal(refused.json<Problem>().code, 'POLICY_TERM_ENDED');
    assert.equal(refused.json<Problem>().errors?.[0]?.path, '/body/policy/end_date');

    const backfilled = await create({ ...ended(), backfill: true });
    assert.equal(backfilled.status, 'lapsed');
    assert.deepEqual(
      backfilled.versions.map((v) => [v.version_type, v.effective_date]),
      [
        ['nb', '2024-05-31T23:00:00.000Z'],
        ['ls', '2025-05-31T22:59:59.000Z'],
      ],
    );
    assert.deepEqual(await read(backfilled.policy_reference), backfilled);
    // Billed elsewhere: nothing is owed here for the term brought over.
    const statement = await t.app.inject({
      method: 'POST',
      url: '/statements',
      headers: acme.sandbox,
      payload: { policy_reference: backfilled.policy_reference },
    });
    assert.equal(statement.statusCode, 409, statement.body);
  });

  test('a policy brought over is renewed from its end: the lapse is superseded and cover continues', async () => {
    const backfilled = await create({ ...ended(), backfill: true });
    const renewed = await renew(backfilled.policy_reference, 0.05);
    assert.equal(renewed.status, 'active');
    assert.equal(renewed.policy.start_date, unix('2025-06-01T00:00:00+01:00'));
    assert.deepEqual(
      renewed.versions.map((v) => [v.version_type, v.superseded]),
      [
        ['nb', false],
        ['ls', true],
        ['rn', false],
      ],
    );
    assert.equal((await drive(backfilled.policy_reference, '2025-09-14T08:00:00Z')).usage_rate, 0.05);
    const gap = await t.app.inject({
      method: 'POST',
      url: `/policys/${(await create({ ...ended(), backfill: true })).policy_reference}/renewals`,
      headers: acme.sandbox,
      payload: {
        policy: { start_date: unix('2025-07-01T00:00:00Z') },
        pricing: examplePolicyInput().pricing,
      },
    });
    assert.equal(gap.statusCode, 409, gap.body);
  });

  test('backfill applies to new policies only', async () => {
    const { input: base, body: created } = await make.policy<PolicyBody>(t.app, acme, terms());
    const r = await t.app.inject({
      method: 'POST',
      url: '/policys',
      headers: acme.sandbox,
      payload: {
        ...base,
        policy: { ...base.policy, policy_reference: created.policy_reference },
        backfill: true,
      },
    });
    assert.equal(r.statusCode, 422, r.body);
    assert.equal(r.json<Problem>().errors?.[0]?.path, '/body/backfill');
  });

  test('reads as lapsed once its end has passed, before the daily job writes the lapse', async () => {
    const plain = await create();
    const renewing = await create({ policy: { auto_renew: true } });
    await renew(renewing.policy_reference, 0.05, 202);
    await during('2026-06-01T06:00:00Z', async () => {
      assert.equal((await read(plain.policy_reference)).status, 'lapsed');
      assert.equal((await read(renewing.policy_reference)).status, 'active', 'renews at the next run');
    });
  });
});
