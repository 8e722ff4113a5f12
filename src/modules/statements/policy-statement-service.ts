/**
 * One policy's statements: POST /statements (a statement now, charged after commit) and the reads of
 * its statements, one or a page.
 */
import { notFound } from '../../platform/errors.ts';
import type { Tenant } from '../companies/index.ts';
import { listStatementJourneys } from '../journeys/index.ts';
import type { ChargeOutcome } from '../payments/index.ts';
import { findPolicy, findPolicyReference } from '../policies/index.ts';
import { listStatementOdometers } from './odometer-billing.ts';
import { findStatement, lastStatement, listStatements, type StatementRow } from './statement-repository.ts';
import { toView, type StatementView } from './statement-views.ts';
import { collect, periodConflict, writeOne, type StatementDeps } from './statement-writer.ts';

/** Issuing and reading a policy's statements. */
export function createPolicyStatementService(deps: StatementDeps) {
  const { db, clock, payments } = deps;
  const paymentOf = (tenant: Tenant, row: StatementRow): Promise<ChargeOutcome | undefined> =>
    row.payment_id === null ? Promise.resolve(undefined) : payments.outcomeOf(tenant, row.payment_id);

  return {
    /** POST /statements: a statement up to `effectiveAt` (default now), charged after commit. */
    async create(tenant: Tenant, reference: string, effectiveAt?: Date): Promise<StatementView> {
      const written = await writeOne(deps, tenant, reference, { endAt: effectiveAt ?? clock.now() });
      if (written === undefined) throw periodConflict(null, null);
      const payment = (await collect(deps, [written])).get(written.row.id);
      return toView(reference, written.row, written.journeys, true, payment, written.odometer);
    },

    async get(tenant: Tenant, statementId: string): Promise<StatementView> {
      const row = await findStatement(db, tenant, statementId);
      if (row === undefined) throw notFound('statement');
      // A statement's policy always exists (statements reference policies).
      const policyReference = await findPolicyReference(db, row.policy_id);
      if (policyReference === undefined) throw notFound('statement');
      const latest = await lastStatement(db, row.policy_id);
      return toView(
        policyReference,
        row,
        (await listStatementJourneys(db, row.policy_id, [row])).get(row.id) ?? [],
        latest?.id === row.id,
        await paymentOf(tenant, row),
        (await listStatementOdometers(db, [row.id])).get(row.id),
      );
    },

    async list(tenant: Tenant, reference: string, page: { limit: number; before?: Date | undefined }) {
      const policy = await findPolicy(db, tenant, reference);
      if (policy === undefined) throw notFound('policy');
      const rows = await listStatements(db, tenant, policy.id, {
        limit: page.limit + 1,
        before: page.before,
      });
      const shown = rows.slice(0, page.limit);
      const latest = await lastStatement(db, policy.id);
      // One query for every statement's journeys; payments are read for the statements that have one.
      const journeysOf = await listStatementJourneys(db, policy.id, shown);
      const paid = await Promise.all(shown.map((row) => paymentOf(tenant, row)));
      const odometers = await listStatementOdometers(
        db,
        shown.map((row) => row.id),
      );
      const statements = shown.map((row, i) =>
        toView(
          reference,
          row,
          journeysOf.get(row.id) ?? [],
          latest?.id === row.id,
          paid[i],
          odometers.get(row.id),
        ),
      );
      return {
        statements,
        next_cursor: rows.length > page.limit ? (shown.at(-1)?.period_end_at.toISOString() ?? null) : null,
      };
    },
  };
}
