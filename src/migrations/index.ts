import type { Migration } from 'kysely/migration';
import * as m0001 from './0001-companies.ts';
import * as m0002 from './0002-policies.ts';

/** Every migration, in order. Forward-only; add new files at the end. */
export const migrations: Record<string, Migration> = {
  '0001-companies': m0001,
  '0002-policies': m0002,
};
