import type { onRequestAsyncHookHandler } from 'fastify';
import { hashToken, tokenMatches } from '../crypto.ts';
import { AppError } from '../errors.ts';
import './actor.ts';

/**
 * `Authorization: Bearer <ADMIN_API_KEY>`, compared in constant time; or a staff session, which the
 * staff session hook has checked (with its CSRF token) before this runs. An onRequest hook: it reads
 * only headers, so a request without the key is answered before its body is read.
 */
export function createAdminAuth(adminApiKey: string): onRequestAsyncHookHandler {
  const expected = hashToken(adminApiKey);
  return async function adminAuth(request) {
    if (request.actor?.kind === 'staff') return;
    const value = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(value);
    if (match?.[1] === undefined || !tokenMatches(match[1], expected)) {
      throw new AppError(
        'UNAUTHENTICATED',
        'An admin API key is required: Authorization: Bearer <ADMIN_API_KEY> (or a staff session)',
      );
    }
    request.actor = { kind: 'admin-key' };
  };
}
