import { createHash } from 'node:crypto';
import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { londonDate } from '../../platform/london-calendar.ts';
import type { Executor } from '../../schema.ts';
import { companyLabels, type Tenant } from '../companies/index.ts';
import { findProducts } from '../products/index.ts';
import { defaultBranding, type Branding } from './document-content.ts';
import { checkLogo } from './template-logo.ts';
import {
  findTemplate,
  findTemplateInEffect,
  findTemplateLogo,
  insertTemplate,
  latestEffectiveFrom,
  listTemplates,
  lockTemplates,
  saveLogo,
  type TemplateLogo,
  type TemplateRecord,
} from './template-repository.ts';
import type {
  CreateDocumentTemplateInput,
  DocumentTemplate,
  DocumentTemplateList,
} from './template-schemas.ts';

async function companyNameOf(db: Executor, tenant: Tenant): Promise<string> {
  const company = await companyLabels(db).where('id', '=', tenant.companyId).executeTakeFirst();
  if (company === undefined) throw notFound('company');
  return company.name;
}

/**
 * The branding of a document made on `onDate` (London `YYYY-MM-DD`, the day it is made) for a policy of
 * `productReference`: the product's template version in effect that day, else the company-wide one, else
 * the defaults from the company's name (version 0). Never fails for a company without templates.
 */
export async function findBranding(
  db: Executor,
  tenant: Tenant,
  productReference: string | null,
  onDate: string,
): Promise<Branding> {
  const template = await findTemplateInEffect(db, tenant, productReference, onDate);
  if (template === undefined) return defaultBranding(await companyNameOf(db, tenant));
  const branding: Branding = {
    companyName: template.companyName,
    insurerName: template.insurerName,
    colourHex: template.colourHex,
    templateVersion: template.version,
  };
  if (template.logo === null || template.logoBytes === null) return branding;
  return { ...branding, logo: { mediaType: template.logo.mediaType, bytes: template.logoBytes } };
}

const logoUrl = (version: number): string => `/document-templates/${String(version)}/logo`;

/** Versions in effect today: the latest started one of each scope. */
function inEffectVersions(templates: readonly TemplateRecord[], today: string): Set<number> {
  const chosen = new Map<string, TemplateRecord>();
  for (const t of templates) {
    if (t.effectiveFrom > today) continue;
    const scope = t.productReference ?? '';
    const current = chosen.get(scope);
    if (
      current === undefined ||
      t.effectiveFrom > current.effectiveFrom ||
      (t.effectiveFrom === current.effectiveFrom && t.version > current.version)
    )
      chosen.set(scope, t);
  }
  return new Set([...chosen.values()].map((t) => t.version));
}

