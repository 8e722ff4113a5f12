// Off-session charges through the Stripe adapter (official SDK over HTTP) against the built-in sandbox,
// slowed to 300 ms a request and limited to 100 requests a second, as Stripe's test mode limits.
// A charge answered 429 (or with an unknown outcome) is retried after a short backoff under the SAME
// idempotency key; at the end every succeeded intent in the sandbox is matched to the keys the
// workers saw succeed: none may be missing ("lost") and none may be there twice ("doubled").
// Then, for as long, Bacs Direct Debit collections under the same limits (each customer's mandate set
// up first, as a browser confirms it): every collection acknowledged `processing` must be one
// processing intent in the sandbox, and the two rates are reported side by side.
//
//   npx node bench/charges.ts [seconds=10] [concurrency=50]
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../src/platform/errors.ts';
import {
  createStripeGateway,
  IDEMPOTENCY_METADATA_KEY,
  type PaymentGateway,
} from '../src/integrations/payments/index.ts';
import { startStripeSandbox } from '../src/integrations/payments/sandbox/sandbox-server.ts';

const seconds = Number(process.argv[2] ?? 10);
const concurrency = Number(process.argv[3] ?? 50);
const LATENCY_MS = 300;
const RATE_LIMIT = 100;

const backoff = (): Promise<void> => sleep(20 + Math.random() * 30);

/** Runs `work` until it is not refused by the rate limit (or an unknown outcome) and returns its result. */
async function persist<T>(
  work: () => Promise<T>,
  counters: { retries: number },
  unknown: (r: T) => boolean = () => false,
): Promise<T> {
  for (;;) {
    try {
      const result = await work();
      if (!unknown(result)) return result;
    } catch (error) {
      if (!(error instanceof AppError) || !error.retryable) throw error;
    }
    counters.retries += 1;
    await backoff();
  }
}

async function setUpCustomers(gateway: PaymentGateway, count: number, counters: { retries: number }) {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const customer = await persist(
        () =>
          gateway.createCustomer({
            email: `bench${i}@example.com`,
            name: `Bench ${i}`,
            idempotencyKey: `bench:customer:${i}`,
          }),
        counters,
      );
      const card = await persist(
        () =>
          gateway.attachPaymentMethod({
            paymentMethodId: 'pm_card_visa',
            customerId: customer.id,
            idempotencyKey: `bench:card:${i}`,
          }),
        counters,
      );
      return { customerId: customer.id, paymentMethodId: card.id };
    }),
  );
}

/** A Bacs mandate for each customer: a SetupIntent confirmed with Stripe's test account, as a browser does. */
async function setUpMandates(
  gateway: PaymentGateway,
  customers: readonly { customerId: string }[],
  apiBase: string,
  counters: { retries: number },
) {
  return Promise.all(
    customers.map(async ({ customerId }, i) => {
      const setup = await persist(
        () => gateway.createBacsSetupIntent({ customerId, metadata: {}, idempotencyKey: `bench:seti:${i}` }),
        counters,
      );
      for (;;) {
        const response = await fetch(`${apiBase}/v1/setup_intents/${setup.id}/confirm`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            client_secret: setup.clientSecret,
            'payment_method_data[type]': 'bacs_debit',
            'payment_method_data[bacs_debit][sort_code]': '108800',
            'payment_method_data[bacs_debit][account_number]': '00012345',
            'payment_method_data[billing_details][name]': `Bench ${i}`,
            'payment_method_data[billing_details][email]': `bench${i}@example.com`,
            'payment_method_data[billing_details][address][line1]': '1 High Street',
            'payment_method_data[billing_details][address][postal_code]': 'LS1 1AA',
            'mandate_data[customer_acceptance][type]': 'online',
            'mandate_data[customer_acceptance][online][infer_from_client]': 'true',
          }),
        });
        await response.body?.cancel();
        if (response.status !== 429) break;
        counters.retries += 1;
        await backoff();
      }
      const confirmed = await persist(() => gateway.retrieveSetupIntent(setup.id), counters);
      if (confirmed.paymentMethodId === null || confirmed.mandateId === null)
        throw new Error(`setup intent ${setup.id} was not confirmed`);
      return { customerId, paymentMethodId: confirmed.paymentMethodId, mandateId: confirmed.mandateId };
    }),
  );
}

/** Direct Debit collections for `seconds`, one stream a customer, each checked against the sandbox's records. */
async function benchDirectDebit(
  gateway: PaymentGateway,
  customers: readonly { customerId: string }[],
  apiBase: string,
) {
  const setupCounters = { retries: 0 };
  const mandates = await setUpMandates(gateway, customers, apiBase, setupCounters);
  await sleep(1_100);
  const counters = { retries: 0 };
  const processingKeys: string[] = [];
  let next = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    mandates.map(async (mandate) => {
      while (performance.now() < deadline) {
        const idempotencyKey = `bench:dd:${next++}`;
        const result = await persist(
          () =>
            gateway.collectDirectDebit({
              ...mandate,
              amountPence: 4_250,
              metadata: { bench: 'direct-debit' },
              idempotencyKey,
            }),
          counters,
          (r) => r.outcome === 'unknown',
        );
        if (result.outcome !== 'processing') throw new Error(`collection ${result.outcome}`);
        processingKeys.push(idempotencyKey);
      }
    }),
  );
  const elapsedSeconds = (performance.now() - started) / 1000;
  const intents = await sandbox.store.find(
    'payment_intent',
    { status: 'processing', metadata: { bench: 'direct-debit' } },
    1_000_000,
  );
  const perKey = new Map<string, number>();
  for (const intent of intents) {
    const k = (intent['metadata'] as Record<string, string>)[IDEMPOTENCY_METADATA_KEY] ?? '';
    perKey.set(k, (perKey.get(k) ?? 0) + 1);
  }
  const acknowledged = new Set(processingKeys);
  return {
    processing: processingKeys.length,
    elapsedSeconds,
    rate: processingKeys.length / elapsedSeconds,
    retries: counters.retries,
    setupRetries: setupCounters.retries,
    lost: [...acknowledged].filter((k) => !perKey.has(k)).length,
    doubled: [...perKey.values()].filter((n) => n > 1).length,
    unacknowledged: [...perKey.keys()].filter((k) => !acknowledged.has(k)).length,
  };
}

