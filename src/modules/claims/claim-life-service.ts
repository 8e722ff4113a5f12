/** A claim's life as staff (or a client's claims system) drive it: states, exposures, reserves, payments, notes, handler. */
import { inTransaction } from '../../platform/db/database.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { toPence } from '../../platform/money.ts';
import type { Executor } from '../../schema.ts';
import type { Tenant } from '../companies/index.ts';
import { findPolicyReference } from '../policies/index.ts';
import { findStaffRole } from '../staff/index.ts';
import type { ClaimServiceDeps } from './claim-context.ts';
import {
  findClaim,
  findSettings,
  listClaims,
  listExposures,
  saveSettings,
  updateClaim,
  type ClaimRow,
} from './claim-repository.ts';
import type { ClaimView, Transition } from './claim-schemas.ts';
import { tellClaimant } from './claim-letters.ts';
import { claimEventData, claimView } from './claim-views.ts';
import {
  CLAIM_TRANSITIONS,
  DEFAULT_CLAIM_RETENTION_YEARS,
  DEFAULT_RESPONSE_HOURS,
  eventOfTransition,
  isLive,
  mayTransition,
  type ClaimState,
  type ExposureKind,
} from './rules/index.ts';

/** Who made a change, as a note records it. */
export interface ClaimAuthor {
  readonly author: string;
  readonly staffId: string | null;
}

const conflict = (message: string) => new AppError('CONFLICT', message);

/**
 * In one transaction: the tenant's claim locked (404 when it has none), `work` applied, the change's event
 * recorded; the claim's view after it.
 */
export async function changeClaim(
  deps: ClaimServiceDeps,
  tenant: Tenant,
  claimId: string,
  change: string,
  work: (trx: Executor, claim: ClaimRow, now: Date) => Promise<ClaimRow | undefined>,
  options: { withNotes: boolean; policyId?: string } = { withNotes: true },
): Promise<ClaimView> {
  const now = deps.clock.now();
  return inTransaction(deps.db, async (trx) => {
    const claim = await findClaim(trx, tenant, claimId, true);
    if (claim === undefined || (options.policyId !== undefined && claim.policy_id !== options.policyId))
      throw notFound('claim');
    const before = claim.state;
    const after = (await work(trx, claim, now)) ?? claim;
    const changed = await updateClaim(trx, { id: after.id, policyId: after.policy_id }, { updated_at: now });
    const reference = (await findPolicyReference(trx, claim.policy_id)) ?? '';
    const type = before === changed.state ? 'claim.updated' : eventOfTransition(changed.state);
    await recordEvent(trx, tenant, type, claimEventData(changed, reference, change), now);
    await tellClaimant(deps, trx, tenant, { before, claim: changed, policyReference: reference });
    return claimView(trx, changed, options.withNotes);
  });
}

/** The state change `to`, checked against the table and the claim's exposures; the changed row. */
export async function moveClaim(
  trx: Executor,
  claim: ClaimRow,
  to: ClaimState,
  now: Date,
  extra: Partial<Omit<ClaimRow, 'id' | 'policy_id'>> = {},
): Promise<ClaimRow> {
  if (!mayTransition(claim.state, to))
    throw conflict(
      `A ${claim.state} claim may not become ${to}; it may become: ${CLAIM_TRANSITIONS[claim.state].join(', ')}`,
    );
  if (to === 'settled') {
    const exposures = await listExposures(trx, { id: claim.id, policyId: claim.policy_id });
    if (exposures.length === 0 || exposures.some((e) => e.settled_at === null))
      throw conflict(
        'A claim is settled once each of its exposures has had its final payment (and it has one)',
      );
  }
  return updateClaim(
    trx,
    { id: claim.id, policyId: claim.policy_id },
    {
      ...extra,
      state: to,
      ...(to === 'open' && claim.opened_at === null ? { opened_at: now } : {}),
      ...(to === 'settled' ? { settled_at: now } : {}),
      ...(to === 'closed' ? { closed_at: now } : {}),
      // The retention of its personal data runs from its end (claim-retention.ts); a reopening stops it.
      ...(to === 'closed' || to === 'rejected' || to === 'withdrawn' ? { ended_at: now } : {}),
      ...(to === 'reopened' ? { closed_at: null, ended_at: null } : {}),
    },
  );
}

/** A note on the claim, in the change's transaction. */
export async function insertNote(trx: Executor, claim: ClaimRow, by: ClaimAuthor, text: string, now: Date) {
  await trx
    .insertInto('claim_notes')
    .values({
      policy_id: claim.policy_id,
      claim_id: claim.id,
      company_id: claim.company_id,
      environment: claim.environment,
      author: by.author,
      staff_id: by.staffId,
      body: text,
      created_at: now,
    })
    .execute();
}

