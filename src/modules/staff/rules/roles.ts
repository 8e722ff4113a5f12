/*
 * What each staff role may do, by the route's operationId: the one table the server enforces on every
 * route a staff session reaches. Viewers read; operations staff also act on policies, deliveries and referred quotes;
 * claims handlers read as viewers and act on claims;
 * admins also manage companies, secrets, staff, products, rate books and billing runs. A route that changes state
 * and is not in the table is an integration's (client credentials), never a staff member's: default deny.
 */

export type StaffRole = 'viewer' | 'operations' | 'admin' | 'claims';
export const STAFF_ROLES: readonly StaffRole[] = ['viewer', 'operations', 'admin', 'claims'];

/**
 * NOTE: claims handlers stand beside operations staff, not above viewers in one line: they read what
 * viewers read and act on claims (and only claims); admins may do both.
 */
const RANK: Readonly<Record<StaffRole, number>> = { viewer: 0, claims: 0, operations: 1, admin: 2 };

/** Actions (routes that change state) staff may take, and the least role for each. */
export const STAFF_ACTIONS: Readonly<Record<string, StaffRole>> = {
  'journeys.void': 'operations',
  'statements.grantCredit': 'operations',
  'payments.act': 'operations',
  'policies.cancel': 'operations',
  'policies.resendWelcome': 'operations',
  'events.replay': 'operations',
  'webhooks.retryDelivery': 'operations',
  'devices.bind': 'operations',
  'devices.unbind': 'operations',
  'documents.reissue': 'operations',
  'quotes.decideReferral': 'operations',
  'scores.decideDispute': 'operations',
  'policyholders.erase': 'admin',
  'companies.create': 'admin',
  'companies.rotateSecrets': 'admin',
  'auth.rotateSigningKeys': 'admin',
  'products.create': 'admin',
  'products.update': 'admin',
  'documentTemplates.create': 'admin',
  'rateBooks.create': 'admin',
  'rateBooks.createVersion': 'admin',
  'rateBooks.updateVersion': 'admin',
  'rateBooks.approveVersion': 'admin',
  'rateBooks.importVersion': 'admin',
  'rateBooks.importFactor': 'admin',
  'rateBooks.impact': 'admin',
  'quotes.setSettings': 'admin',
  'telematics.setSettings': 'admin',
  'statements.billingRun': 'admin',
  'payments.setDirectDebitSettings': 'admin',
  'staff.create': 'admin',
  'staff.update': 'admin',
  'webhooks.create': 'admin',
  'webhooks.update': 'admin',
  'webhooks.delete': 'admin',
  'webhooks.rotateSecret': 'admin',
  'webhooks.test': 'admin',
  'documents.updateSettings': 'admin',
  'claims.transition': 'claims',
  'claims.addExposure': 'claims',
  'claims.setReserve': 'claims',
  'claims.pay': 'claims',
  'claims.addNote': 'claims',
  'claims.assignHandler': 'claims',
  'claims.setFault': 'claims',
  'claims.updateSettings': 'admin',
};

/** Reads kept to admins: the outbox holds temporary passwords; staff and document templates are theirs to manage. */
const ADMIN_READS: ReadonlySet<string> = new Set([
  'emails.list',
  'staff.list',
  'documentTemplates.list',
  'documentTemplates.logo',
]);

/** Reads beyond viewers: finance reports and a person's whole record (subject access). */
const OPERATIONS_READS: ReadonlySet<string> = new Set([
  'reports.bordereau',
  'reports.claimsBordereau',
  'reports.cash',
  'reports.renewalsAtCap',
  'policyholders.export',
]);

/** `payments.act` serves policyholders too; of its types only a retry is a staff action. */
const STAFF_PAYMENT_TYPES: ReadonlySet<string> = new Set(['RETRY_PAYMENT']);

const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

export type StaffDecision =
  { readonly allowed: true } | { readonly allowed: false; readonly needs: StaffRole | 'integration' };

/** Whether `role` may make this request: `body` only matters to routes whose action depends on it. */
export function staffMay(
  role: StaffRole,
  request: { readonly operationId: string | undefined; readonly method: string; readonly body?: unknown },
): StaffDecision {
  const { operationId = '', method } = request;
  let needs: StaffRole | 'integration';
  if (READ_METHODS.has(method))
    needs = ADMIN_READS.has(operationId)
      ? 'admin'
      : OPERATIONS_READS.has(operationId)
        ? 'operations'
        : 'viewer';
  else needs = STAFF_ACTIONS[operationId] ?? 'integration';
  if (operationId === 'payments.act' && !STAFF_PAYMENT_TYPES.has(paymentTypeOf(request.body)))
    needs = 'integration';
  if (needs === 'claims')
    return role === 'claims' || role === 'admin' ? { allowed: true } : { allowed: false, needs };
  if (needs === 'integration' || RANK[role] < RANK[needs]) return { allowed: false, needs };
  return { allowed: true };
}

const paymentTypeOf = (body: unknown): string =>
  typeof body === 'object' && body !== null && typeof (body as Record<string, unknown>)['type'] === 'string'
    ? String((body as Record<string, unknown>)['type'])
    : '';

export const isStaffRole = (value: unknown): value is StaffRole =>
  typeof value === 'string' && (STAFF_ROLES as readonly string[]).includes(value);
