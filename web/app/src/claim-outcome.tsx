import { useLayoutEffect, useRef } from 'react';
import { PhotoRefusals } from './claim-photos.tsx';
import { nextStep } from './claim-words.ts';
import type { Claim } from './claims-context.tsx';
import { PageLink } from './page-link.tsx';

/** What the policyholder's answer or report did: the claim as it now stands, and photos the service refused. */
export interface Outcome {
  readonly claim: Claim;
  readonly refused: readonly string[];
}

/** After the answer: what we did and what happens next, with the photos the service would not take. */
export function AnswerOutcome({ outcome }: { outcome: Outcome }) {
  const { claim, refused } = outcome;
  const heading = useRef<HTMLHeadingElement>(null);
  // Focus follows the answer, so a keyboard or screen-reader user hears what happens next.
  useLayoutEffect(() => {
    heading.current?.focus();
  }, []);
  return (
    <section className="card" aria-labelledby="outcome-title" data-testid="claim-outcome">
      <h2 id="outcome-title" tabIndex={-1} ref={heading}>
        {claim.state === 'withdrawn'
          ? 'Thank you: we have closed this as a false alarm'
          : 'Thank you: your claim is open'}
      </h2>
      <p role="status">{nextStep(claim)}</p>
      {claim.state === 'withdrawn' ? null : (
        <p>
          Your claim reference is <span className="reference">{claim.claim_reference}</span>.{' '}
          {claim.photos.length === 0
            ? 'You can add photos on the claims page.'
            : `We have your ${String(claim.photos.length)} photo${claim.photos.length === 1 ? '' : 's'}; you can add more on the claims page.`}
        </p>
      )}
      <PhotoRefusals refused={refused} />
      <p>
        <PageLink route="claims">See your claims</PageLink>
      </p>
    </section>
  );
}