function view(template: TemplateRecord, inEffect: boolean): DocumentTemplate {
  return {
    version: template.version,
    product_reference: template.productReference,
    effective_from: template.effectiveFrom,
    company_name: template.companyName,
    insurer_name: template.insurerName,
    colour_hex: template.colourHex,
    logo:
      template.logo === null
        ? null
        : {
            media_type: template.logo.mediaType,
            sha256: template.logo.sha256,
            size_bytes: template.logo.sizeBytes,
            width_px: template.logo.widthPx,
            height_px: template.logo.heightPx,
            url: logoUrl(template.version),
          },
    in_effect: inEffect,
    created_at: template.createdAt.toISOString(),
  };
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The uploaded logo's bytes, checked; 422 naming what is wrong. */
function logoOf(input: NonNullable<CreateDocumentTemplateInput['logo']>) {
  const text = input.data_base64.replace(/\s+/g, '');
  if (!BASE64.test(text) || text.length % 4 !== 0)
    throw new AppError('VALIDATION_FAILED', 'The logo is not valid base64', {
      errors: [{ path: '/body/logo/data_base64', message: 'must be base64 (RFC 4648, with padding)' }],
    });
  const check = checkLogo(input.media_type, new Uint8Array(Buffer.from(text, 'base64')));
  if (!check.ok)
    throw new AppError('VALIDATION_FAILED', `The logo is refused: ${check.reason}`, {
      errors: [{ path: '/body/logo', message: check.reason }],
    });
  return check.logo;
}

/** Document templates: per company and environment, company-wide or per product, in dated versions. */
export function createTemplateService(deps: { db: Executor; clock: Clock }) {
  const { db, clock } = deps;

  return {
    /** Every version, newest first, and the defaults used while none is in effect. */
    async list(tenant: Tenant): Promise<DocumentTemplateList> {
      const today = londonDate(clock.now());
      const templates = await listTemplates(db, tenant);
      const inEffect = inEffectVersions(templates, today);
      const defaults = defaultBranding(await companyNameOf(db, tenant));
      return {
        templates: templates.map((t) => view(t, inEffect.has(t.version))),
        defaults: {
          company_name: defaults.companyName,
          insurer_name: defaults.insurerName,
          colour_hex: defaults.colourHex,
        },
      };
    },

    /**
     * A new version from `effective_from` (default today, London), never before the latest of the same
     * scope; documents already issued keep the version they were made with.
     */
    async create(tenant: Tenant, input: CreateDocumentTemplateInput): Promise<DocumentTemplate> {
      const now = clock.now();
      const today = londonDate(now);
      const productReference = input.product_reference ?? null;
      const effectiveFrom = input.effective_from ?? today;
      if (Number.isNaN(Date.parse(`${effectiveFrom}T00:00:00Z`)) || !isCalendarDay(effectiveFrom))
        throw new AppError('VALIDATION_FAILED', 'effective_from is not a calendar day', {
          errors: [{ path: '/body/effective_from', message: 'must be a calendar day (YYYY-MM-DD)' }],
        });
      const logo = input.logo == null ? null : logoOf(input.logo);
      const version = await inTransaction(db, async (trx) => {
        await lockTemplates(trx, tenant);
        if (productReference !== null) await requireProduct(trx, tenant, productReference);
        const latest = await latestEffectiveFrom(trx, tenant, productReference);
        if (latest !== undefined && effectiveFrom < latest)
          throw new AppError(
            'VALIDATION_FAILED',
            'effective_from is before the latest version of its scope',
            {
              errors: [
                {
                  path: '/body/effective_from',
                  message: `must not be before ${latest} (the latest version’s)`,
                },
              ],
            },
          );
        const savedLogo =
          logo === null
            ? null
            : await (async () => {
                const sha256 = createHash('sha256').update(logo.bytes).digest('hex');
                return { id: await saveLogo(trx, tenant, { ...logo, sha256, at: now }), sha256 };
              })();
        return insertTemplate(trx, tenant, {
          productReference,
          effectiveFrom,
          companyName: input.company_name.trim(),
          insurerName: input.insurer_name.trim(),
          colourHex: input.colour_hex.toLowerCase(),
          logo: savedLogo,
          at: now,
        });
      });
      const created = await findTemplate(db, tenant, version);
      if (created === undefined)
        throw new AppError('INTERNAL', `template version ${String(version)} vanished`);
      const all = await listTemplates(db, tenant);
      return view(created, inEffectVersions(all, today).has(version));
    },

    /** The logo of one of the tenant's versions; 404 when the version is another's, absent or has none. */
    async logo(tenant: Tenant, version: number): Promise<TemplateLogo> {
      const logo = await findTemplateLogo(db, tenant, version);
      if (logo === undefined) throw notFound('logo');
      return logo;
    },
  };
}

export type TemplateService = ReturnType<typeof createTemplateService>;

const isCalendarDay = (date: string): boolean =>
  new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) === date;

async function requireProduct(db: Executor, tenant: Tenant, reference: string): Promise<void> {
  const [product] = await findProducts(db, tenant, [reference]);
  if (product === undefined)
    throw new AppError('UNKNOWN_PRODUCT', `No product ${reference} is registered`, {
      errors: [{ path: '/body/product_reference', message: 'must name a registered product' }],
    });
}
