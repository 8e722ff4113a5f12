import { listClaimsOfPolicies } from '../claims/index.ts';
import { listCrashesOfPolicies } from '../telematics/index.ts';
import { array, type ExportContext } from './subject-access-sections.ts';

/*
 * The claims sections of a subject access export: the crashes their devices reported or that were
 * detected in their positions, and each claim of their policies with its crash file, exposures,
 * payments, notes and photos (bytes as base64).
 */

async function* once<R>(rows: Promise<R[]>): AsyncGenerator<R[]> {
  yield await rows;
}

/** `crash_events` and `claims`. */
export async function* claimSections(ctx: ExportContext): AsyncGenerator<string> {
  const { db, policyIds } = ctx;
  yield* array(
    ctx,
    'crash_events',
    once(
      listCrashesOfPolicies(db, policyIds).then((crashes) =>
        crashes.map(({ companyId: _c, environment: _e, deviceRowId: _d, policyId, ...crash }) => ({
          ...crash,
          policy_reference: ctx.policyReference(policyId),
        })),
      ),
    ),
  );
  yield* array(
    ctx,
    'claims',
    once(
      listClaimsOfPolicies(db, policyIds).then((claims) =>
        claims.map(({ company_id: _c, environment: _e, policy_id: policyId, photos, ...claim }) => ({
          ...claim,
          policy_reference: ctx.policyReference(policyId),
          photos: photos.map(({ content, ...photo }) => ({
            ...photo,
            content_base64: Buffer.from(content).toString('base64'),
          })),
        })),
      ),
    ),
  );
}
