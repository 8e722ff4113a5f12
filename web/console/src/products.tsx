import { useId, useState } from 'react';
import { unwrap } from '../../../sdk/src/client.ts';
import { formatDateTime } from '../../shared/format.ts';
import { LoadFailed, PageMessages } from '../../shared/messages.tsx';
import { useConsole, useLoad } from './console-context.tsx';
import type { Product, Tenant } from './api-types.ts';
import { ConfirmDialog, Field, ForTenant, Loading, textOf, useNotice } from './ui.tsx';

/** A product's rules as JSON for editing (the rules are a small, closed object). */
const rulesText = (rules: Product['rules']): string => JSON.stringify(rules, null, 2);

/**
 * The rules as typed, a JSON object. NOTE: what is in it is for the service to check (a 422 names the
 * field it refuses), so it is sent as typed and only its being an object is checked here.
 */
function parseRules(text: string): Product['rules'] {
  const parsed: unknown = JSON.parse(text === '' ? '{}' : text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new SyntaxError('The rules must be a JSON object, e.g. {"daily_cap_distance": 100}.');
  return parsed;
}

/** The company's products and their rules: adding one, and changing one's name or rules. */
export function ProductsPage() {
  return (
    <>
      <h1>Products</h1>
      <ForTenant>
        {(tenant) => (
          <Products key={`${tenant.company.company_reference}/${tenant.environment}`} tenant={tenant} />
        )}
      </ForTenant>
    </>
  );
}

function RulesField({ defaultValue }: { defaultValue: string }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>Rules (JSON)</label>
      <span className="hint" id={`${id}-hint`}>
        For example {'{"daily_cap_distance": 100, "minimum_usage_premium": 5}'}
      </span>
      <textarea id={id} name="rules" rows={8} defaultValue={defaultValue} aria-describedby={`${id}-hint`} />
    </div>
  );
}

function Products({ tenant }: { tenant: Tenant }) {
  const { api } = useConsole();
  const id = useId();
  const products = useLoad(() => unwrap(api.forTenant(tenant).GET('/products')), 'products');
  const messages = useNotice();
  const [editing, setEditing] = useState<Product | undefined>();
  const [creating, setCreating] = useState(false);
  return (
    <>
      <PageMessages error={messages.error} notice={messages.notice} noticeRef={messages.noticeRef} />
      <p>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setCreating(true);
          }}
        >
          Add a product
        </button>
      </p>
      {products.error !== undefined ? (
        <LoadFailed what="The products" error={products.error} onRetry={products.reload} />
      ) : products.data === undefined ? (
        <Loading what="products" />
      ) : products.data.products.length === 0 ? (
        <p className="empty">
          {tenant.company.name} has no products in {tenant.environment}.
        </p>
      ) : (
        <ul className="plain">
          {products.data.products.map((product) => (
            <li key={product.product_reference} className="panel">
              <h2 id={`${id}-${product.product_reference}`}>
                {product.name} <span className="hint">({product.product_reference})</span>
              </h2>
              <p>
                Distance in {product.usage_unit === 'km' ? 'kilometres' : 'miles'}; {product.versions.length}{' '}
                {product.versions.length === 1 ? 'version' : 'versions'} of the rules, the latest from{' '}
                {formatDateTime(product.versions.at(-1)?.effective_from ?? product.created_at)}.
              </p>
              <pre className="rules">{rulesText(product.rules)}</pre>
              <button
                type="button"
                className="secondary"
                onClick={() => {
                  setEditing(product);
                }}
              >
                Change<span className="visually-hidden"> {product.name}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {creating ? (
        <ConfirmDialog
          title="Add a product"
          confirmLabel="Add the product"
          onClose={() => {
            setCreating(false);
          }}
          onConfirm={async (fields) => {
            const created = await unwrap(
              api.forTenant(tenant).POST('/products', {
                body: {
                  product_reference: textOf(fields, 'product_reference'),
                  name: textOf(fields, 'name'),
                  usage_unit: fields.get('usage_unit') === 'km' ? 'km' : 'mile',
                  rules: parseRules(textOf(fields, 'rules')),
                },
              }),
            );
            messages.setNotice(`${created.name} was added.`);
            products.reload();
          }}
        >
          <Field label="Reference" name="product_reference" required maxLength={100} autoFocus />
          <Field label="Name" name="name" required maxLength={200} />
          <div className="field">
            <label htmlFor={`${id}-unit`}>Unit of distance</label>
            <select id={`${id}-unit`} name="usage_unit" defaultValue="mile">
              <option value="mile">Miles</option>
              <option value="km">Kilometres</option>
            </select>
          </div>
          <RulesField defaultValue="{}" />
        </ConfirmDialog>
      ) : null}
      {editing === undefined ? null : (
        <ConfirmDialog
          title={`Change ${editing.name}`}
          confirmLabel="Save new rules"
          onClose={() => {
            setEditing(undefined);
          }}
          onConfirm={async (fields) => {
            await unwrap(
              api.forTenant(tenant).PUT('/products/{product_reference}', {
                params: { path: { product_reference: editing.product_reference } },
                body: { name: textOf(fields, 'name'), rules: parseRules(textOf(fields, 'rules')) },
              }),
            );
            messages.setNotice(`${editing.name} has new rules.`);
            products.reload();
          }}
        >
          <p>New rules are a new version: statements bill with them from now on.</p>
          <Field label="Name" name="name" required defaultValue={editing.name} maxLength={200} />
          <RulesField defaultValue={rulesText(editing.rules)} />
        </ConfirmDialog>
      )}
    </>
  );
}
