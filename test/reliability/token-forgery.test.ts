import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { mapConcurrent } from '../../src/platform/concurrency.ts';
import {
  createCompany,
  createTestApp,
  signedInPolicyholder,
  type SignedInPolicyholder,
  type TestApp,
} from '../support/app.ts';
import { livePolicyInput } from '../support/policy-arbitraries.ts';

/**
 * R6, forged access tokens: generated from a real policyholder's token, every forgery an attacker
 * can make without the service's private key — `alg: none`, HS256 keyed with the published public key
 * (key confusion), claims changed under the original signature, a signature of the attacker's own
 * key (with `jwk`, `jku`, `x5u` or a `kid` naming it), flipped signature bits, another environment's
 * token, and malformed shapes — must answer 401 problem+json on every policyholder route, while the
 * untouched token answers 200. RELIABILITY_FORGERIES and RELIABILITY_FORGERY_SEED replay a run.
 */
const FORGERIES = Number(process.env['RELIABILITY_FORGERIES'] ?? 2_000);
const SEED = Number(process.env['RELIABILITY_FORGERY_SEED'] ?? Date.now() % 1_000_000);

let t: TestApp;
let holder: SignedInPolicyholder;
let production: SignedInPolicyholder;
let company: Awaited<ReturnType<typeof createCompany>>;
let publicKeyX = '';

before(async () => {
  t = await createTestApp();
  company = await createCompany(t.app, 'Forgery Target');
  holder = await signedInPolicyholder(
    t,
    company.sandbox,
    'forgery.sandbox@example.com',
    livePolicyInput({ proposer: { email: 'forgery.sandbox@example.com' } }),
  );
  production = await signedInPolicyholder(
    t,
    company.production,
    'forgery.production@example.com',
    livePolicyInput({ proposer: { email: 'forgery.production@example.com' } }),
  );
  const jwks = (await t.app.inject({ url: '/.well-known/jwks.json' })).json<{ keys: Array<{ x: string }> }>();
  publicKeyX = jwks.keys[0]?.x ?? '';
  process.stdout.write(`# R6 token forgery: ${String(FORGERIES)} forged tokens, seed ${String(SEED)}\n`);
});
after(() => t.close());

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const parts = (token: string) => {
  const [header = '', payload = '', signature = ''] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString()) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>,
    signature,
    raw: { header, payload },
  };
};

/** The attacker's own Ed25519 key, and its public half as a JWK. */
const attacker = generateKeyPairSync('ed25519');
const attackerJwk = attacker.publicKey.export({ format: 'jwk' });

