import { mockTokens } from './mock-data.ts';

/*
 * POST /auth/token in the `mock` environment: whatever body a real client sends logs in. The auth
 * routes reduce the body with `mockLoginBody` before validation and answer with `mockLoginAnswer`.
 */

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Whatever a mock client sent (object, form fields, a JSON string, junk), as a `{type, username}`:
 * `type` one of `types` (the login flow's request types), else USER_PASSWORD_AUTH.
 */
export function mockLoginBody<T extends string>(
  body: unknown,
  types: readonly T[],
): { type: T | 'USER_PASSWORD_AUTH'; username?: string } {
  let fields: unknown = body;
  if (typeof body === 'string') {
    try {
      fields = JSON.parse(body);
    } catch {
      fields = undefined;
    }
  }
  const record = isRecord(fields) ? fields : {};
  const type = types.find((t) => t === record['type']) ?? 'USER_PASSWORD_AUTH';
  const username = record['username'];
  return typeof username === 'string' && username.trim() !== '' && username.length <= 254
    ? { type, username }
    : { type };
}

/** The answer to a step of the login flow: every step succeeds, and a login is DONE with tokens. */
export async function mockLoginAnswer(
  body: { type: string; username?: string | undefined },
  now: Date,
  ttlSeconds: number,
) {
  switch (body.type) {
    case 'NEW_PASSWORD_REQUIRED':
    case 'FORGOT_PASSWORD_CODE':
      return { type: 'PASSWORD_RESET' as const };
    case 'FORGOT_PASSWORD':
      return { type: 'FORGOT_PASSWORD_CODE' as const };
    case 'RESEND_PASSWORD':
      return { type: 'TEMPORARY_PASSWORD_SENT' as const };
    default:
      return mockTokens(body.username, Math.floor(now.getTime() / 1000), ttlSeconds);
  }
}
