import { AppError, notFound } from '../../platform/errors.ts';
import type { Tenant } from '../companies/index.ts';
import type { PolicyResponse } from '../policies/index.ts';
import { createAuthContext, type AuthDeps, type Policyholder } from './auth-context.ts';
import { purgeExpired } from './auth-repository.ts';
import type { TokenResponse, UserView } from './auth-schemas.ts';
import { createPasswordResetService } from './password-reset-service.ts';
import { idpStatus } from './rules/login-rules.ts';
import { createSessionService } from './session-service.ts';
import { createSignInService } from './sign-in-service.ts';

export type { AuthSettings, Policyholder } from './auth-context.ts';

/** A step of POST /auth/token, as the route has checked its fields. */
export interface TokenStep {
  type: string;
  username?: string | undefined;
  password?: string | undefined;
  session?: string | undefined;
  new_password?: string | undefined;
  code?: string | number | undefined;
  refresh_token?: string | undefined;
}

/**
 * Policyholder login: the multi-stage token flow of the interface, refresh tokens, bearer
 * authentication and the User view. Secrets are compared in constant time or through argon2id, and
 * every answer about an unknown username is the one a known username would get, after the same work.
 */
export function createAuthService(deps: AuthDeps) {
  const ctx = createAuthContext(deps);
  const { db, accounts, policies, keys, accessTokens } = ctx;
  const signIn = createSignInService(ctx);
  const reset = createPasswordResetService(ctx);
  const sessions = createSessionService(ctx);

  return {
    keys,
    accessTokens,

    /** POST /auth/token for a real tenant: one step of the flow. Fields are checked by the route. */
    async token(tenant: Tenant, body: TokenStep, address: string): Promise<TokenResponse> {
      const { username = '', password = '', session = '', new_password: newPassword = '' } = body;
      switch (body.type) {
        case 'USER_PASSWORD_AUTH':
          return signIn.userPasswordAuth(tenant, username, password, address);
        case 'NEW_PASSWORD_REQUIRED':
          return signIn.newPasswordRequired(tenant, username, session, newPassword, address);
        case 'FORGOT_PASSWORD':
          return reset.forgotPassword(tenant, username);
        case 'FORGOT_PASSWORD_CODE':
          return reset.forgotPasswordCode(tenant, username, body.code ?? '', newPassword, address);
        case 'RESEND_PASSWORD':
          return reset.resendPassword(tenant, username);
        case 'REFRESH_TOKEN':
          return sessions.refresh(tenant, body.refresh_token ?? '');
        default:
          throw new AppError('VALIDATION_FAILED', `Unknown type ${body.type}`, {
            errors: [{ path: '/body/type', message: 'is not a known type' }],
          });
      }
    },

    revoke: sessions.revoke,
    authenticate: sessions.authenticate,

    /** The User of the interface; another tenant's user is not found. */
    async user(tenant: Tenant, userReference: string): Promise<UserView> {
      const account = await accounts.findByReference(db, tenant, userReference);
      if (account === undefined) throw notFound('user');
      const [company, references] = await Promise.all([
        ctx.companyOf(tenant),
        policies.referencesOf(tenant, account.id),
      ]);
      return {
        f_names: account.firstNames,
        l_names: account.lastNames,
        email: account.email,
        username: account.username,
        client_id: company.clientId,
        client_secret: null,
        client_secret_sandbox: null,
        role: 'policyholder',
        active: account.active,
        created_at: account.createdAt.toISOString(),
        updated_at: account.updatedAt.toISOString(),
        idp_status: idpStatus(account),
        company_reference: company.companyReference,
        user_reference: account.userReference,
        policies: references,
      };
    },

    /** GET /policys/details: the policyholder's policy (current, or the one named); never another's. */
    details: (holder: Policyholder, policyReference?: string): Promise<PolicyResponse> =>
      policies.getForPolicyholder(holder.tenant, holder.userId, policyReference),

    jwks: () => keys.jwks(),

    /** An account changed elsewhere (erased): access tokens of its older session generation fail at once here. */
    forgetTokenSubjects: (): void => {
      ctx.forgetSubjects();
    },

    async rotateSigningKeys(withdrawPrevious: boolean) {
      const result = await keys.rotate(withdrawPrevious);
      if (withdrawPrevious) accessTokens.forget();
      return result;
    },

    /** Housekeeping: expired sessions, codes, refresh tokens, quiet throttles and unpublished keys. */
    purgeExpired: (now: Date) => purgeExpired(db, now),
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
