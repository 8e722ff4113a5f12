import type { Executor } from '../../schema.ts';

/**
 * The id of the company `reference` names, as a subquery another module's filter compares with
 * (`.where('company_id', '=', companyIdOfReference(db, reference))`): evaluated once, no extra round trip.
 */
export function companyIdOfReference(db: Executor, reference: string) {
  return db
    .selectFrom('companies')
    .select('companies.id')
    .where('companies.company_reference', '=', reference);
}

/**
 * Companies as another module's query joins them (id, reference, name, client id), as a derived table
 * that the planner flattens into a plain join: `.innerJoin(companyLabels(db).as('c'), 'c.id', …)`.
 */
export function companyLabels(db: Executor) {
  return db.selectFrom('companies').select(['id', 'company_reference', 'name', 'client_id']);
}
