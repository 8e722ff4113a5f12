import type { Static } from 'typebox';
import type { Executor } from '../../schema.ts';
import { AppError } from '../../platform/errors.ts';
import { asTenant, type CompanyService } from '../companies/index.ts';
import { findPolicy } from '../policies/index.ts';
import type { AuditListSchema, AuditQuerySchema } from './staff-schemas.ts';
import { listAuditRecords } from './staff-repository.ts';

type AuditQuery = Static<typeof AuditQuerySchema>;
type AuditList = Static<typeof AuditListSchema>;

/**
 * A page of the audit trail, newest first, filtered as GET /admin/audit asks. A company reference that
 * names no company answers 404; a policy (which needs the company and environment) that does not exist
 * there answers an empty page.
 */
export async function readAuditTrail(
  deps: { db: Executor; companies: CompanyService },
  q: AuditQuery,
): Promise<AuditList> {
  const { db, companies } = deps;
  const limit = q.limit ?? 100;
  let companyId: string | undefined;
  let policyId: string | undefined;
  if (q.company_reference !== undefined) {
    // The company's id (404 for an unknown reference); the environment filters apart.
    companyId = (await companies.tenantOf(q.company_reference, 'sandbox')).companyId;
  }
  if (q.policy_reference !== undefined) {
    if (companyId === undefined || q.environment === undefined)
      throw new AppError('VALIDATION_FAILED', 'policy_reference needs company_reference and environment', {
        errors: [
          {
            path: '/querystring/policy_reference',
            message: 'needs company_reference and environment',
          },
        ],
      });
    const policy = await findPolicy(db, asTenant(companyId, q.environment), q.policy_reference);
    if (policy === undefined) return { data: [], next_cursor: null };
    policyId = policy.id;
  }
  const rows = await listAuditRecords(db, {
    actor: q.actor,
    companyId,
    environment: q.environment,
    policyId,
    requestId: q.request_id,
    resource: q.resource,
    from: q.from === undefined ? undefined : new Date(q.from),
    to: q.to === undefined ? undefined : new Date(q.to),
    before: q.after === undefined ? undefined : Number(q.after),
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  return {
    data: page.map((r) => ({
      id: String(r.id),
      occurred_at: r.occurred_at.toISOString(),
      actor: r.actor,
      role: r.role,
      action: r.action,
      resource: r.resource,
      company_reference: r.company_reference,
      environment: r.environment,
      policy_reference: r.policy_reference,
      request_id: r.request_id,
      source_address: r.source_address,
      outcome: r.outcome,
      table: r.table_name,
      key: r.row_key,
      operation: r.operation,
      before: r.before ?? null,
      after: r.after ?? null,
    })),
    next_cursor: rows.length > limit ? String(page[page.length - 1]?.id ?? '') : null,
  };
}
