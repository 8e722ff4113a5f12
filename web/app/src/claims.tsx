import { formatDateTime } from '../../shared/format.ts';
import { AddPhotos, PhotoList } from './claim-photos.tsx';
import { CLAIM_STATE_CLASS, CLAIM_STATE_LABELS, nextStep } from './claim-words.ts';
import { placeOf, useClaims, type Claim } from './claims-context.tsx';
import type { PageProps } from './page-props.ts';
import { PageLink } from './page-link.tsx';
import { usePolicy } from './policy-context.tsx';

/** States in which the service still takes photos (claims.addPhoto answers 409 on the others). */
const TAKES_PHOTOS: ReadonlySet<Claim['state']> = new Set(['draft', 'open', 'settled', 'reopened']);

const yesNo = (value: boolean | null): string => (value === null ? 'not answered' : value ? 'yes' : 'no');

/** The policy's claims, newest first after any draft: each with its state, what happens next and its photos. */
export function ClaimsPage({ session }: PageProps) {
  const { error: policyError } = usePolicy();
  const { claims, error, reload } = useClaims();
  const failed = error ?? policyError;
  return (
    <>
      <h1>Claims</h1>
      <p>
        Had an accident, or found damage to your car?{' '}
        <PageLink route="claim-report">Report an accident</PageLink>
      </p>
      {failed !== undefined ? (
        <p className="message error" role="alert">
          Your claims could not be loaded. {failed}
        </p>
      ) : claims === undefined ? (
        <p className="loading" role="status">
          Loading your claims…
        </p>
      ) : claims.length === 0 ? (
        <p className="empty">You have no claims.</p>
      ) : (
        <ul className="plain claims" data-testid="claims">
          {claims.map((claim) => (
            <ClaimCard key={claim.claim_reference} claim={claim} session={session} onChanged={reload} />
          ))}
        </ul>
      )}
    </>
  );
}

function ClaimCard(props: { claim: Claim; session: PageProps['session']; onChanged: () => void }) {
  const { claim } = props;
  const place = placeOf(claim);
  const titleId = `claim-${claim.claim_reference}`;
  return (
    <li className="panel claim" data-testid="claim">
      <h2 id={titleId}>
        {claim.source === 'crash' ? 'Crash' : 'Accident'} on {formatDateTime(claim.occurred_at)}{' '}
        <span className={`status ${CLAIM_STATE_CLASS[claim.state]}`} data-testid="claim-state">
          {CLAIM_STATE_LABELS[claim.state]}
        </span>
      </h2>
      <dl className="facts">
        <dt>Reference</dt>
        <dd className="reference">{claim.claim_reference}</dd>
        {place === undefined ? null : (
          <>
            <dt>Where</dt>
            <dd>{place}</dd>
          </>
        )}
        {claim.cover?.vehicle.reg == null ? null : (
          <>
            <dt>Car</dt>
            <dd>{claim.cover.vehicle.reg}</dd>
          </>
        )}
        {claim.state === 'draft' ? null : (
          <>
            <dt>Anyone hurt</dt>
            <dd>{yesNo(claim.injuries)}</dd>
            <dt>Other vehicles</dt>
            <dd>{yesNo(claim.other_vehicles)}</dd>
            <dt>Police attended</dt>
            <dd>{yesNo(claim.police_attended)}</dd>
          </>
        )}
      </dl>
      {claim.description === null ? null : <p className="claim-description">{claim.description}</p>}
      <h3>What happens next</h3>
      <p data-testid="claim-next">{nextStep(claim)}</p>
      {claim.state === 'draft' ? (
        <p>
          <PageLink route="claim-answer">Tell us what happened</PageLink>
        </p>
      ) : null}
      <h3>Photos</h3>
      <PhotoList photos={claim.photos} />
      {TAKES_PHOTOS.has(claim.state) && claim.state !== 'draft' ? (
        <AddPhotos session={props.session} claim={claim} onAdded={props.onChanged} />
      ) : null}
    </li>
  );
}
