import type { preHandlerAsyncHookHandler } from 'fastify';
import { hashToken, tokenMatches } from '../crypto.ts';
import { AppError } from '../errors.ts';

/** `Authorization: Bearer <ADMIN_API_KEY>`, compared in constant time. */
export function createAdminAuth(adminApiKey: string): preHandlerAsyncHookHandler {
  const expected = hashToken(adminApiKey);
  return async function adminAuth(request) {
    const value = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(value);
    if (match?.[1] === undefined || !tokenMatches(match[1], expected)) {
      throw new AppError(
        'UNAUTHENTICATED',
        'An admin API key is required: Authorization: Bearer <ADMIN_API_KEY>',
      );
    }
  };
}
