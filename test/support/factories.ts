import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { Journey } from '../../src/modules/journeys/journey-schemas.ts';
import type { PolicyInput, PolicyResponse } from '../../src/modules/policies/policy-schemas.ts';
import type { Statement } from '../../src/modules/statements/statement-schemas.ts';
import type { DeviceView } from '../../src/modules/telematics/telematics-schemas.ts';
import { encodePolyline } from '../../src/platform/geo/index.ts';
import { toPence } from '../../src/platform/money.ts';
import type { TestApp } from './app.ts';
import { examplePolicyInput, livePolicyInput, type PolicyOverrides } from './policy-arbitraries.ts';

/**
 * Test data made the way clients make it: every factory goes through the real HTTP routes
 * (`app.inject`), so a made policy has its account, welcome email, versions and events like any other.
 * Each call makes fresh data (a new email, a new device id) unless the overrides name it, so no test
 * depends on another's rows.
 */

type Headers = Readonly<Record<string, string>>;
/** A company from `createCompany` (its sandbox is used) or one environment's credentials as headers. */
export type Tenant = { readonly sandbox: Headers } | Headers;

const headersOf = (tenant: Tenant): Headers =>
  typeof tenant['sandbox'] === 'object' ? (tenant as { sandbox: Headers }).sandbox : (tenant as Headers);

let made = 0;
/** A unique address, so that no two made policies share an account unless a test means them to. */
const uniqueEmail = (): string => `policyholder.${String(process.pid)}.${String(++made)}@example.com`;

/** Instants as an ISO string or UNIX seconds. */
export type Instant = string | number;
const unixOf = (at: Instant): number => (typeof at === 'number' ? at : Date.parse(at) / 1000);

export interface MadePolicy<Body = PolicyResponse> {
  readonly reference: string;
  readonly userReference: string;
  readonly versionReference: string;
  /** The proposer's email address (the policyholder's account). */
  readonly email: string;
  /** The body that was sent (the example policy with the overrides). */
  readonly input: PolicyInput;
  /** The answer (201 for a new policy, 200 for an adjustment). */
  readonly body: Body;
}

export interface MadePolicyholder<Body = PolicyResponse> extends MadePolicy<Body> {
  readonly username: string;
  readonly temporaryPassword: string;
}

/** A route of about 1.4 km through central London (Trafalgar Square to Oxford Circus). */
export const CENTRAL_LONDON = [51.5074, -0.1278, 51.5101, -0.134, 51.5155, -0.1419] as const;

export interface JourneyOptions {
  /** Latitude, longitude pairs; the central London route unless given. */
  readonly points?: readonly number[];
  /** An encoded polyline, sent as it is (instead of `points`). */
  readonly route?: string;
  readonly precision?: 5 | 6;
  /** 10 minutes unless given. */
  readonly durationSeconds?: number;
  readonly providerReference?: string;
}

/** `POST /policys` with `input`; asserts 201. */
async function postPolicy<Body>(
  app: FastifyInstance,
  tenant: Tenant,
  input: PolicyInput,
): Promise<MadePolicy<Body>> {
  const r = await app.inject({ method: 'POST', url: '/policys', headers: headersOf(tenant), payload: input });
  assert.equal(r.statusCode, 201, r.body);
  return madeFrom(input, r.json());
}

type References = Pick<PolicyResponse, 'policy_reference' | 'user_reference' | 'policy_version_reference'>;
const madeFrom = <Body>(input: PolicyInput, body: Body & References): MadePolicy<Body> => ({
  reference: body.policy_reference,
  userReference: body.user_reference,
  versionReference: body.policy_version_reference,
  email: input.proposer.email,
  input,
  body,
});

/** The overrides with a unique proposer email unless they name one. */
const withUniqueEmail = (overrides: PolicyOverrides): PolicyOverrides => ({
  ...overrides,
  proposer: { email: uniqueEmail(), ...overrides.proposer },
});

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `base` deep-merged with `patch` as `examplePolicyInput` merges: objects key by key, `undefined` removes. */
function merged(base: unknown, patch: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(patch)) return structuredClone(patch);
  const entries = new Map(Object.entries(base));
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) entries.delete(key);
    else entries.set(key, merged(entries.get(key), value));
  }
  return Object.fromEntries(entries);
}

