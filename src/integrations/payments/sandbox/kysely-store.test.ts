import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type DatabaseHandle } from '../../../platform/db/database.ts';
import { createStripeGateway } from '../stripe-gateway.ts';
import { createKyselySandboxStore, type SandboxTables } from './kysely-store.ts';
import { up } from './sandbox-migration.ts';
import { startStripeSandbox } from './sandbox-server.ts';
import { createMemorySandboxStore, type SandboxStore } from './store.ts';

/** What every store must do; run on memory and on the database. */
function storeContract(name: string, open: () => Promise<SandboxStore>) {
  describe(`${name} sandbox store`, () => {
    let store: SandboxStore;
    before(async () => {
      store = await open();
    });

    test('objects: put replaces, find filters by contained JSON, newest first', async () => {
      await store.put({
        id: 'pi_a',
        object: 'payment_intent',
        created: 100,
        status: 'succeeded',
        metadata: { k: 'one' },
        list: [1, 2],
      });
      await store.put({
        id: 'pi_b',
        object: 'payment_intent',
        created: 200,
        status: 'requires_payment_method',
        metadata: { k: 'two' },
      });
      await store.put({ id: 'cus_a', object: 'customer', created: 300, metadata: { k: 'one' } });
      assert.deepEqual(await store.get('pi_a'), {
        id: 'pi_a',
        object: 'payment_intent',
        created: 100,
        status: 'succeeded',
        metadata: { k: 'one' },
        list: [1, 2],
      });
      assert.equal(await store.get('pi_missing'), undefined);

      assert.deepEqual(
        (await store.find('payment_intent')).map((o) => o.id),
        ['pi_b', 'pi_a'],
      );
      assert.deepEqual(
        (await store.find('payment_intent', { metadata: { k: 'one' } })).map((o) => o.id),
        ['pi_a'],
      );
      assert.equal(await store.count('payment_intent', { status: 'succeeded' }), 1);
      assert.equal(await store.count('customer'), 1);

      await store.put({
        id: 'pi_b',
        object: 'payment_intent',
        created: 200,
        status: 'succeeded',
        metadata: { k: 'two' },
      });
      assert.equal(await store.count('payment_intent', { status: 'succeeded' }), 2);
      assert.equal((await store.find('payment_intent', undefined, 1)).length, 1);
    });

    test('idempotency keys: reserve once per account, complete, release', async () => {
      const createdAt = new Date('2026-11-21T10:00:00Z');
      assert.equal(
        await store.reserveIdempotencyKey({ account: 'acct_1', key: 'k', requestHash: 'h1', createdAt }),
        undefined,
      );
      const inProgress = await store.reserveIdempotencyKey({
        account: 'acct_1',
        key: 'k',
        requestHash: 'h2',
        createdAt,
      });
      assert.deepEqual(inProgress, {
        account: 'acct_1',
        key: 'k',
        requestHash: 'h1',
        response: undefined,
        createdAt,
      });
      assert.equal(
        await store.reserveIdempotencyKey({ account: 'acct_2', key: 'k', requestHash: 'h1', createdAt }),
        undefined,
      );

      await store.completeIdempotencyKey('acct_1', 'k', {
        status: 402,
        body: { error: { type: 'card_error', list: ['a'] } },
      });
      const done = await store.reserveIdempotencyKey({
        account: 'acct_1',
        key: 'k',
        requestHash: 'h1',
        createdAt,
      });
      assert.deepEqual(done?.response, { status: 402, body: { error: { type: 'card_error', list: ['a'] } } });

      await store.releaseIdempotencyKey('acct_1', 'k');
      assert.equal(
        await store.reserveIdempotencyKey({ account: 'acct_1', key: 'k', requestHash: 'h3', createdAt }),
        undefined,
      );
    });
  });
}

let database: DatabaseHandle<SandboxTables> | undefined;
const openMigrated = async (): Promise<DatabaseHandle<SandboxTables>> => {
  if (database === undefined) {
    database = await openDatabase<SandboxTables>({});
    await up(database.db as never);
  }
  return database;
};
after(async () => {
  await database?.close();
});

storeContract('in-memory', async () => createMemorySandboxStore());
storeContract('Kysely (PGlite)', async () => createKyselySandboxStore((await openMigrated()).db));

describe('the sandbox on the Kysely store, through the SDK', () => {
  test('a charge, its idempotent replay and a refund persist in the tables', async () => {
    const handle = await openMigrated();
    // This database holds only the sandbox's tables (no companies): its one account is named here.
    const store = createKyselySandboxStore(handle.db, {
      isIssuedKey: async (secretKey) => secretKey === 'sk_test_kysely',
    });
    const sandbox = await startStripeSandbox({ store });
    try {
      const gateway = createStripeGateway({
        secretKey: 'sk_test_kysely',
        apiBase: sandbox.apiBase,
        webhookSecret: 'whsec_k',
        timeoutMs: 5_000,
        maxNetworkRetries: 0,
      });
      const customer = await gateway.createCustomer({
        email: 'k@example.com',
        name: 'K',
        idempotencyKey: 'kysely:cus',
      });
      const card = await gateway.attachPaymentMethod({
        paymentMethodId: 'pm_card_visa',
        customerId: customer.id,
        idempotencyKey: 'kysely:pm',
      });
      const input = {
        customerId: customer.id,
        paymentMethodId: card.id,
        amountPence: 5_000,
        currency: 'gbp',
        metadata: { statement: 's1' },
        idempotencyKey: 'kysely:charge',
      };
      const first = await gateway.chargeOffSession(input);
      const second = await gateway.chargeOffSession(input);
      assert.equal(first.outcome, 'succeeded');
      assert.deepEqual(second, first);
      assert.equal((await gateway.findPaymentIntentByKey('kysely:charge'))?.id, first.intentId);
      await gateway.refund({
        paymentIntentId: first.intentId,
        amountPence: 1_000,
        idempotencyKey: 'kysely:refund',
      });

      const rows = await handle.db
        .selectFrom('stripe_sandbox_objects')
        .select(['type'])
        .where('type', 'in', ['payment_intent', 'charge', 'refund'])
        .where('id', 'not in', ['pi_a', 'pi_b']) // the contract test's objects
        .execute();
      assert.deepEqual(rows.map((r) => r.type).sort(), ['charge', 'payment_intent', 'refund']);
      const keys = await handle.db
        .selectFrom('stripe_sandbox_idempotency')
        .select(['key', 'status'])
        .orderBy('key')
        .execute();
      assert.deepEqual(
        keys.filter((k) => k.key.startsWith('kysely:')),
        [
          { key: 'kysely:charge', status: 200 },
          { key: 'kysely:cus', status: 200 },
          { key: 'kysely:pm', status: 200 },
          { key: 'kysely:refund', status: 200 },
        ],
      );
    } finally {
      await sandbox.close();
    }
  });
});
