import type { CompanyTables } from './modules/companies/index.ts';
import type { HousekeepingTables } from './platform/jobs/housekeeping.ts';

/** The whole database as Kysely sees it: each module declares the tables it owns. */
export interface Database extends CompanyTables, HousekeepingTables {}
