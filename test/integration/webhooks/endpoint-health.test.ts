import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCompany, createTestApp, type TestApp } from '../../support/app.ts';
import { onPostgres } from '../../support/database.ts';
import { startReceiver } from './receiver.ts';

/**
 * An endpoint's attempts settle side by side: recording an outcome that leaves the endpoint's failing
 * streak as it was takes no lock on the endpoint's row, so its attempts in flight
 * (WEBHOOKS_ENDPOINT_CONCURRENCY) do not queue one behind another when they report back. Shown by
 * holding that row's lock from another connection while an attempt settles; PGlite has one connection
 * and serialises every transaction anyway.
 */
const SETTLE_LIMIT_MS = 5_000;

describe(
  'settling attempts and the endpoint row',
  { skip: !onPostgres && 'needs PostgreSQL (two connections)' },
  () => {
    let t: TestApp;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let company: Awaited<ReturnType<typeof createCompany>>;

    before(async () => {
      receiver = await startReceiver();
      t = await createTestApp();
      company = await createCompany(t.app);
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });

    async function endpointAt(path: string): Promise<string> {
      const created = await t.app.inject({
        method: 'POST',
        url: '/webhooks',
        headers: company.sandbox,
        payload: { url: `${receiver.base}${path}` },
      });
      assert.equal(created.statusCode, 201, created.body);
      return created.json<{ id: string }>().id;
    }

    async function queueTest(endpoint: string): Promise<void> {
      const sent = await t.app.inject({
        method: 'POST',
        url: `/webhooks/${endpoint}/test`,
        headers: company.sandbox,
      });
      assert.equal(sent.statusCode, 202, sent.body);
    }

    /** Runs `work` while another connection holds the endpoint's row lock; how long `work` took, or 'blocked'. */
    async function withEndpointLocked(
      endpoint: string,
      work: () => Promise<unknown>,
    ): Promise<number | 'blocked'> {
      const db = t.container.database.db;
      const released = Promise.withResolvers<undefined>();
      const locked = Promise.withResolvers<undefined>();
      const holder = db.transaction().execute(async (trx) => {
        await trx
          .selectFrom('webhook_endpoints')
          .select('id')
          .where('endpoint_reference', '=', endpoint)
          .forUpdate()
          .execute();
        locked.resolve(undefined);
        await released.promise;
      });
      await locked.promise;
      const started = Date.now();
      let timer: NodeJS.Timeout | undefined;
      const result = await Promise.race([
        work().then(() => Date.now() - started),
        new Promise<'blocked'>((resolve) => {
          timer = setTimeout(resolve, SETTLE_LIMIT_MS, 'blocked');
        }),
      ]);
      clearTimeout(timer);
      released.resolve(undefined);
      await holder;
      return result;
    }

    const statusOf = async (endpoint: string): Promise<string[]> =>
      (await t.app.inject({ url: `/webhooks/${endpoint}/deliveries`, headers: company.sandbox }))
        .json<{ deliveries: Array<{ status: string }> }>()
        .deliveries.map((d) => d.status);

    test('a healthy endpoint: a delivered attempt settles while its row is locked elsewhere', async () => {
      receiver.setResponder(() => 200);
      const endpoint = await endpointAt('/healthy');
      await queueTest(endpoint);
      const took = await withEndpointLocked(endpoint, () => t.container.services.webhooks.deliverDue());
      assert.notEqual(
        took,
        'blocked',
        `the attempt waited ${String(SETTLE_LIMIT_MS)} ms on the endpoint's row`,
      );
      assert.deepEqual(await statusOf(endpoint), ['succeeded']);
    });

    test('a failing endpoint: a further failure settles while its row is locked elsewhere, and the streak is kept', async () => {
      receiver.setResponder(() => 503);
      const endpoint = await endpointAt('/failing');
      await queueTest(endpoint);
      // The first failure starts the streak, which writes the row.
      assert.equal(await t.container.services.webhooks.deliverDue(), 1);
      const startedFailing = (
        await t.app.inject({ url: `/webhooks/${endpoint}`, headers: company.sandbox })
      ).json<{
        failing_since: string | null;
      }>().failing_since;
      assert.ok(startedFailing !== null);
      await queueTest(endpoint);
      const took = await withEndpointLocked(endpoint, () => t.container.services.webhooks.deliverDue());
      assert.notEqual(
        took,
        'blocked',
        `the attempt waited ${String(SETTLE_LIMIT_MS)} ms on the endpoint's row`,
      );
      const after = (await t.app.inject({ url: `/webhooks/${endpoint}`, headers: company.sandbox })).json<{
        failing_since: string | null;
      }>();
      assert.equal(after.failing_since, startedFailing, 'the streak runs from its first failure');
    });
  },
);