const sandbox = await startStripeSandbox({ latencyMs: LATENCY_MS, rateLimitPerSecond: RATE_LIMIT });
try {
  const gateway = createStripeGateway({
    // The sandbox accepts only keys it issued: the one it made with its store.
    secretKey: sandbox.secretKey ?? '',
    apiBase: sandbox.apiBase,
    webhookSecret: 'whsec_bench',
    timeoutMs: 10_000,
    maxNetworkRetries: 0,
  });
  const setupCounters = { retries: 0 };
  const cards = await setUpCustomers(gateway, concurrency, setupCounters);
  await sleep(1_100); // let the rate limiter's window empty before measuring

  const counters = { retries: 0 };
  const succeededKeys: string[] = [];
  const otherOutcomes = new Map<string, number>();
  let next = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;

  await Promise.all(
    cards.map(async (card) => {
      while (performance.now() < deadline) {
        const idempotencyKey = `bench:charge:${next++}`;
        const result = await persist(
          () =>
            gateway.chargeOffSession({
              customerId: card.customerId,
              paymentMethodId: card.paymentMethodId,
              amountPence: 1_234,
              currency: 'gbp',
              metadata: { bench: 'charges' },
              idempotencyKey,
            }),
          counters,
          (r) => r.outcome === 'unknown',
        );
        if (result.outcome === 'succeeded') succeededKeys.push(idempotencyKey);
        else otherOutcomes.set(result.outcome, (otherOutcomes.get(result.outcome) ?? 0) + 1);
      }
    }),
  );
  const elapsedSeconds = (performance.now() - started) / 1000;

  // Verification against the sandbox's own records.
  const intents = await sandbox.store.find(
    'payment_intent',
    { status: 'succeeded', metadata: { bench: 'charges' } },
    1_000_000,
  );
  const perKey = new Map<string, number>();
  for (const intent of intents) {
    const k = (intent['metadata'] as Record<string, string>)[IDEMPOTENCY_METADATA_KEY] ?? '';
    perKey.set(k, (perKey.get(k) ?? 0) + 1);
  }
  const acknowledged = new Set(succeededKeys);
  const lost = [...acknowledged].filter((k) => !perKey.has(k)).length;
  const doubled = [...perKey.values()].filter((n) => n > 1).length;
  const unacknowledged = [...perKey.keys()].filter((k) => !acknowledged.has(k)).length;
  const charges = await sandbox.store.count('charge', {
    status: 'succeeded',
    metadata: { bench: 'charges' },
  });

  const directDebit = await benchDirectDebit(gateway, cards, sandbox.apiBase);
  const rate = succeededKeys.length / elapsedSeconds;
  process.stdout.write(
    [
      `sandbox: latency ${LATENCY_MS} ms, limit ${RATE_LIMIT}/s; ${concurrency} charges in flight for ${seconds} s`,
      `succeeded ${succeededKeys.length} in ${elapsedSeconds.toFixed(2)} s; 429/unknown retries ${counters.retries} (setup ${setupCounters.retries})`,
      `store: ${intents.length} succeeded intents for ${perKey.size} distinct keys, ${charges} charges; not acknowledged ${unacknowledged}`,
      ...(otherOutcomes.size === 0
        ? []
        : [`other outcomes: ${JSON.stringify(Object.fromEntries(otherOutcomes))}`]),
      `charges: ${rate.toFixed(1)}/s (limit ${RATE_LIMIT}/s, ratio ${(rate / RATE_LIMIT).toFixed(2)}), lost ${lost}, doubled ${doubled}`,
      `direct debit: ${directDebit.processing} collections processing in ${directDebit.elapsedSeconds.toFixed(2)} s; retries ${directDebit.retries} (mandates ${directDebit.setupRetries})`,
      `direct debit collections: ${directDebit.rate.toFixed(1)}/s (limit ${RATE_LIMIT}/s, ratio to card charges ${(directDebit.rate / rate).toFixed(2)}), lost ${directDebit.lost}, doubled ${directDebit.doubled}`,
      '',
    ].join('\n'),
  );
  if (lost > 0 || doubled > 0 || unacknowledged > 0 || charges !== intents.length) process.exitCode = 1;
  if (directDebit.lost > 0 || directDebit.doubled > 0 || directDebit.unacknowledged > 0) process.exitCode = 1;
} finally {
  await sandbox.close();
}
