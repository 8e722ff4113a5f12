import { createHash } from 'node:crypto';
import { generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { POLICY_INPUT_EXAMPLE, type PolicyResponse } from '../policies/index.ts';
import { demoAccount, MOCK_NB_VERSION, MOCK_NB_PAYMENT_INTENT, MOCK_PAYMENT_METHOD } from './mock-billing.ts';
import { MOCK_RULES, MOCK_USAGE_RATE } from './rules/index.ts';

/*
 * The `mock` environment's demo data: deterministic (the same answer for the same request on the same
 * day), every field of the policy object filled and nothing null, and nothing persisted. Front-end
 * clients of the interface develop against it without credentials. The policy's driving and billing
 * come from mock-journeys.ts and mock-billing.ts, so every page of the demo agrees with the others.
 */

export const MOCK_USER_REFERENCE = 'usr_mock_demo_driver';
export const MOCK_USERNAME = 'aclarke1988';
export const MOCK_POLICY_REFERENCE = 'amber-falcon-river';

/**
 * The mock environment's own signing key: made at first use, kept in this process only, and published
 * nowhere, so no route of another environment (which verifies against its JWKS) accepts a mock token.
 */
let mockKey: Promise<CryptoKey> | undefined;
const mockSigningKey = (): Promise<CryptoKey> =>
  (mockKey ??= generateKeyPair('Ed25519').then((pair) => pair.privateKey));

/**
 * A DONE answer for any login: a signed JWT-shaped access token (decodable by client libraries; signed
 * with the mock key, `kid: mock`, which nothing but the mock environment's answers uses), and the fields
 * real clients read.
 */
export async function mockTokens(username: unknown, nowSeconds: number, ttlSeconds: number) {
  const name = typeof username === 'string' && username.trim() !== '' ? username.trim() : MOCK_USERNAME;
  const expiry = nowSeconds + ttlSeconds;
  const seed = createHash('sha256').update(name).digest('base64url').slice(0, 24);
  const accessToken = await new SignJWT({
    username: name,
    company: 'co_mock',
    environment: 'mock',
    token_use: 'access',
  })
    .setProtectedHeader({ alg: 'Ed25519', typ: 'JWT', kid: 'mock' })
    .setSubject(MOCK_USER_REFERENCE)
    .setIssuedAt(nowSeconds)
    .setExpirationTime(expiry)
    .sign(await mockSigningKey());
  return {
    username: name,
    session: `mock_session_${seed}`,
    type: 'DONE' as const,
    access_token: accessToken,
    refresh_token: `mprt_mock_${seed}`,
    expiry,
  };
}

/** The demo policyholder, as GET /auth/users/:user_reference returns a User. */
export function mockUser(userReference: string) {
  return {
    f_names: 'Amelia Rose',
    l_names: 'Clarke',
    email: 'amelia.clarke@example.com',
    username: MOCK_USERNAME,
    client_id: 'mock',
    client_secret: null,
    client_secret_sandbox: null,
    role: 'policyholder' as const,
    active: true,
    created_at: '2025-01-01T09:00:00.000Z',
    updated_at: '2025-01-01T09:00:00.000Z',
    idp_status: 'CONFIRMED' as const,
    company_reference: 'co_mock',
    user_reference: userReference,
    policies: [MOCK_POLICY_REFERENCE],
  };
}

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** The demo policy, as GET /policys/details answers it: the bare policy object, every field filled. */
export function mockPolicyDetails(now: Date): PolicyResponse {
  const account = demoAccount(MOCK_POLICY_REFERENCE, now);
  const { start, end } = account.term;
  const latest = account.statements.at(-1)?.view.policy_version_reference ?? MOCK_NB_VERSION;
  const version = {
    policy_reference: MOCK_POLICY_REFERENCE,
    quote_reference: '3f0c8a52-8d1e-4c57-9a57-0f6f2b8e9d41',
    usage: 'sdp_commuting',
    vehicle_reg: 'AB12 CDE',
    address_postcode: 'EC1A 1BB',
    email: 'amelia.clarke@example.com',
    proposer_first_names: 'Amelia Rose',
    proposer_last_names: 'Clarke',
    inception_date: iso(start),
    start_date: iso(start),
    end_date: iso(end),
    upfront_rate: 0.25,
    subscription_rate: 0.35,
    usage_rate: MOCK_USAGE_RATE,
    upfront_premium: 95.5,
    subscription_premium: 29.99,
    ipt_rate: 12,
    commission_rate: 15,
    superseded: false,
  };
  const driverBase = {
    children: 1,
    has_medical_conditions: false,
    has_informed_dvla_medical_conditions: false,
    ncd: 4,
    licence_type: 'full_uk',
    employment: 'employed',
    has_criminal_conviction: false,
    own_home: true,
  };
  return {
    policy_reference: MOCK_POLICY_REFERENCE,
    policy_version_reference: latest,
    user_reference: MOCK_USER_REFERENCE,
    product: {
      product_reference: POLICY_INPUT_EXAMPLE.policy.product_reference ?? 'pay-by-mile-car',
      name: 'Pay-by-mile car',
      usage_unit: 'mile',
      rules: MOCK_RULES,
    },
    status: 'active',
    // The documented example policy (OpenAPI), on this year's term and with every optional field filled.
    policy: {
      ...POLICY_INPUT_EXAMPLE.policy,
      start_date: start,
      end_date: end,
      inception_date: start,
      underwriter_policy_reference: 'ACM/DEMO/000123',
      created_at: start,
      policy_reference: MOCK_POLICY_REFERENCE,
      policy_ref: MOCK_POLICY_REFERENCE,
    },
    proposer: { ...POLICY_INPUT_EXAMPLE.proposer, mobile_number: '+447700900123' },
    vehicle: { ...POLICY_INPUT_EXAMPLE.vehicle, colour: 'Blue', modifications: ['tow_bar'] },
    additional_drivers: [
      {
        ...driverBase,
        title: 'Mr',
        first_names: 'Daniel',
        last_names: 'Clarke',
        email: 'daniel.clarke@example.com',
        phone_number: '+447700900456',
        mobile_number: '+447700900456',
        dob: '1986-11-02',
        relationship: 'spouse',
        occupation: 'electrician',
        business: 'construction',
        licence_issued_date: '2005-05-20',
        residency_date: '1986-11-02',
        convictions: [{ code: 'SP30', date: '2021-05-11', points: 3, ban: 0 }],
        claims: [{ code: 'theft', date: '2020-02-03', at_fault: false, ncd_lost: false }],
      },
    ],
    pricing: { ...POLICY_INPUT_EXAMPLE.pricing },
    custom: { ...POLICY_INPUT_EXAMPLE.custom, campaign: 'demo' },
    payment: {
      provider_payment_reference: MOCK_NB_PAYMENT_INTENT,
      payment_method_id: MOCK_PAYMENT_METHOD,
      provider_customer_reference: 'cus_mock_QhT5a1b2c3d4',
      payment_provider: 'stripe',
      payment_amount: 95.5,
    },
    versions: [
      {
        ...version,
        version_type: 'nb',
        policy_version_reference: MOCK_NB_VERSION,
        effective_date: iso(start),
        usage_premium: 270,
        // NOTE: the mock fills every field (clients of the demo must never meet a null); on a real nb
        // version the statement dates are null.
        statement_start_date: iso(start),
        statement_end_date: iso(start),
        created_at: iso(start),
      },
      ...account.statements.map((statement) => ({
        ...version,
        version_type: 'st' as const,
        policy_version_reference: statement.view.policy_version_reference,
        effective_date: iso(statement.end),
        usage_premium: statement.view.usage_premium,
        statement_start_date: iso(statement.start),
        statement_end_date: iso(statement.end),
        created_at: iso(statement.end + 1),
      })),
    ],
    payments: [],
  };
}
