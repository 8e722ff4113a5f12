import {
  useEffect,
  useId,
  useLayoutEffect,
  useRef,
  useState,
  type ReactNode,
  type SyntheticEvent,
} from 'react';
import { consoleError } from './api.ts';
import { useConsole } from './console-context.tsx';
import type { Tenant } from './api-types.ts';

/**
 * A confirmation as a native modal dialog (the page behind is inert, so focus stays inside; Escape
 * cancels). `onConfirm` gets the dialog's form fields; a failure is shown in the dialog, which stays
 * open; on success the dialog closes and focus goes back to what opened it.
 */
export function ConfirmDialog(props: {
  readonly title: string;
  readonly confirmLabel: string;
  readonly children?: ReactNode;
  readonly onConfirm: (fields: FormData) => Promise<void>;
  readonly onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const { onClose } = props;
  useEffect(() => {
    const dialog = ref.current;
    const opener = document.activeElement;
    if (dialog === null) return;
    if (!dialog.open) dialog.showModal();
    return () => {
      if (dialog.open) dialog.close();
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, []);
  const submit = (event: SyntheticEvent<HTMLFormElement>) => {
    event.preventDefault();
    const fields = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    props.onConfirm(fields).then(
      () => {
        setBusy(false);
        onClose();
      },
      (caught: unknown) => {
        setBusy(false);
        setError(consoleError(caught));
      },
    );
  };
  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        if (!busy) onClose();
      }}
    >
      <form onSubmit={submit}>
        <h2 id={titleId}>{props.title}</h2>
        {props.children}
        {error === undefined ? null : (
          <p className="message error" role="alert">
            {error}
          </p>
        )}
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Working…' : props.confirmLabel}
          </button>
          <button type="button" className="secondary" onClick={onClose} disabled={busy}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}

/** A form field's text, trimmed ('' when absent or a file). */
export function textOf(fields: FormData, name: string): string {
  const value = fields.get(name);
  return typeof value === 'string' ? value.trim() : '';
}

/** A text field with its label (and a hint tied to it). */
export function Field(props: {
  readonly label: string;
  readonly name: string;
  readonly type?: string;
  readonly hint?: string;
  readonly required?: boolean;
  readonly defaultValue?: string;
  readonly autoComplete?: string;
  readonly inputMode?: 'numeric' | 'decimal' | 'email' | 'search' | 'text';
  readonly pattern?: string;
  readonly min?: string;
  readonly step?: string;
  readonly maxLength?: number;
  readonly autoFocus?: boolean;
}) {
  const id = useId();
  const { label, hint, ...input } = props;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {hint === undefined ? null : (
        <span className="hint" id={`${id}-hint`}>
          {hint}
        </span>
      )}
      <input id={id} {...input} aria-describedby={hint === undefined ? undefined : `${id}-hint`} />
    </div>
  );
}

/** A wide table that scrolls sideways on a phone: a named region a keyboard can scroll. */
export function TableBox({ label, children }: { readonly label: string; readonly children: ReactNode }) {
  return (
    <div className="table-box" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

/** A page's notice after an action, moved into focus so that it is read out; and a failure. */
export function useNotice() {
  const [notice, setNoticeText] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const noticeRef = useRef<HTMLParagraphElement>(null);
  useLayoutEffect(() => {
    if (notice !== undefined) noticeRef.current?.focus();
  }, [notice]);
  return {
    notice,
    error,
    noticeRef,
    setNotice(text: string | undefined) {
      setError(undefined);
      setNoticeText(text);
    },
    setError(text: string | undefined) {
      setNoticeText(undefined);
      setError(text);
    },
  };
}

/**
 * A per-company page's content for the company picked, or why there is none yet (still listing the
 * companies, or none on this service; a failure to list them is told above every page).
 */
export function ForTenant({ children }: { readonly children: (tenant: Tenant) => ReactNode }) {
  const { tenant, companiesLoaded } = useConsole();
  if (tenant !== undefined) return <>{children(tenant)}</>;
  if (!companiesLoaded) return <Loading what="companies" />;
  return <p className="empty">There are no companies on this service yet.</p>;
}

/** Loading, as a status that is read out. */
export function Loading({ what }: { readonly what: string }) {
  return (
    <p className="loading" role="status">
      Loading {what}…
    </p>
  );
}
