export {
  createMilepostClient,
  unwrap,
  type ClientOptions,
  type Fetch,
  type MilepostClient,
  type components,
  type operations,
  type paths,
} from './client.ts';
export { MilepostError, type FieldProblem } from './errors.ts';
export {
  createSession,
  memoryTokenStore,
  type Session,
  type SessionOptions,
  type SignInResult,
  type TokenStore,
  type Tokens,
} from './session.ts';

import type { operations } from './openapi.ts';
/** The policy as `GET /policys/details` answers it: the latest snapshot plus `versions`. */
export type PolicyDetails = operations['policies.details']['responses'][200]['content']['application/json'];