/** The welcome email's `Label: value` line, as the policyholder reads it. */
const emailLine = (text: string, label: string): string | undefined =>
  new RegExp(`^${label}: (\\S+)\\r?$`, 'm').exec(text)?.[1];

export const make = {
  /**
   * A new policy on the example's term (2025-06-01 to 2026-05-31 London, for tests on a fixed clock),
   * deep-merged with `overrides` (see `examplePolicyInput`), for a new email unless they name one.
   */
  policy<Body = PolicyResponse>(
    app: FastifyInstance,
    tenant: Tenant,
    overrides: PolicyOverrides = {},
  ): Promise<MadePolicy<Body>> {
    return postPolicy<Body>(app, tenant, examplePolicyInput(withUniqueEmail(overrides)));
  },

  /** A new policy from a whole body built elsewhere (sent as it is, its email included). */
  policyFrom<Body = PolicyResponse>(
    app: FastifyInstance,
    tenant: Tenant,
    input: PolicyInput,
  ): Promise<MadePolicy<Body>> {
    return postPolicy<Body>(app, tenant, input);
  },

  /** As `policy`, on a term that covers `now` (from 30 days before, for a year): for the system clock. */
  livePolicy<Body = PolicyResponse>(
    app: FastifyInstance,
    tenant: Tenant,
    overrides: PolicyOverrides = {},
    now = new Date(),
  ): Promise<MadePolicy<Body>> {
    return postPolicy<Body>(app, tenant, livePolicyInput(withUniqueEmail(overrides), now));
  },

  /**
   * A new policy (as `policy`, or `livePolicy` with `live`) and its policyholder's welcome email, read
   * from the outbox (an app without an SMTP server keeps the text): the username and temporary password.
   */
  async policyholder<Body = PolicyResponse>(
    t: TestApp,
    tenant: Tenant,
    overrides: PolicyOverrides = {},
    options: { live?: boolean } = {},
  ): Promise<MadePolicyholder<Body>> {
    const policy =
      options.live === true
        ? await make.livePolicy<Body>(t.app, tenant, overrides)
        : await make.policy<Body>(t.app, tenant, overrides);
    const { email } = policy;
    const [welcome] = await t.container.services.notifications.emailsTo(email);
    const username = emailLine(welcome?.text ?? '', 'Username');
    const temporaryPassword = emailLine(welcome?.text ?? '', 'Temporary password');
    assert.ok(username !== undefined && temporaryPassword !== undefined, `a welcome email to ${email}`);
    return { ...policy, username, temporaryPassword };
  },

  /**
   * A policy paid for by card as the apps do it: a payment intent for its upfront premium (for
   * `productReference`), confirmed in the built-in sandbox with Stripe's test card, then `POST /policys`
   * with the payment block (the card stays on file for its statements). Needs an app that listens.
   */
  async cardPaidPolicy<Body = PolicyResponse>(
    t: TestApp,
    company: { readonly sandbox: Headers },
    overrides: PolicyOverrides & { pricing: { upfront_premium: number } },
    options: { productReference?: string } = {},
  ): Promise<MadePolicy<Body>> {
    const intent = await t.app.inject({
      method: 'POST',
      url: '/payments',
      headers: company.sandbox,
      payload: {
        type: 'CREATE_PAYMENT_INTENT',
        amount: toPence(overrides.pricing.upfront_premium),
        product_reference: options.productReference ?? 'ppm-motor',
      },
    });
    assert.equal(intent.statusCode, 200, intent.body);
    const created = intent.json<Record<string, string>>();
    const confirm = await fetch(
      `${t.container.gateways.sandboxBaseUrl() ?? ''}/sandbox/stripe/v1/payment_intents/${created['payment_provider_transaction_ref'] ?? ''}/confirm`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_secret: created['payment_temporary_token'] ?? '',
          payment_method: 'pm_card_visa',
        }),
      },
    );
    const confirmed = (await confirm.json()) as { payment_method: string };
    const input = examplePolicyInput(
      withUniqueEmail({
        ...overrides,
        payment: {
          provider_payment_reference: created['payment_provider_transaction_ref'] ?? '',
          provider_customer_reference: created['payment_provider_customer_ref'] ?? '',
          payment_provider: 'stripe',
          payment_method_id: confirmed.payment_method,
        },
      }),
    );
    // NOTE: the amount paid is the intent's; a payment_amount from the example would have to match it.
    delete input.payment?.payment_amount;
    return postPolicy<Body>(t.app, company, input);
  },

  /**
   * An adjustment (`POST /policys` naming the policy): its last input deep-merged with `overrides`;
   * asserts 200. Answers as `policy` does, for the policy as it now stands and the input sent.
   */
  async adjustment<Body = PolicyResponse>(
    app: FastifyInstance,
    tenant: Tenant,
    policy: Pick<MadePolicy<unknown>, 'reference' | 'input'>,
    overrides: PolicyOverrides = {},
  ): Promise<MadePolicy<Body>> {
    const input = merged(policy.input, {
      ...overrides,
      policy: { ...overrides.policy, policy_reference: policy.reference },
    }) as PolicyInput;
    const r = await app.inject({
      method: 'POST',
      url: '/policys',
      headers: headersOf(tenant),
      payload: input,
    });
    assert.equal(r.statusCode, 200, r.body);
    return madeFrom(input, r.json());
  },

  /**
   * `POST /journeys` for `policyReference`, starting at `start`: 201, or 200 when a provider reference
   * was sent before (the stored journey).
   */
  async journey<Body = Journey>(
    app: FastifyInstance,
    tenant: Tenant,
    policyReference: string,
    start: Instant,
    options: JourneyOptions = {},
  ): Promise<Body> {
    const startTime = unixOf(start);
    const r = await app.inject({
      method: 'POST',
      url: '/journeys',
      headers: headersOf(tenant),
      payload: {
        policy_reference: policyReference,
        route:
          options.route ?? encodePolyline([...(options.points ?? CENTRAL_LONDON)], options.precision ?? 5),
        start_time: startTime,
        end_time: startTime + (options.durationSeconds ?? 600),
        ...(options.precision === undefined ? {} : { precision: options.precision }),
        ...(options.providerReference === undefined ? {} : { provider_reference: options.providerReference }),
      },
    });
    if (options.providerReference === undefined) assert.equal(r.statusCode, 201, r.body);
    else assert.ok(r.statusCode === 201 || r.statusCode === 200, r.body);
    return r.json<Body>();
  },

  /** `POST /statements` for `policyReference`, to `effective` (now unless given); asserts 201. */
  async statement<Body = Statement>(
    app: FastifyInstance,
    tenant: Tenant,
    policyReference: string,
    effective?: Instant,
  ): Promise<Body> {
    const r = await app.inject({
      method: 'POST',
      url: '/statements',
      headers: headersOf(tenant),
      payload: {
        policy_reference: policyReference,
        ...(effective === undefined ? {} : { effective_date: unixOf(effective) }),
      },
    });
    assert.equal(r.statusCode, 201, r.body);
    return r.json<Body>();
  },

  /** `POST /devices`: binds a device (a new OBD dongle unless named) to `policyReference`; asserts 201. */
  async device(
    app: FastifyInstance,
    tenant: Tenant,
    policyReference: string,
    device: { deviceId?: string; kind?: DeviceView['kind']; vin?: string } = {},
  ): Promise<DeviceView> {
    const r = await app.inject({
      method: 'POST',
      url: '/devices',
      headers: headersOf(tenant),
      payload: {
        device_id: device.deviceId ?? `device-${String(process.pid)}-${String(++made)}`,
        policy_reference: policyReference,
        kind: device.kind ?? 'obd',
        ...(device.vin === undefined ? {} : { vin: device.vin }),
      },
    });
    assert.equal(r.statusCode, 201, r.body);
    return r.json<DeviceView>();
  },
};
