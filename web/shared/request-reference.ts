/**
 * A reference of the page's own for a request that must take effect once (a claim's report, a payment):
 * sent again with it after an answer was lost, the service answers with what the first one did.
 */
export const newRequestReference = (prefix: string): string =>
  `${prefix}-${Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('')}`;
