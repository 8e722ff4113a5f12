import { useLayoutEffect, useRef, useState, type SyntheticEvent } from 'react';
import { unwrap } from '../../../sdk/src/index.ts';
import { formatDateTime } from '../../shared/format.ts';
import { AnswerOutcome, type Outcome } from './claim-outcome.tsx';
import { PhotoPicker, sendPhotos } from './claim-photos.tsx';
import { AccidentQuestions, checkAnswers, NO_ANSWERS, settle, type Answers } from './claim-questions.tsx';
import { draftOf, placeOf, useClaims, type Claim } from './claims-context.tsx';
import { humanError } from './errors.ts';
import type { PageProps } from './page-props.ts';
import { PageLink } from './page-link.tsx';

/**
 * "I've had an accident" or "False alarm" for the crash's draft (the newest, as the banner names it): the
 * questions and photos, then what happens next. NOTE: a draft left unanswered by `respond_by` goes to the
 * claims team, so the page says when that is, before and after.
 */
export function ClaimAnswerPage({ session }: PageProps) {
  const { claims, error: loadError, reload } = useClaims();
  const [outcome, setOutcome] = useState<Outcome | undefined>();
  const draft = draftOf(claims);
  const shown = outcome?.claim ?? draft;
  return (
    <>
      <h1>Tell us what happened</h1>
      {outcome !== undefined ? (
        <AnswerOutcome outcome={outcome} />
      ) : loadError !== undefined ? (
        <p className="message error" role="alert">
          Your claims could not be loaded. {loadError}
        </p>
      ) : claims === undefined ? (
        <p className="loading" role="status">
          Loading…
        </p>
      ) : shown === undefined ? (
        <p>
          There is nothing to answer: we have not detected a crash you have yet to tell us about.{' '}
          <PageLink route="claims">See your claims</PageLink>
        </p>
      ) : (
        <AnswerForms
          session={session}
          draft={shown}
          onAnswered={(answered) => {
            setOutcome(answered);
            reload();
          }}
        />
      )}
    </>
  );
}

function CrashSummary({ draft }: { draft: Claim }) {
  const place = placeOf(draft);
  return (
    <div className="card" data-testid="crash-summary">
      <p>
        Your car’s device reported a sudden stop on {formatDateTime(draft.occurred_at)}
        {place === undefined ? '' : ` near ${place}`}
        {draft.speed_kmh === null ? '' : `, at about ${String(Math.round(draft.speed_kmh))} km/h`}.
      </p>
      {draft.respond_by === null ? null : (
        <p>
          Please answer by <strong>{formatDateTime(draft.respond_by)}</strong>. If we have not heard from you
          by then, our claims team will contact you to check you are safe.
        </p>
      )}
      <p className="hint">If anyone is hurt or in danger, call 999 first.</p>
    </div>
  );
}

function AnswerForms(props: {
  session: PageProps['session'];
  draft: Claim;
  onAnswered: (outcome: Outcome) => void;
}) {
  const { session, draft, onAnswered } = props;
  const [answers, setAnswers] = useState<Answers>(NO_ANSWERS);
  const [problems, setProblems] = useState<Partial<Record<keyof Answers, string>>>({});
  const [files, setFiles] = useState<File[]>([]);
  const [busy, setBusy] = useState<'confirm' | 'cancel' | undefined>();
  const [error, setError] = useState<string | undefined>();
  const summary = useRef<HTMLParagraphElement>(null);
  useLayoutEffect(() => {
    if (error !== undefined) summary.current?.focus();
  }, [error]);
  const path = { policy_reference: draft.policy_reference, claim_reference: draft.claim_reference };

  const confirm = async (event: SyntheticEvent<HTMLFormElement>) => {
    event.preventDefault();
    const checked = checkAnswers(answers, false);
    if (!checked.ok) {
      setProblems(checked.problems);
      setError('Please answer the questions marked below.');
      return;
    }
    setProblems({});
    setError(undefined);
    setBusy('confirm');
    try {
      const confirmed = await unwrap(
        session.client.POST('/policys/{policy_reference}/claims/{claim_reference}/confirm', {
          params: { path },
          body: checked.body,
        }),
      );
      onAnswered(await sendPhotos(session, confirmed, files));
    } catch (caught) {
      setError(humanError(caught));
    } finally {
      setBusy(undefined);
    }
  };

  const cancel = async () => {
    setError(undefined);
    setBusy('cancel');
    try {
      const withdrawn = await unwrap(
        session.client.POST('/policys/{policy_reference}/claims/{claim_reference}/cancel', {
          params: { path },
        }),
      );
      onAnswered({ claim: withdrawn, refused: [] });
    } catch (caught) {
      setError(humanError(caught));
    } finally {
      setBusy(undefined);
    }
  };

  return (
    <>
      <CrashSummary draft={draft} />
      {error === undefined ? null : (
        <p className="message error" role="alert" tabIndex={-1} ref={summary}>
          {error}
        </p>
      )}
      <section className="card" aria-labelledby="accident-title">
        <h2 id="accident-title">I’ve had an accident</h2>
        <form noValidate onSubmit={(event) => void confirm(event)}>
          <AccidentQuestions
            answers={answers}
            problems={problems}
            descriptionRequired={false}
            onChange={(next) => {
              setProblems(settle(problems, answers, next));
              setAnswers(next);
            }}
          />
          <PhotoPicker files={files} onChange={setFiles} />
          <button type="submit" className="primary" disabled={busy !== undefined}>
            {busy === 'confirm' ? 'Sending…' : 'Send: I’ve had an accident'}
          </button>
        </form>
      </section>
      <section className="card" aria-labelledby="false-alarm-title">
        <h2 id="false-alarm-title">False alarm</h2>
        <p>If nothing happened (a dropped phone, a pothole, a hard stop), tell us and we will close this.</p>
        <button
          type="button"
          className="secondary"
          disabled={busy !== undefined}
          onClick={() => {
            void cancel();
          }}
        >
          {busy === 'cancel' ? 'Sending…' : 'It was a false alarm'}
        </button>
      </section>
    </>
  );
}
