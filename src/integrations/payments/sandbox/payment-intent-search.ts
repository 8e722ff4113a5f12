import type { EngineContext } from './engine-context.ts';
import { invalidRequest } from './errors.ts';
import { readParams, type FormObject } from './form.ts';

/** `GET /v1/payment_intents/search`: the caller's intents matching the query, newest first, a page at a time. */
export async function searchPaymentIntents(ctx: EngineContext, params: FormObject) {
  const p = readParams(params, ['query', 'limit', 'page', 'expand']);
  const match = parseSearchQuery(p.requiredString('query'));
  const limit = p.integer('limit') ?? 10;
  if (limit < 1 || limit > 100)
    throw invalidRequest('Invalid limit: must be between 1 and 100', { param: 'limit' });
  const page = p.string('page');
  const offset =
    page === undefined ? 0 : Number.parseInt(Buffer.from(page, 'base64url').toString('utf8'), 10);
  if (!Number.isSafeInteger(offset) || offset < 0)
    throw invalidRequest('Invalid page cursor.', { param: 'page' });
  const found = await ctx.store.find('payment_intent', match, offset + limit + 1);
  const data = found.slice(offset, offset + limit);
  const hasMore = found.length > offset + limit;
  return {
    object: 'search_result',
    data,
    has_more: hasMore,
    next_page: hasMore ? Buffer.from(String(offset + limit)).toString('base64url') : null,
    url: '/v1/payment_intents/search',
  };
}

const CLAUSE = /^(?:metadata\[(['"])(.+?)\1\]|([a-z_]+))\s*:\s*(['"])(.*)\4$/;
const SEARCHABLE = new Set(['customer', 'status', 'currency']);

/**
 * The part of Stripe's search query language the sandbox understands: exact-match clauses on
 * `metadata['key']`, `customer`, `status` and `currency`, joined by AND.
 */
export function parseSearchQuery(query: string): Record<string, unknown> {
  const match: Record<string, unknown> = {};
  const metadata: Record<string, string> = {};
  for (const clause of query.trim().split(/\s+AND\s+/)) {
    const m = CLAUSE.exec(clause.trim());
    const field = m?.[3];
    const key = m?.[2];
    const value = m?.[5];
    if (m === null || value === undefined)
      throw invalidRequest(`The sandbox cannot parse the search query clause: ${clause}`, { param: 'query' });
    if (key !== undefined) metadata[key] = value;
    else if (field !== undefined && SEARCHABLE.has(field)) match[field] = value;
    else
      throw invalidRequest(
        `The sandbox cannot search on the field ${field ?? '?'}; use metadata['key'], customer, status or currency.`,
        { param: 'query' },
      );
  }
  if (Object.keys(metadata).length > 0) match['metadata'] = metadata;
  return match;
}
