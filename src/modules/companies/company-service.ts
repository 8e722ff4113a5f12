import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import { hashToken, randomToken, tokenMatches } from '../../platform/crypto.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import {
  findCompanyByClientId,
  findCompanyById,
  findCompanyByReference,
  insertCompany,
  listCompanies,
  updateCompanySecrets,
  type CompanyRecord,
} from './company-repository.ts';
import { asTenant, type DataEnvironment, type Tenant } from './tenant.ts';

export interface CompanyCredentials {
  company_reference: string;
  name: string;
  client_id: string;
  client_secret: string;
  client_secret_sandbox: string;
  stripe_sandbox_secret_key: string;
}

export interface CompanySummary {
  company_reference: string;
  name: string;
  client_id: string;
  created_at: string;
  secrets_rotated_at: string | null;
  contact_email: string | null;
}

// Credentials are 256-bit random values; prefixes tell a reader (and a secret scanner) what a string is.
const newClientId = (): string => randomToken('mp_client_', 16);
const newProductionSecret = (): string => randomToken('mp_live_');
const newSandboxSecret = (): string => randomToken('mp_test_');
const newCompanyReference = (): string => randomToken('co_', 9);
const newSandboxKey = (): string => randomToken('sk_test_', 24);

/** How long a looked-up company is reused for client authentication before the database is asked again. */
const AUTH_CACHE_MS = 5_000;

const summary = (c: CompanyRecord): CompanySummary => ({
  company_reference: c.companyReference,
  name: c.name,
  client_id: c.clientId,
  created_at: c.createdAt.toISOString(),
  secrets_rotated_at: c.secretsRotatedAt?.toISOString() ?? null,
  contact_email: c.contactEmail,
});

/** Companies (tenants) and their client credentials. Secrets are shown once and stored as SHA-256 hashes. */
export function createCompanyService(deps: { db: Executor; clock: Clock }) {
  const { db, clock } = deps;
  const cache = new Map<string, { company: CompanyRecord | undefined; until: number }>();

  const lookup = async (clientId: string): Promise<CompanyRecord | undefined> => {
    const now = Date.now();
    const hit = cache.get(clientId);
    if (hit !== undefined && hit.until > now) return hit.company;
    const company = await findCompanyByClientId(db, clientId);
    if (cache.size > 10_000) cache.clear();
    cache.set(clientId, { company, until: now + AUTH_CACHE_MS });
    return company;
  };

  return {
    /** Creates a company with fresh credentials; the only time the secrets are returned. */
    async create(name: string, contactEmail?: string): Promise<CompanyCredentials> {
      const clientSecret = newProductionSecret();
      const clientSecretSandbox = newSandboxSecret();
      const company = await insertCompany(db, {
        companyReference: newCompanyReference(),
        name,
        clientId: newClientId(),
        productionSecretHash: hashToken(clientSecret),
        sandboxSecretHash: hashToken(clientSecretSandbox),
        contactEmail: contactEmail ?? null,
        stripeSandboxKey: newSandboxKey(),
        at: clock.now(),
      });
      return {
        company_reference: company.companyReference,
        name: company.name,
        client_id: company.clientId,
        client_secret: clientSecret,
        client_secret_sandbox: clientSecretSandbox,
        stripe_sandbox_secret_key: company.stripeSandboxKey,
      };
    },

    async list(page: {
      limit: number;
      after?: string | undefined;
    }): Promise<{ companies: CompanySummary[]; next_cursor: string | null }> {
      const rows = await listCompanies(db, { limit: page.limit + 1, afterReference: page.after });
      const more = rows.length > page.limit;
      const shown = rows.slice(0, page.limit);
      return {
        companies: shown.map(summary),
        next_cursor: more ? (shown.at(-1)?.companyReference ?? null) : null,
      };
    },

    /** Replaces the secret of one environment, or both; the old secret stops working at once. */
    async rotateSecrets(
      companyReference: string,
      environment: DataEnvironment | undefined,
    ): Promise<CompanyCredentials> {
      const company = await findCompanyByReference(db, companyReference);
      if (company === undefined) throw notFound('company');
      const clientSecret = environment === 'sandbox' ? undefined : newProductionSecret();
      const clientSecretSandbox = environment === 'production' ? undefined : newSandboxSecret();
      await updateCompanySecrets(db, company.id, {
        ...(clientSecret === undefined ? {} : { productionSecretHash: hashToken(clientSecret) }),
        ...(clientSecretSandbox === undefined ? {} : { sandboxSecretHash: hashToken(clientSecretSandbox) }),
        at: clock.now(),
      });
      cache.delete(company.clientId);
      return {
        company_reference: company.companyReference,
        name: company.name,
        client_id: company.clientId,
        // NOTE: the field of an unrotated secret is empty rather than absent, so the shape stays fixed.
        client_secret: clientSecret ?? '',
        client_secret_sandbox: clientSecretSandbox ?? '',
        stripe_sandbox_secret_key: company.stripeSandboxKey,
      };
    },

    /**
     * Checks client credentials: the production secret works only in production, the sandbox
     * secret only in sandbox. Every failure gives the same answer, so nothing tells which part was wrong.
     */
    async authenticate(
      clientId: string,
      clientSecret: string,
      environment: DataEnvironment,
    ): Promise<Tenant> {
      const company = await lookup(clientId);
      const hash = environment === 'production' ? company?.productionSecretHash : company?.sandboxSecretHash;
      // Compare against a fixed hash when the company is unknown, so timing does not reveal client ids.
      const ok = tokenMatches(clientSecret, hash ?? UNKNOWN_HASH) && company !== undefined;
      if (!ok)
        throw new AppError(
          'INVALID_CLIENT_CREDENTIALS',
          `The client credentials are not valid for the ${environment} environment`,
        );
      return asTenant(company.id, environment);
    },

    /** Resolves a company by its public client id alone (policyholder apps cannot keep a secret). */
    async identify(clientId: string, environment: DataEnvironment): Promise<Tenant> {
      const company = await lookup(clientId);
      if (company === undefined) throw new AppError('INVALID_CLIENT_CREDENTIALS', 'Unknown client_id');
      return asTenant(company.id, environment);
    },

    /** For admin routes that act on one company's data: its tenant in `environment`, or 404. */
    async tenantOf(companyReference: string, environment: DataEnvironment): Promise<Tenant> {
      const company = await findCompanyByReference(db, companyReference);
      if (company === undefined) throw notFound('company');
      return asTenant(company.id, environment);
    },

    async findById(id: string): Promise<CompanySummary | undefined> {
      const company = await findCompanyById(db, id);
      return company === undefined ? undefined : summary(company);
    },

    async findByReference(companyReference: string): Promise<CompanySummary | undefined> {
      const company = await findCompanyByReference(db, companyReference);
      return company === undefined ? undefined : summary(company);
    },
  };
}

const UNKNOWN_HASH = hashToken('no such company');

export type CompanyService = ReturnType<typeof createCompanyService>;
