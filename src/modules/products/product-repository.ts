import { sql, type Generated } from 'kysely';
import type { Executor } from '../../schema.ts';
import { forTenant, type Tenant } from '../companies/index.ts';
import type { ProductRules } from './product-schemas.ts';

export interface ProductTables {
  products: {
    id: Generated<string>;
    company_id: string;
    environment: string;
    product_reference: string;
    usage_unit: 'mile' | 'km';
    created_at: Date;
  };
  product_versions: {
    id: Generated<string>;
    product_id: string;
    sequence: number;
    name: string;
    rules: string | ProductRules;
    effective_from: Date;
    created_at: Date;
  };
}

export interface ProductVersionRecord {
  readonly sequence: number;
  readonly name: string;
  readonly rules: ProductRules;
  readonly effectiveFrom: Date;
  readonly createdAt: Date;
}

export interface ProductRecord {
  readonly id: string;
  readonly reference: string;
  readonly usageUnit: 'mile' | 'km';
  readonly createdAt: Date;
  /** Oldest first; never empty. */
  readonly versions: readonly ProductVersionRecord[];
}

const tenantProducts = (db: Executor, tenant: Tenant) => db.selectFrom('products').where(forTenant(tenant));

/** Inserts a product with its first version; undefined when the reference is taken. */
export async function insertProduct(
  db: Executor,
  tenant: Tenant,
  values: {
    reference: string;
    usageUnit: 'mile' | 'km';
    name: string;
    rules: ProductRules;
    at: Date;
  },
): Promise<boolean> {
  const row = await db
    .insertInto('products')
    .values({
      company_id: tenant.companyId,
      environment: tenant.environment,
      product_reference: values.reference,
      usage_unit: values.usageUnit,
      created_at: values.at,
    })
    .onConflict((oc) => oc.constraint('products_reference_key').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (row === undefined) return false;
  await appendProductVersion(db, row.id, 1, {
    name: values.name,
    rules: values.rules,
    effectiveFrom: values.at,
    at: values.at,
  });
  return true;
}

export async function appendProductVersion(
  db: Executor,
  productId: string,
  sequence: number,
  values: { name: string; rules: ProductRules; effectiveFrom: Date; at: Date },
): Promise<void> {
  await db
    .insertInto('product_versions')
    .values({
      product_id: productId,
      sequence,
      name: values.name,
      rules: JSON.stringify(values.rules),
      effective_from: values.effectiveFrom,
      created_at: values.at,
    })
    .execute();
}

/** The tenant's products with their versions, by reference; `lock` takes the product rows' locks. */
export async function findProducts(
  db: Executor,
  tenant: Tenant,
  references?: readonly string[],
  lock = false,
): Promise<ProductRecord[]> {
  let query = tenantProducts(db, tenant)
    .select(['id', 'product_reference', 'usage_unit', 'created_at'])
    .orderBy('product_reference');
  if (references !== undefined) {
    if (references.length === 0) return [];
    query = query.where('product_reference', 'in', [...references]);
  }
  if (lock) query = query.forUpdate();
  const products = await query.execute();
  if (products.length === 0) return [];
  const versions = await db
    .selectFrom('product_versions')
    .select(['product_id', 'sequence', 'name', 'rules', 'effective_from', 'created_at'])
    .where(
      'product_id',
      'in',
      products.map((p) => p.id),
    )
    .orderBy('product_id')
    .orderBy('sequence')
    .execute();
  return products.map((p) => ({
    id: p.id,
    reference: p.product_reference,
    usageUnit: p.usage_unit,
    createdAt: p.created_at,
    versions: versions
      .filter((v) => v.product_id === p.id)
      .map((v) => ({
        sequence: v.sequence,
        name: v.name,
        rules: typeof v.rules === 'string' ? (JSON.parse(v.rules) as ProductRules) : v.rules,
        effectiveFrom: v.effective_from,
        createdAt: v.created_at,
      })),
  }));
}

/**
 * Whether `reference` names a product of the tenant, or the tenant has none at all (until it registers
 * one, any `product_reference` is accepted): one indexed read.
 */
export async function productReferenceStatus(
  db: Executor,
  tenant: Tenant,
  reference: string,
): Promise<'known' | 'unknown' | 'no-products'> {
  const rows = await tenantProducts(db, tenant)
    .select('product_reference')
    .orderBy(sql`product_reference = ${reference}`, 'desc')
    .limit(1)
    .execute();
  const first = rows[0];
  if (first === undefined) return 'no-products';
  return first.product_reference === reference ? 'known' : 'unknown';
}
