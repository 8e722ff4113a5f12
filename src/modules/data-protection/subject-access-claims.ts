import { findClaimPhotoContent, listClaimsOfPolicies } from '../claims/index.ts';
import { listCrashesOfPolicies } from '../telematics/index.ts';
import { array, type ExportContext, type ExportSection } from './subject-access-sections.ts';

/*
 * The claims sections of a subject access export: the crashes their devices reported or that were
 * detected in their positions, and each claim of their policies with its crash file, exposures,
 * payments, notes and photos (bytes as base64). A claim holds up to 50 photos of 10 MiB, so its JSON
 * is written in pieces: the photos' bytes are read one photo at a time and encoded a piece at a time,
 * and the export holds one photo, never a claim's or a person's.
 */

type Claim = Awaited<ReturnType<typeof listClaimsOfPolicies>>[number];

/**
 * Bytes of a photo encoded as one piece of text: a multiple of 3, so that no piece but the last has
 * base64 padding and the pieces concatenate into the photo's base64 (768 KiB of bytes, 1 MiB of text).
 */
const PHOTO_PIECE_BYTES = 3 * 256 * 1024;

async function* once<R>(rows: Promise<R[]>): AsyncGenerator<R[]> {
  yield await rows;
}

/**
 * `"name": [ …records, one a line… ]` as `array` writes it, for records too large to be one string:
 * `write` gives each record's JSON text in pieces. Counts them.
 */
async function* streamedArray<R>(
  ctx: ExportContext,
  name: ExportSection,
  rows: Iterable<R>,
  write: (row: R) => AsyncIterable<string>,
): AsyncGenerator<string> {
  yield `,\n  ${JSON.stringify(name)}: [`;
  let first = true;
  for (const row of rows) {
    yield first ? '\n    ' : ',\n    ';
    first = false;
    yield* write(row);
    ctx.counts[name] += 1;
  }
  yield first ? ']' : '\n  ]';
}

/** An object's JSON text without its closing brace, for fields written after it. */
const opened = (record: object) => JSON.stringify(record).slice(0, -1);

/**
 * A claim's JSON text as `JSON.stringify` would write it with its photos inlined (`photos` last, each
 * photo's bytes last as `content_base64`), in pieces.
 */
async function* claimText(ctx: ExportContext, claim: Claim): AsyncGenerator<string> {
  const { company_id: _c, environment: _e, policy_id: policyId, photos, ...record } = claim;
  yield `${opened({ ...record, policy_reference: ctx.policyReference(policyId) })},"photos":[`;
  let first = true;
  for (const photo of photos) {
    const content = await findClaimPhotoContent(ctx.db, { id: photo.id, policyId });
    // Erased since the claims were listed: left out, as sections read one after another may leave out
    // a row deleted meanwhile.
    if (content === undefined) continue;
    yield `${first ? '' : ','}${opened(photo)},"content_base64":"`;
    first = false;
    const bytes = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
    for (let startByte = 0; startByte < bytes.length; startByte += PHOTO_PIECE_BYTES)
      yield bytes.toString('base64', startByte, Math.min(startByte + PHOTO_PIECE_BYTES, bytes.length));
    yield '"}';
  }
  yield ']}';
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
  yield* streamedArray(ctx, 'claims', await listClaimsOfPolicies(db, policyIds), (claim) =>
    claimText(ctx, claim),
  );
}
