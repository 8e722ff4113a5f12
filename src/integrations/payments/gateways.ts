import type { DataEnvironment } from '../../modules/companies/index.ts';
import { AppError } from '../../platform/errors.ts';
import { randomToken } from '../../platform/crypto.ts';
import type { Clock } from '../../platform/clock.ts';
import type { PaymentEvent, PaymentGateway } from './gateway.ts';
import { createStripeGateway } from './stripe-gateway.ts';

/**
 * A key for the sandbox when no company is concerned (verifying its webhooks). Every `sk_test_` key is
 * an account of its own in the sandbox; companies charge with theirs (`companies.stripe_sandbox_key`).
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
  let sandbox: PaymentGateway | undefined;
  const sandboxAccounts = new Map<string, PaymentGateway>();

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
        production ??= createStripeGateway({
          secretKey: settings.stripeSecretKey,
          apiBase: settings.stripeApiBase,
          webhookSecret: settings.stripeWebhookSecret ?? '',
          timeoutMs: 20_000,
          maxNetworkRetries: 2,
          clock: settings.clock,
        });
        return production;
      }
      let account = sandboxAccounts.get(sandboxKey);
      if (account === undefined) {
        account = createStripeGateway({
          secretKey: sandboxKey,
          apiBase: sandboxBase(),
          webhookSecret: sandboxWebhookSecret,
          timeoutMs: 20_000,
          maxNetworkRetries: 2,
          clock: settings.clock,
        });
        sandboxAccounts.set(sandboxKey, account);
      }
      return account;
    },
    /** A webhook verifies against production's secret or the sandbox's; which one says the environment. */
    verifyWebhook(
      rawBody: string,
      signature: string | undefined,
    ): { environment: DataEnvironment; event: PaymentEvent } {
      const candidates: DataEnvironment[] =
        settings.stripeWebhookSecret === undefined ? ['sandbox'] : ['production', 'sandbox'];
      let lastError: unknown;
      for (const environment of candidates) {
        try {
          const gateway =
            environment === 'production'
              ? this.forEnvironment('production')
              : (sandbox ??
                createStripeGateway({
                  secretKey: SANDBOX_SECRET_KEY,
                  webhookSecret: sandboxWebhookSecret,
                  timeoutMs: 20_000,
                  maxNetworkRetries: 0,
                  clock: settings.clock,
                }));
          return { environment, event: gateway.constructWebhookEvent(rawBody, signature) };
        } catch (error) {
          lastError = error;
        }
      }
      throw lastError instanceof AppError
        ? lastError
        : new AppError('UNAUTHENTICATED', 'The webhook signature does not verify');
    },
  };
}

export type Gateways = ReturnType<typeof createGateways>;
