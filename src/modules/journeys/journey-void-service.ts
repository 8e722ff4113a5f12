/** Voids: a journey marked void, never billed, credited by the next statement when it had been billed. */
import type { Clock } from '../../platform/clock.ts';
import { inTransaction } from '../../platform/db/database.ts';
import { notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { fromPence } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { markTripScoreVoid } from '../scores/index.ts';
import { UUID } from './journey-context.ts';
import { findJourney, insertJourneyVoid, markJourneyVoid, type JourneyRecord } from './journey-repository.ts';
import type { Journey } from './journey-schemas.ts';
import { journeyView } from './journey-views.ts';

/** Marks a journey void with its audit record and event; undefined when it was void already or is not the tenant's. */
export async function voidIn(
  trx: Executor,
  tenant: Tenant,
  reference: string,
  values: { reason: string; requestId: string | null; at: Date },
): Promise<JourneyRecord | undefined> {
  const journey = await markJourneyVoid(trx, tenant, reference, { reason: values.reason, at: values.at });
  if (journey === undefined) return undefined;
  await insertJourneyVoid(trx, tenant, journey, values);
  // A device trip's score and events stop counting with it.
  await markTripScoreVoid(trx, journey.policyId, journey.id, values.at);
  await recordEvent(
    trx,
    { companyId: tenant.companyId, environment: tenant.environment },
    'journey.voided',
    {
      journey_reference: journey.id,
      provider_reference: journey.providerReference,
      policy_reference: journey.policyReference,
      reason: values.reason,
      usage_premium: fromPence(journey.usagePremiumPence),
      billed: journey.statementVersionId !== null,
      statement_version_reference: journey.statementVersionId,
    },
    values.at,
  );
  return journey;
}

/** POST /journeys/:journey_reference/void; a void journey is answered as it is (see JourneyService.void). */
export async function voidJourney(
  deps: { readonly db: Executor; readonly clock: Clock },
  tenant: Tenant,
  reference: string,
  input: { reason: string },
  context: { requestId?: string },
): Promise<Journey> {
  if (!UUID.test(reference)) throw notFound('journey');
  const now = deps.clock.now();
  return inTransaction(deps.db, async (trx) => {
    const journey = await voidIn(trx, tenant, reference, {
      reason: input.reason,
      requestId: context.requestId ?? null,
      at: now,
    });
    if (journey !== undefined) return journeyView(journey);
    const existing = await findJourney(trx, tenant, reference);
    if (existing === undefined) throw notFound('journey');
    return journeyView(existing);
  });
}
