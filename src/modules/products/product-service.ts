import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound, type FieldError } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { toPence } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import {
  appendProductVersion,
  findProducts,
  insertProduct,
  productReferenceStatus,
  type ProductRecord,
} from './product-repository.ts';
import type {
  CreateProductInput,
  ProductRules,
  ProductSummary,
  ProductView,
  UpdateProductInput,
} from './product-schemas.ts';
import { noClaimsStepBackProblems } from './rules/no-claims.ts';
import { productVersionAt } from './rules/product-versions.ts';
import { scorePricingProblems } from './rules/score-pricing.ts';

const seconds = (at: Date): number => Math.floor(at.getTime() / 1000);

/**
 * Checks what the schema cannot: money to the penny; a no-claims step-back that never adds years; score
 * pricing's percentages to the hundredth and its bands' scores distinct.
 */
function checkRules(rules: ProductRules): void {
  const errors: FieldError[] = [];
  if (rules.no_claims_step_back !== undefined)
    errors.push(...noClaimsStepBackProblems(rules.no_claims_step_back, '/body/rules/no_claims_step_back'));
  if (rules.score_pricing !== undefined)
    errors.push(...scorePricingProblems(rules.score_pricing, '/body/rules/score_pricing'));
  if (rules.minimum_usage_premium !== undefined) {
    try {
      toPence(rules.minimum_usage_premium);
    } catch {
      errors.push({
        path: '/body/rules/minimum_usage_premium',
        message: 'must have at most 2 decimal places',
      });
    }
  }
  if (errors.length > 0) throw new AppError('VALIDATION_FAILED', 'The rules are invalid', { errors });
}

/** How long a process shows a product on policies before reading it again. */
const PRODUCT_SUMMARY_TTL_MS = 5000;
const SUMMARY_CACHE_SIZE = 10_000;

/** A product as the API shows it, with the rules in force at `now`. */
function view(product: ProductRecord, now: Date): ProductView {
  const current = productVersionAt(product.versions, now);
  if (current === undefined) throw new AppError('INTERNAL', `product ${product.reference} has no versions`);
  return {
    product_reference: product.reference,
    name: current.name,
    usage_unit: product.usageUnit,
    rules: current.rules,
    versions: product.versions.map((v) => ({
      name: v.name,
      rules: v.rules,
      effective_from: v.effectiveFrom.toISOString(),
      created_at: v.createdAt.toISOString(),
    })),
    created_at: product.createdAt.toISOString(),
  };
}

/** The tenant's product under `reference` (its row locked with `lock`); 404 when there is none. */
async function get(db: Executor, tenant: Tenant, reference: string, lock = false): Promise<ProductRecord> {
  const [product] = await findProducts(db, tenant, [reference], lock);
  if (product === undefined) throw notFound('product');
  return product;
}

/** Products and their rule versions, per company and environment. */
export function createProductService(deps: { db: Executor; clock: Clock }) {
  const { db, clock } = deps;
  const summaries = new Map<string, { product: ProductRecord | null; readAtMs: number }>();
  const forget = (tenant: Tenant, reference: string) =>
    summaries.delete(`${tenant.companyId}/${tenant.environment}/${reference}`);

  return {
    async create(tenant: Tenant, input: CreateProductInput): Promise<ProductView> {
      const rules = input.rules ?? {};
      checkRules(rules);
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const created = await insertProduct(trx, tenant, {
          reference: input.product_reference,
          usageUnit: input.usage_unit,
          name: input.name,
          rules,
          at: now,
        });
        if (!created) throw new AppError('CONFLICT', `A product ${input.product_reference} already exists`);
        await recordEvent(
          trx,
          tenant,
          'product.created',
          { product_reference: input.product_reference, effective_from: now.toISOString() },
          now,
        );
        forget(tenant, input.product_reference);
        return view(await get(trx, tenant, input.product_reference), now);
      });
    },

    /**
     * A product as a policy shows it: the name, unit and rules in force at `at` (null when the reference
     * names no registered product). Kept a few seconds per process, as policy reads ask for it on every
     * read: another process's change shows within PRODUCT_SUMMARY_TTL_MS (this process's at once).
     */
    async summaryAt(
      trx: Executor,
      tenant: Tenant,
      reference: string | undefined,
      at: Date,
    ): Promise<ProductSummary | null> {
      if (reference === undefined) return null;
      const key = `${tenant.companyId}/${tenant.environment}/${reference}`;
      let entry = summaries.get(key);
      if (entry === undefined || entry.readAtMs + PRODUCT_SUMMARY_TTL_MS <= Date.now()) {
        const [product] = await findProducts(trx, tenant, [reference]);
        entry = { product: product ?? null, readAtMs: Date.now() };
        if (summaries.size >= SUMMARY_CACHE_SIZE) summaries.delete(summaries.keys().next().value ?? '');
        summaries.set(key, entry);
      }
      if (entry.product === null) return null;
      const shown = view(entry.product, at);
      return {
        product_reference: shown.product_reference,
        name: shown.name,
        usage_unit: shown.usage_unit,
        rules: shown.rules,
      };
    },

    async list(tenant: Tenant): Promise<ProductView[]> {
      const now = clock.now();
      return (await findProducts(db, tenant)).map((p) => view(p, now));
    },

    async get(tenant: Tenant, reference: string): Promise<ProductView> {
      return view(await get(db, tenant, reference), clock.now());
    },

    /** A new rule set from `effective_date` (default now); the days before it keep the rules they had. */
    async update(tenant: Tenant, reference: string, input: UpdateProductInput): Promise<ProductView> {
      checkRules(input.rules);
      const now = clock.now();
      return inTransaction(db, async (trx) => {
        const product = await get(trx, tenant, reference, true);
        const latest = product.versions.at(-1);
        if (latest === undefined) throw new AppError('INTERNAL', `product ${reference} has no versions`);
        const from = input.effective_date === undefined ? now : new Date(input.effective_date * 1000);
        if (from.getTime() < latest.effectiveFrom.getTime())
          throw new AppError('VALIDATION_FAILED', 'effective_date is before the latest rules took effect', {
            errors: [
              {
                path: '/body/effective_date',
                message: `must not be before ${String(seconds(latest.effectiveFrom))} (the latest version's)`,
              },
            ],
          });
        await appendProductVersion(trx, product.id, latest.sequence + 1, {
          name: input.name ?? latest.name,
          rules: input.rules,
          effectiveFrom: from,
          at: now,
        });
        await recordEvent(
          trx,
          tenant,
          'product.updated',
          { product_reference: reference, effective_from: from.toISOString() },
          now,
        );
        forget(tenant, reference);
        return view(await get(trx, tenant, reference), now);
      });
    },

    /**
     * For policies: refuses a `product_reference` the company has not registered, once it has
     * registered any (before that, any reference is accepted, as the interface has it).
     */
    async checkReference(trx: Executor, tenant: Tenant, reference: string | undefined): Promise<void> {
      if (reference === undefined) return;
      if ((await productReferenceStatus(trx, tenant, reference)) !== 'unknown') return;
      throw new AppError('UNKNOWN_PRODUCT', `No product ${reference} is registered`, {
        errors: [{ path: '/body/policy/product_reference', message: 'must name a registered product' }],
      });
    },
  };
}

export type ProductService = ReturnType<typeof createProductService>;