function forgeries(): fc.Arbitrary<{ kind: string; token: string; headers?: Record<string, string> }> {
  const real = parts(holder.accessToken);
  const claim = fc.oneof(
    fc.constantFrom('sub', 'company', 'environment', 'exp', 'iat', 'nbf', 'aud', 'iss', 'jti', 'sid'),
    fc.string({ minLength: 1, maxLength: 12 }),
  );
  const value = fc.oneof(
    fc.jsonValue({ maxDepth: 1 }),
    fc.constantFrom('production', 'mock', 'usr_someone_else', 9_999_999_999, 0, null, ''),
  );
  const tampered = fc
    .array(fc.tuple(claim, value), { minLength: 1, maxLength: 4 })
    .map((changes) => ({ ...real.payload, ...Object.fromEntries(changes) }));
  const payload = fc.oneof(fc.constant(real.payload), tampered);
  const ed25519 = (header: object, body: object) => {
    const input = `${b64(header)}.${b64(body)}`;
    return `${input}.${sign(null, Buffer.from(input), attacker.privateKey).toString('base64url')}`;
  };
  return fc.oneof(
    payload.map((body) => ({
      kind: 'alg none',
      token: `${b64({ ...real.header, alg: 'none' })}.${b64(body)}.`,
    })),
    fc.tuple(payload, fc.constantFrom('HS256', 'HS512')).map(([body, alg]) => {
      const input = `${b64({ ...real.header, alg })}.${b64(body)}`;
      const key =
        fc.sample(
          fc.constantFrom(publicKeyX, Buffer.from(publicKeyX, 'base64url').toString('latin1')),
          1,
        )[0] ?? '';
      const mac = createHmac(alg === 'HS256' ? 'sha256' : 'sha512', key)
        .update(input)
        .digest('base64url');
      return { kind: 'key confusion', token: `${input}.${mac}` };
    }),
    tampered.map((body) => ({
      kind: 'claims changed',
      token: `${real.raw.header}.${b64(body)}.${real.signature}`,
    })),
    fc
      .tuple(
        payload,
        fc.constantFrom<Record<string, unknown>>(
          { jwk: attackerJwk },
          { jku: 'https://attacker.invalid/jwks.json' },
          { x5u: 'https://attacker.invalid/cert.pem' },
          { kid: 'attacker' },
          { kid: '../../../../dev/null' },
          { kid: "x' union select 1 --" },
          {},
        ),
      )
      .map(([body, extra]) => ({ kind: 'attacker key', token: ed25519({ ...real.header, ...extra }, body) })),
    fc.integer({ min: 0, max: real.signature.length - 1 }).map((at) => {
      const flipped = real.signature[at] === 'A' ? 'B' : 'A';
      const signature = real.signature.slice(0, at) + flipped + real.signature.slice(at + 1);
      return { kind: 'signature bit', token: `${real.raw.header}.${real.raw.payload}.${signature}` };
    }),
    // A genuine production token presented to the sandbox.
    fc.constant({
      kind: 'other environment',
      token: production.accessToken,
      headers: { client_id: company.client_id, environment: 'sandbox' },
    }),
    // Other spellings of the genuine signature: lenient base64 would decode them to the same bytes.
    fc
      .constantFrom(
        `${real.signature}=`,
        `${real.signature}==`,
        real.signature.replaceAll('-', '+').replaceAll('_', '/'),
        `${real.signature}!`,
        `${real.signature.slice(0, 40)} ${real.signature.slice(40)}`,
      )
      .map((signature) => ({
        kind: 'signature respelt',
        token: `${real.raw.header}.${real.raw.payload}.${signature}`,
      })),
    fc
      .constantFrom(
        `${real.raw.header}.${real.raw.payload}`,
        `${real.raw.header}.${real.raw.payload}.${real.signature}.x`,
        `${real.raw.header}..${real.signature}`,
        `.${real.raw.payload}.${real.signature}`,
        'x'.repeat(10_000),
        `${b64({ alg: 'Ed25519', crit: ['exp'] })}.${real.raw.payload}.${real.signature}`,
      )
      .map((token) => ({ kind: 'malformed', token })),
  );
}

const ROUTES = () => [
  '/policys/details',
  `/journeys?policy_reference=${holder.policyReference}`,
  `/statements?policy_reference=${holder.policyReference}`,
  `/payments?policy_reference=${holder.policyReference}`,
  `/policys/${holder.policyReference}/mileage-budget`,
];

test('no forged access token is accepted by any policyholder route', { timeout: 600_000 }, async () => {
  for (const url of ROUTES()) {
    const genuine = await t.app.inject({ url, headers: { authorization: `Bearer ${holder.accessToken}` } });
    assert.ok([200, 404].includes(genuine.statusCode), `${url} with the genuine token: ${genuine.body}`);
  }
  const forged = fc.sample(fc.tuple(forgeries(), fc.constantFrom(...ROUTES())), {
    numRuns: FORGERIES,
    seed: SEED,
  });
  const accepted: string[] = [];
  const kinds = new Map<string, number>();
  await mapConcurrent(forged, 4, async ([{ kind, token, headers }, url]) => {
    // The genuine token itself can come out of "claims changed" when a change repeats a claim's value.
    if (token === holder.accessToken) return;
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    // The token alone, as an app sends it (or with the headers of the environment it is presented to).
    const answer = await t.app.inject({ url, headers: { ...headers, authorization: `Bearer ${token}` } });
    const problem = /^application\/problem\+json/.test(String(answer.headers['content-type']));
    if (answer.statusCode !== 401 || !problem)
      accepted.push(
        `${kind} → ${String(answer.statusCode)} ${url}: ${token.slice(0, 160)} ${answer.body.slice(0, 200)}`,
      );
  });
  process.stdout.write(
    `# R6 forgeries by kind: ${[...kinds].map(([k, n]) => `${k} ${String(n)}`).join(', ')}\n`,
  );
  assert.deepEqual(
    accepted.slice(0, 10),
    [],
    `${String(accepted.length)} forgeries not refused (seed ${String(SEED)})`,
  );
});