async function exposureOf(trx: Executor, claim: ClaimRow, exposureId: string) {
  const exposure = await trx
    .selectFrom('claim_exposures')
    .selectAll()
    .where('policy_id', '=', claim.policy_id)
    .where('claim_id', '=', claim.id)
    .where('id', '=', exposureId)
    .forUpdate()
    .executeTakeFirst();
  if (exposure === undefined) throw notFound('exposure');
  return exposure;
}

const requireLive = (claim: ClaimRow, what: string) => {
  if (!isLive(claim.state))
    throw conflict(`${what} needs a draft, open or reopened claim; this one is ${claim.state}`);
};

/** See ClaimLifeService.settings. */
async function claimSettings(deps: ClaimServiceDeps, tenant: Tenant) {
  const row = await findSettings(deps.db, tenant);
  return {
    response_hours: row?.response_hours ?? DEFAULT_RESPONSE_HOURS,
    retention_years: row?.retention_years ?? DEFAULT_CLAIM_RETENTION_YEARS,
    updated_at: row?.updated_at.toISOString() ?? null,
  };
}

/** See ClaimLifeService.assignHandler: an active claims handler or admin, else 422. */
async function checkHandler(trx: Executor, staffId: string): Promise<void> {
  const staff = await findStaffRole(trx, staffId);
  if (staff === undefined || !staff.active || (staff.role !== 'claims' && staff.role !== 'admin'))
    throw new AppError(
      'VALIDATION_FAILED',
      'The request is invalid: /body/staff_id must name an active claims handler',
      {
        errors: [
          {
            path: '/body/staff_id',
            message: 'must name an active staff member with the claims or admin role',
          },
        ],
      },
    );
}

/** A claim with everything staff see (notes included); 404 when not the tenant's. */
async function claimOf(deps: ClaimServiceDeps, tenant: Tenant, claimId: string): Promise<ClaimView> {
  const row = await findClaim(deps.db, tenant, claimId);
  if (row === undefined) throw notFound('claim');
  return claimView(deps.db, row, true);
}

/** Thrown inside a payment's transaction when it is one already recorded: the transaction rolls back. */
class PaymentReplayed extends Error {}

/**
 * The payment `reference` names on the exposure, if any: the same payment sent again (PaymentReplayed),
 * or another one (409).
 */
async function refuseOrReplay(
  trx: Executor,
  claim: ClaimRow,
  exposureId: string,
  payment: { reference: string; amountPence: number; final: boolean; payee: string },
): Promise<void> {
  const stored = await trx
    .selectFrom('claim_payments')
    .select(['amount_pence', 'final', 'payee'])
    .where('exposure_id', '=', exposureId)
    .where('policy_id', '=', claim.policy_id)
    .where('payment_reference', '=', payment.reference)
    .executeTakeFirst();
  if (stored === undefined) return;
  if (
    stored.amount_pence === payment.amountPence &&
    stored.final === payment.final &&
    stored.payee === payment.payee
  )
    throw new PaymentReplayed();
  throw conflict(
    `payment_reference ${payment.reference} names another payment on this exposure (£${String(stored.amount_pence / 100)} to ${stored.payee}): send a new reference for a new payment`,
  );
}

type PayArguments = [
  tenant: Tenant,
  claimId: string,
  exposureId: string,
  payment: { amount: number; final: boolean; payee: string; payment_reference?: string | undefined },
];

/**
 * A partial or final payment on an exposure of an open claim: never above what its reserve leaves (409:
 * raise the reserve first; the database's check holds it too), never after the final one. A payment
 * with the `reference` of one already on the exposure is that payment sent again (its answer lost):
 * nothing is recorded and `replayed` says so; with another amount, finality or payee, 409.
 */
async function payExposure(
  deps: ClaimServiceDeps,
  ...[tenant, claimId, exposureId, payment]: PayArguments
): Promise<{ claim: ClaimView; replayed: boolean }> {
  try {
    const claim = await changeClaim(deps, tenant, claimId, 'payment', async (trx, claim, now) => {
      const exposure = await exposureOf(trx, claim, exposureId);
      const amountPence = toPence(payment.amount);
      if (payment.payment_reference !== undefined)
        await refuseOrReplay(trx, claim, exposure.id, {
          ...payment,
          reference: payment.payment_reference,
          amountPence,
        });
      if (claim.state !== 'open' && claim.state !== 'reopened')
        throw conflict(`A payment needs an open or reopened claim; this one is ${claim.state}`);
      if (exposure.settled_at !== null)
        throw conflict('The exposure is settled: no payment after its final one');
      if (exposure.paid_pence + amountPence > exposure.reserve_pence)
        throw conflict(
          `The payment would take the exposure above its reserve (£${String(exposure.reserve_pence / 100)}, £${String(exposure.paid_pence / 100)} paid): raise the reserve first`,
        );
      await trx
        .insertInto('claim_payments')
        .values({
          policy_id: claim.policy_id,
          claim_id: claim.id,
          exposure_id: exposure.id,
          company_id: claim.company_id,
          environment: claim.environment,
          amount_pence: amountPence,
          final: payment.final,
          payee: payment.payee,
          paid_at: now,
          payment_reference: payment.payment_reference ?? null,
        })
        .execute();
      return undefined;
    });
    return { claim, replayed: false };
  } catch (error) {
    // The transaction rolled back: no event, no letter, nothing recorded twice.
    if (!(error instanceof PaymentReplayed)) throw error;
    return { claim: await claimOf(deps, tenant, claimId), replayed: true };
  }
}

