import type { Executor } from '../../schema.ts';

/**
 * Policyholders' public references as another module's query joins them (id, user reference), as a
 * derived table that the planner flattens into a plain join: `.leftJoin(userReferences(db).as('u'), 'u.id', …)`.
 */
export function userReferences(db: Executor) {
  return db.selectFrom('users').select(['id', 'user_reference']);
}
