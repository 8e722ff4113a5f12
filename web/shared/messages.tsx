import type { Ref } from 'react';

/**
 * A page's messages: a failure (an alert, read out at once) and a notice after an action (a status,
 * focusable so that focus can be moved to it and it is read out).
 */
export function PageMessages(props: {
  error: string | undefined;
  notice: string | undefined;
  noticeRef: Ref<HTMLParagraphElement>;
}) {
  return (
    <>
      {props.error !== undefined ? (
        <p className="message error" role="alert">
          {props.error}
        </p>
      ) : null}
      {props.notice !== undefined ? (
        <p className="message notice" role="status" ref={props.noticeRef} tabIndex={-1}>
          {props.notice}
        </p>
      ) : null}
    </>
  );
}

/** What could not be loaded, why (a sentence), and a way to try again. */
export function LoadFailed(props: { what: string; error: string; onRetry: () => void }) {
  return (
    <div className="message error" role="alert">
      <p>
        {props.what} could not be loaded. {props.error}
      </p>
      <button type="button" className="link-button" onClick={props.onRetry}>
        Try again
      </button>
    </div>
  );
}
