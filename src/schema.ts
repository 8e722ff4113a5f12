import type { Kysely } from 'kysely';
import type { AccountTables } from './modules/accounts/index.ts';
import type { AuthTables } from './modules/auth/index.ts';
import type { ClaimTables } from './modules/claims/index.ts';
import type { CompanyTables } from './modules/companies/index.ts';
import type { DocumentTables } from './modules/documents/index.ts';
import type { OutboxTables } from './modules/notifications/index.ts';
import type { PaymentTables } from './modules/payments/index.ts';
import type { SandboxTables } from './integrations/payments/index.ts';
import type { JourneyTables } from './modules/journeys/index.ts';
import type { PolicyTables } from './modules/policies/index.ts';
import type { ProductTables } from './modules/products/index.ts';
import type { TemplateTables } from './modules/documents/index.ts';
import type { RatingTables } from './modules/rating/index.ts';
import type { QuoteTables } from './modules/quotes/index.ts';
import type { TelematicsTables } from './modules/telematics/index.ts';
import type { ScoreTables } from './modules/scores/index.ts';
import type { StaffTables } from './modules/staff/index.ts';
import type { StatementTables } from './modules/statements/index.ts';
import type { UsageTables } from './modules/usage/index.ts';
import type { WebhookTables } from './modules/webhooks/index.ts';
import type { EventTables } from './platform/events.ts';
import type { HousekeepingTables } from './platform/jobs/housekeeping.ts';

/** The whole database as Kysely sees it: each module declares the tables it owns. */
export interface Database
  extends
    CompanyTables,
    HousekeepingTables,
    AccountTables,
    AuthTables,
    PolicyTables,
    ProductTables,
    EventTables,
    OutboxTables,
    PaymentTables,
    SandboxTables,
    JourneyTables,
    WebhookTables,
    StatementTables,
    UsageTables,
    TelematicsTables,
    StaffTables,
    ScoreTables,
    TemplateTables,
    RatingTables,
    QuoteTables,
    DocumentTables,
    ClaimTables {}

/**
 * What repositories take: the database or an open transaction over it. One type for all of them,
 * because Kysely's database type parameter is invariant (a `Kysely<Database>` is not a `Kysely<PolicyTables>`).
 */
export type Executor = Kysely<Database>;
