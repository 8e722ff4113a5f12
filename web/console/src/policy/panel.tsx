import { useId, type ReactNode } from 'react';
import { LoadFailed } from '../../../shared/messages.tsx';
import type { Tenant } from '../api-types.ts';
import type { Loaded } from '../console-context.tsx';
import { Loading } from '../ui.tsx';

/** One part of the policy page: a panel headed by its name. */
export function Panel({ title, children }: { readonly title: string; readonly children: ReactNode }) {
  const id = useId();
  return (
    <section aria-labelledby={id} className="panel">
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** A part's data once loaded; until then that it is loading, or why it could not be (with a retry). */
export function WhenLoaded<T>(props: {
  readonly load: Loaded<T>;
  /** What is loaded, in the plural: `journeys`. */
  readonly what: string;
  readonly children: (data: T) => ReactNode;
}) {
  const { load, what } = props;
  if (load.error !== undefined)
    return <LoadFailed what={`The ${what}`} error={load.error} onRetry={load.reload} />;
  if (load.data === undefined) return <Loading what={what} />;
  return <>{props.children(load.data)}</>;
}

/** The policy a part belongs to, and the key its loads are made under. */
export interface PolicyScope {
  readonly tenant: Tenant;
  readonly policyReference: string;
  /** `company/environment/policy`: a part loads again when it changes. */
  readonly key: string;
}
