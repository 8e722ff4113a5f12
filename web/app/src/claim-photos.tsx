import { useId, useState, type ChangeEvent } from 'react';
import { MilepostError, unwrap, type Session } from '../../../sdk/src/index.ts';
import { formatDateTime } from '../../shared/format.ts';
import { sizeOf } from './claim-words.ts';
import type { Claim } from './claims-context.tsx';
import { humanError } from './errors.ts';

/** The service's limit on a photo (claims rules/photos.ts: 10 MiB). */
export const MAX_PHOTO_BYTES = 10 * 1024 * 1024;
/** The types the service keeps, judged there by the bytes; here only to offer the right files. */
const PHOTO_ACCEPT = 'image/jpeg,image/png,image/heic,image/webp,.jpg,.jpeg,.png,.heic,.webp';

/** Why a file was refused, in words: the service's 422 (type or size by content) or 413 (far too large). */
export function photoRefusal(name: string, error: unknown): string {
  if (error instanceof MilepostError && (error.status === 422 || error.status === 413)) {
    const reason = error.errors[0]?.message ?? error.message;
    if (error.status === 413 || /at most/.test(reason))
      return `${name} was not added: it is larger than 10 MB. Please choose a smaller photo.`;
    return `${name} was not added: it is not a photo we can keep. Please choose a JPEG, PNG, HEIC or WebP image.`;
  }
  return `${name} was not added. ${humanError(error)}`;
}

/** Sends one photo's bytes as the body (the service judges the type by them); the claim as it now stands. */
export async function sendPhoto(session: Session, claim: Claim, file: File): Promise<Claim> {
  return unwrap(
    session.client.POST('/policys/{policy_reference}/claims/{claim_reference}/photos', {
      params: { path: { policy_reference: claim.policy_reference, claim_reference: claim.claim_reference } },
      body: file,
      bodySerializer: (body: unknown) => body as Blob,
      headers: { 'content-type': file.type === '' ? 'application/octet-stream' : file.type },
    }),
  );
}

/** Files larger than the service takes, refused before they are sent (each a sentence). */
export function oversized(files: readonly File[]): string[] {
  return files
    .filter((file) => file.size > MAX_PHOTO_BYTES)
    .map((file) => `${file.name} is larger than 10 MB: it will not be sent. Please choose a smaller photo.`);
}

/** A file input for photos, with what is chosen and why any will not be sent. */
export function PhotoPicker(props: { files: readonly File[]; onChange: (files: File[]) => void }) {
  const id = useId();
  const tooBig = oversized(props.files);
  return (
    <div className="field">
      <label htmlFor={`${id}-photos`}>Photos (optional)</label>
      <span className="hint" id={`${id}-photos-hint`}>
        Of the damage, the place and the other vehicles: JPEG, PNG, HEIC or WebP, up to 10 MB each.
      </span>
      <input
        id={`${id}-photos`}
        type="file"
        multiple
        accept={PHOTO_ACCEPT}
        aria-describedby={`${id}-photos-hint`}
        onChange={(event: ChangeEvent<HTMLInputElement>) => {
          props.onChange([...(event.target.files ?? [])]);
        }}
      />
      <Refusals lines={tooBig} testId="photo-too-big" />
    </div>
  );
}

/**
 * Sends each photo in turn (one request each, so one refused photo does not lose the others); the claim
 * after the last one taken and a sentence for each refused.
 */
export async function sendPhotos(
  session: Session,
  claim: Claim,
  files: readonly File[],
): Promise<{ claim: Claim; refused: string[] }> {
  let latest = claim;
  const refused: string[] = [];
  for (const file of files) {
    if (file.size > MAX_PHOTO_BYTES) continue;
    try {
      latest = await sendPhoto(session, latest, file);
    } catch (caught) {
      refused.push(photoRefusal(file.name, caught));
    }
  }
  return { claim: latest, refused };
}

/** The claim's photos as a list: type, size and when each came. */
export function PhotoList({ photos }: { photos: Claim['photos'] }) {
  if (photos.length === 0) return <p className="hint">No photos yet.</p>;
  return (
    <ul className="claim-photos" data-testid="claim-photos">
      {photos.map((photo, index) => (
        <li key={photo.photo_id}>
          Photo {index + 1}: {photo.content_type.replace('image/', '').toUpperCase()},{' '}
          {sizeOf(photo.size_bytes)}, added {formatDateTime(photo.uploaded_at)}
        </li>
      ))}
    </ul>
  );
}

/** Adds photos to a live claim from its card on the claims page. */
export function AddPhotos(props: { session: Session; claim: Claim; onAdded: () => void }) {
  const [files, setFiles] = useState<File[]>([]);
  const [busy, setBusy] = useState(false);
  const [refused, setRefused] = useState<string[]>([]);
  const [done, setDone] = useState<string | undefined>();
  const send = async () => {
    setBusy(true);
    setDone(undefined);
    const sent = await sendPhotos(props.session, props.claim, files);
    setRefused(sent.refused);
    const added = sent.claim.photos.length - props.claim.photos.length;
    setDone(added > 0 ? `${String(added)} photo${added === 1 ? '' : 's'} added.` : undefined);
    setBusy(false);
    if (added > 0) props.onAdded();
  };
  return (
    <form
      className="add-photos"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      <PhotoPicker files={files} onChange={setFiles} />
      <PhotoRefusals refused={refused} />
      <button type="submit" className="secondary" disabled={busy || files.length === 0}>
        {busy ? 'Sending…' : 'Add photos'}
      </button>
      <p role="status">{done}</p>
    </form>
  );
}

/** The photos the service refused, each with its reason. */
export function PhotoRefusals({ refused }: { refused: readonly string[] }) {
  return <Refusals lines={refused} testId="photo-refusals" />;
}

/** Sentences about photos not taken, as one alert. */
function Refusals({ lines, testId }: { lines: readonly string[]; testId: string }) {
  if (lines.length === 0) return null;
  return (
    <div className="message error" role="alert" data-testid={testId}>
      <ul className="plain">
        {lines.map((line) => (
          <li key={line}>{line}</li>
        ))}
      </ul>
    </div>
  );
}
