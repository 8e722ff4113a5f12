import Stripe from 'stripe';

/**
 * The official Stripe SDK against the payment sandbox served under a path (`…/sandbox/stripe`), as the
 * gateway reaches it: the SDK takes a host and port, so the path is put back on each request.
 */
export function stripeAt(apiBase: string, secretKey: string): Stripe {
  const base = new URL(apiBase);
  return new Stripe(secretKey, {
    host: base.hostname,
    port: Number(base.port),
    protocol: 'http',
    maxNetworkRetries: 0,
    httpClient: Stripe.createFetchHttpClient((input, init) => {
      const url = new URL(input instanceof Request ? input.url : input);
      url.pathname = `${base.pathname}${url.pathname}`;
      return fetch(url, init);
    }),
  });
}
