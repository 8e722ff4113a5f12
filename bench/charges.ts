// Off-session charges through the Stripe adapter (official SDK over HTTP) against the built-in sandbox,
// slowed to 300 ms a request and limited to 100 requests a second, as Stripe's test mode limits.
// A charge answered 429 (or with an unknown outcome) is retried after a short backoff under the SAME
// idempotency key; at the end every succeeded intent in the sandbox is matched to the keys the
// workers saw succeed: none may be missing ("lost") and none may be there twice ("doubled").
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
      '',
    ].join('\n'),
  );
  if (lost > 0 || doubled > 0 || unacknowledged > 0 || charges !== intents.length) process.exitCode = 1;
} finally {
  await sandbox.close();
}
