import type { DataEnvironment } from '../../modules/companies/index.ts';
import { AppError } from '../../platform/errors.ts';
import { randomToken } from '../../platform/crypto.ts';
import type { Clock } from '../../platform/clock.ts';
import type { PaymentEvent, PaymentGateway } from './gateway.ts';
import { createStripeGateway, createWebhookVerifier } from './stripe-gateway.ts';
import { tracedGateway } from './traced-gateway.ts';

/**
 * The default sandbox key of `forEnvironment`, naming no account: the sandbox refuses keys it did not
 * issue (401), so sandbox payments always go with a company's own key (`companies.stripe_sandbox_key`).
 */
export const SANDBOX_SECRET_KEY = 'sk_test_milepost_sandbox';

export interface GatewaySettings {
  readonly stripeSecretKey: string | undefined;
  readonly stripeApiBase: string | undefined;
  readonly stripeWebhookSecret: string | undefined;
  /** Where the sandbox is served; undefined means this process's own URL, known once it listens. */
  readonly sandboxApiBase: string | undefined;
  readonly clock: Clock;
}

/**
 * Production talks to Stripe; sandbox (and the embedded default) to the built-in Stripe-compatible
 * sandbox, through the same SDK. Gateways are made on first use, because the sandbox's address is this
 * process's own, known only after it listens.
 */
export function createGateways(settings: GatewaySettings) {
  // Per process: the sandbox signs its webhooks with it and the receiver in the same process checks them.
  const sandboxWebhookSecret = randomToken('whsec_', 24);
  let listeningUrl: string | undefined;
  let production: PaymentGateway | undefined;
  const sandboxAccounts = new Map<string, PaymentGateway>();
  type Verifier = ReturnType<typeof createWebhookVerifier>;
  const verifiers: Array<readonly [DataEnvironment, Verifier]> = [];
  if (settings.stripeWebhookSecret !== undefined) {
    const webhookSecret = settings.stripeWebhookSecret;
    verifiers.push(['production', createWebhookVerifier({ webhookSecret, clock: settings.clock })]);
  }
  verifiers.push([
    'sandbox',
    createWebhookVerifier({ webhookSecret: sandboxWebhookSecret, clock: settings.clock }),
  ]);

  const sandboxBase = (): string => {
    const base =
      settings.sandboxApiBase ?? (listeningUrl === undefined ? undefined : `${listeningUrl}/sandbox/stripe`);
    if (base === undefined) {
      throw new AppError(
        'UPSTREAM_UNAVAILABLE',
        'The payment sandbox is not reachable from this process (set SANDBOX_STRIPE_API_BASE)',
        { retryable: true },
      );
    }
    return base;
  };

  return {
    sandboxWebhookSecret,
    /** This process's own URL once it listens, where the sandbox posts its webhooks. */
    sandboxBaseUrl: (): string | undefined => listeningUrl,
    /** Called once the HTTP server listens: the sandbox is then reachable at this URL. */
    setListeningUrl(url: string): void {
      listeningUrl = url.replace(/\/$/, '');
    },
    /** The processor of an environment; in the sandbox, the account of `sandboxKey` (the company's). */
    forEnvironment(environment: DataEnvironment, sandboxKey: string = SANDBOX_SECRET_KEY): PaymentGateway {
      if (environment === 'production') {
        if (settings.stripeSecretKey === undefined) {
          throw new AppError(
            'UPSTREAM_UNAVAILABLE',
            'Card payments are not configured for production (STRIPE_SECRET_KEY)',
          );
        }
        production ??= tracedGateway(
          createStripeGateway({
            secretKey: settings.stripeSecretKey,
            apiBase: settings.stripeApiBase,
            webhookSecret: settings.stripeWebhookSecret ?? '',
            timeoutMs: 20_000,
            maxNetworkRetries: 2,
            clock: settings.clock,
          }),
          'stripe',
        );
        return production;
      }
      let account = sandboxAccounts.get(sandboxKey);
      if (account === undefined) {
        account = tracedGateway(
          createStripeGateway({
            secretKey: sandboxKey,
            apiBase: sandboxBase(),
            webhookSecret: sandboxWebhookSecret,
            timeoutMs: 20_000,
            maxNetworkRetries: 2,
            clock: settings.clock,
          }),
          'sandbox',
        );
        sandboxAccounts.set(sandboxKey, account);
      }
      return account;
    },
    /**
     * A webhook verifies against production's secret (STRIPE_WEBHOOK_SECRET) or the sandbox's; which one
     * says the environment. Verifying needs only the signing secret, so a process without
     * STRIPE_SECRET_KEY still accepts Stripe's events.
     */
    verifyWebhook(
      rawBody: string | Uint8Array,
      signature: string | undefined,
    ): { environment: DataEnvironment; event: PaymentEvent } {
      const failures: AppError[] = [];
      for (const [environment, verify] of verifiers) {
        try {
          return { environment, event: verify(rawBody, signature) };
        } catch (error) {
          failures.push(
            error instanceof AppError
              ? error
              : new AppError('UNAUTHENTICATED', 'The webhook signature does not verify', { cause: error }),
          );
        }
      }
      // NOTE: the SDK compares signatures before the timestamp, so a failure other than "no signature
      // matches" (a stale timestamp) comes from the secret that did sign it, and says what is wrong.
      throw (
        failures.find((f) => !f.message.includes('No signatures found matching')) ??
        failures[0] ??
        new AppError('UNAUTHENTICATED', 'The webhook signature does not verify')
      );
    },
  };
}

export type Gateways = ReturnType<typeof createGateways>;
