import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { problemResponses } from '../../platform/http/problem.ts';
import { ClientHeadersSchema, tenantOf, type ClientAuth } from '../companies/index.ts';
import {
  CreateProductSchema,
  ProductListSchema,
  ProductParamsSchema,
  ProductSchema,
  UpdateProductSchema,
} from './product-schemas.ts';
import type { ProductService } from './product-service.ts';

const security = [{ clientId: [], clientSecret: [] }];
const tags = ['products'];

/** Products and their pay-by-mile rules; per company and environment. */
export function productRoutes(deps: {
  products: ProductService;
  clientAuth: ClientAuth;
}): FastifyPluginAsyncTypebox {
  const { products, clientAuth } = deps;
  return async (app) => {
    app.addSchema(ProductSchema);
    const onRequest = clientAuth();
    const headers = ClientHeadersSchema;

    app.post(
      '/products',
      {
        onRequest,
        schema: {
          operationId: 'products.create',
          tags,
          summary: 'Register a product',
          description:
            'A product and its first rule set, billing from now. Once a company has a product, a policy’s `policy.product_reference` must name one of its products (422 `UNKNOWN_PRODUCT`). 409 when the reference is taken.',
          security,
          headers,
          body: CreateProductSchema,
          response: { 201: Type.Ref('Product'), ...problemResponses(401, 409, 422) },
        },
      },
      async (request, reply) => {
        const product = await products.create(tenantOf(request), request.body);
        return reply
          .code(201)
          .header('location', `/products/${encodeURIComponent(product.product_reference)}`)
          .send(product);
      },
    );

    app.get(
      '/products',
      {
        onRequest,
        schema: {
          operationId: 'products.list',
          tags,
          summary: 'List products',
          description:
            'Every product of the company and environment, by reference, with its rules in force now.',
          security,
          headers,
          response: { 200: ProductListSchema, ...problemResponses(401) },
        },
      },
      async (request) => ({ products: await products.list(tenantOf(request)) }),
    );

    app.get(
      '/products/:product_reference',
      {
        onRequest,
        schema: {
          operationId: 'products.get',
          tags,
          summary: 'Read a product',
          description:
            'Its rules in force now and every version of them. Another company’s product answers 404.',
          security,
          headers,
          params: ProductParamsSchema,
          response: { 200: Type.Ref('Product'), ...problemResponses(401, 404, 422) },
        },
      },
      async (request) => products.get(tenantOf(request), request.params.product_reference),
    );

    app.put(
      '/products/:product_reference',
      {
        onRequest,
        schema: {
          operationId: 'products.update',
          tags,
          summary: 'Change a product’s rules',
          description:
            'A new version of the rules (and name), effective from `effective_date` (default now; never before the latest version’s). The days before it keep billing by the rules they had.',
          security,
          headers,
          params: ProductParamsSchema,
          body: UpdateProductSchema,
          response: { 200: Type.Ref('Product'), ...problemResponses(401, 404, 422) },
        },
      },
      async (request) => products.update(tenantOf(request), request.params.product_reference, request.body),
    );
  };
}
