/** What a written statement tells: its `statement.created` event and the policyholder's email. */
import { recordEvents } from '../../platform/events.ts';
import { BILLING_CURRENCY, fromPence } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import { totalMiles } from '../journeys/index.ts';
import type { StatementIssuedValues } from '../notifications/index.ts';
import { londonDate } from './rules/statement-period.ts';
import type { StatementDeps, Written } from './statement-writer.ts';

/** The `statement.created` events and the statement emails of written statements. */
export async function announceStatements(
  deps: Pick<StatementDeps, 'notifications'>,
  trx: Executor,
  written: readonly Written[],
  now: Date,
): Promise<void> {
  await recordEvents(
    trx,
    written.map(({ state, row }) => ({
      scope: { companyId: state.companyId, environment: state.environment },
      type: 'statement.created',
      data: {
        policy_reference: state.policyReference,
        policy_version_reference: row.id,
        statement_start_date: row.period_start_at.toISOString(),
        statement_end_date: row.period_end_at.toISOString(),
        journey_count: row.journey_count,
        usage_premium: fromPence(row.usage_premium_pence),
        subscription_premium: fromPence(row.subscription_premium_pence),
        total_premium: fromPence(row.total_premium_pence),
        billed_premium: fromPence(row.billed_premium_pence),
      },
      at: now,
    })),
  );
  // The statement's PDF is on the web app's documents page: one link builder a tenant of the chunk.
  const links = new Map<string, ((policyReference: string) => string) | undefined>();
  for (const { state } of written) {
    const key = `${state.companyId} ${state.environment}`;
    if (!links.has(key))
      links.set(
        key,
        await deps.notifications.documentLinks(trx, {
          companyId: state.companyId,
          environment: state.environment,
        }),
      );
  }
  await deps.notifications.queueEmails(
    trx,
    written.map(({ state, row, paymentId }) => {
      const account = state.policyholder;
      const documentsUrl = links.get(`${state.companyId} ${state.environment}`)?.(state.policyReference);
      return {
        scope: { companyId: state.companyId, environment: state.environment },
        template: 'statement-issued' as const,
        to: account.email,
        // NOTE: the address was read as the policy's lock was waited for, so it may be one an erasure
        // has since replaced: the account lets notifications refuse it (never sent to an erased person).
        userId: state.userId,
        // Rendered when sent (notifications' LATER_TEMPLATES): a chunk queues a thousand.
        data: {
          firstNames: account.firstNames,
          policyReference: state.policyReference,
          periodStartOn: londonDate(row.period_start_at),
          periodEndOn: londonDate(row.period_end_at),
          journeyCount: row.journey_count,
          distanceMiles: totalMiles(row.distance_metres),
          usagePremiumPence: row.usage_premium_pence,
          subscriptionPremiumPence: row.subscription_premium_pence,
          totalPremiumPence: row.total_premium_pence,
          billedPremiumPence: row.billed_premium_pence,
          currency: BILLING_CURRENCY,
          payment: row.carried_forward_pence > 0 ? 'carried' : paymentId !== undefined ? 'card' : 'none',
          carriedForwardPence: row.carried_forward_pence,
          ...(documentsUrl === undefined ? {} : { documentsUrl }),
        } satisfies StatementIssuedValues,
      };
    }),
  );
}
