import { useEffect, useState } from 'react';
import { unwrap } from '../../../../sdk/src/client.ts';
import { formatDateTime } from '../../../shared/format.ts';
import type { Claim, Tenant } from '../api-types.ts';
import { useConsole } from '../console-context.tsx';
import { dataUrlOf } from '../data-url.ts';
import { Panel } from '../policy/panel.tsx';

type Photo = Claim['photos'][number];

/** The photos the policyholder sent, as thumbnails (HEIC, which browsers do not draw, named instead). */
export function PhotosPanel({ claim, tenant }: { readonly claim: Claim; readonly tenant: Tenant }) {
  return (
    <Panel title="Photos">
      {claim.photos.length === 0 ? (
        <p className="empty">No photos.</p>
      ) : (
        <ul className="plain claim-photos" data-testid="claim-photos">
          {claim.photos.map((photo, index) => (
            <li key={photo.photo_id}>
              <Thumbnail claim={claim} tenant={tenant} photo={photo} number={index + 1} />
            </li>
          ))}
        </ul>
      )}
    </Panel>
  );
}

function Thumbnail(props: { claim: Claim; tenant: Tenant; photo: Photo; number: number }) {
  const { api } = useConsole();
  const { claim, tenant, photo } = props;
  const [src, setSrc] = useState<string | undefined>();
  const [failed, setFailed] = useState(false);
  const drawable = photo.content_type !== 'image/heic';
  useEffect(() => {
    if (!drawable) return;
    let live = true;
    unwrap(
      api.forTenant(tenant).GET('/policys/{policy_reference}/claims/{claim_reference}/photos/{photo_id}', {
        params: {
          path: {
            policy_reference: claim.policy_reference,
            claim_reference: claim.claim_reference,
            photo_id: photo.photo_id,
          },
        },
        parseAs: 'blob',
      }),
    )
      .then((blob) => dataUrlOf(blob, photo.content_type))
      .then(
        (url) => {
          if (live) setSrc(url);
        },
        () => {
          if (live) setFailed(true);
        },
      );
    return () => {
      live = false;
    };
  }, [
    api,
    tenant,
    claim.policy_reference,
    claim.claim_reference,
    photo.photo_id,
    photo.content_type,
    drawable,
  ]);
  const caption = `Photo ${String(props.number)}, sent ${formatDateTime(photo.uploaded_at)} (${photo.content_type}, ${String(Math.ceil(photo.size_bytes / 1024))} kB)`;
  return (
    <figure>
      {!drawable ? (
        <p className="hint">HEIC photos cannot be shown in a browser.</p>
      ) : failed ? (
        <p className="hint">The photo could not be loaded.</p>
      ) : src === undefined ? (
        <p className="hint">Loading the photo…</p>
      ) : (
        <img src={src} alt={`Photo ${String(props.number)} of the claim`} className="claim-photo" />
      )}
      <figcaption className="hint">{caption}</figcaption>
    </figure>
  );
}