export function createClaimLifeService(deps: ClaimServiceDeps) {
  const change = (
    tenant: Tenant,
    claimId: string,
    what: string,
    work: (trx: Executor, claim: ClaimRow, now: Date) => Promise<ClaimRow | undefined>,
  ) => changeClaim(deps, tenant, claimId, what, work);

  return {
    /** The company's claims: drafts (new first notices) first, then by the incident's time, newest first. */
    async queue(tenant: Tenant, query: { state?: ClaimState; referred?: boolean; limit?: number }) {
      const rows = await listClaims(deps.db, tenant, {
        ...(query.state === undefined ? {} : { states: [query.state] }),
        ...(query.referred === undefined ? {} : { referred: query.referred }),
        limit: query.limit ?? 100,
      });
      return { claims: await Promise.all(rows.map((r) => claimView(deps.db, r, true))) };
    },

    /** See `claimOf`. */
    get: (tenant: Tenant, claimId: string): Promise<ClaimView> => claimOf(deps, tenant, claimId),

    /** A change of state the table allows (409 otherwise, naming the states allowed); a reason becomes a note. */
    transition: (tenant: Tenant, claimId: string, body: Transition, by: ClaimAuthor) =>
      change(tenant, claimId, `state:${body.state}`, async (trx, claim, now) => {
        const moved = await moveClaim(trx, claim, body.state, now);
        if (body.reason !== undefined) await insertNote(trx, claim, by, body.reason, now);
        return moved;
      }),

    /** A new exposure with its first reserve (pence inside), on a live claim. */
    addExposure: (tenant: Tenant, claimId: string, kind: ExposureKind, reservePounds: number) =>
      change(tenant, claimId, `exposure:${kind}`, async (trx, claim, now) => {
        requireLive(claim, 'An exposure');
        await trx
          .insertInto('claim_exposures')
          .values({
            policy_id: claim.policy_id,
            claim_id: claim.id,
            company_id: claim.company_id,
            environment: claim.environment,
            kind,
            reserve_pence: toPence(reservePounds),
            settled_at: null,
            created_at: now,
            updated_at: now,
          })
          .execute();
        return undefined;
      }),

    /** The exposure's reserve set (never below what it has paid; not once settled). */
    setReserve: (tenant: Tenant, claimId: string, exposureId: string, reservePounds: number) =>
      change(tenant, claimId, 'reserve', async (trx, claim, now) => {
        const exposure = await exposureOf(trx, claim, exposureId);
        const reservePence = toPence(reservePounds);
        if (exposure.settled_at !== null)
          throw conflict('The exposure is settled: its reserve no longer changes');
        if (reservePence < exposure.paid_pence)
          throw conflict(
            `The reserve may not be below what the exposure has paid (£${String(exposure.paid_pence / 100)})`,
          );
        await trx
          .updateTable('claim_exposures')
          .set({ reserve_pence: reservePence, updated_at: now })
          .where('id', '=', exposure.id)
          .where('policy_id', '=', claim.policy_id)
          .execute();
        return undefined;
      }),

    pay: (...args: PayArguments) => payExposure(deps, ...args),

    /** A note on the claim. */
    addNote: (tenant: Tenant, claimId: string, text: string, by: ClaimAuthor) =>
      change(tenant, claimId, 'note', async (trx, claim, now) => {
        await insertNote(trx, claim, by, text, now);
        return undefined;
      }),

    /** The claim's handler: an active staff member with the `claims` or `admin` role (422 otherwise). */
    assignHandler: (tenant: Tenant, claimId: string, staffId: string) =>
      change(tenant, claimId, 'handler', async (trx, claim) => {
        await checkHandler(trx, staffId);
        return updateClaim(trx, { id: claim.id, policyId: claim.policy_id }, { handler_staff_id: staffId });
      }),

    /** The company's claim settings (the hours a policyholder has to answer a draft). */
    settings: (tenant: Tenant) => claimSettings(deps, tenant),

    /**
     * Sets the hours a policyholder has to answer a draft (drafts opened from now on) and, when given, the
     * years an ended claim's personal data is kept (the stored value stays when absent).
     */
    async updateSettings(tenant: Tenant, body: { response_hours: number; retention_years?: number }) {
      await saveSettings(
        deps.db,
        tenant,
        { responseHours: body.response_hours, retentionYears: body.retention_years },
        deps.clock.now(),
      );
      return claimSettings(deps, tenant);
    },
  };
}
