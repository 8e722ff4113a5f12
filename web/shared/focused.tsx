import { useLayoutEffect, useRef, type ReactNode } from 'react';

/** Moves focus to the page's main region when the page changes, so keyboard and reader users follow. */
export function Focused({ children }: { readonly children: ReactNode }) {
  const ref = useRef<HTMLElement>(null);
  // Before paint (Preact runs useEffect after it): what is typed next goes to the new page.
  useLayoutEffect(() => {
    ref.current?.focus();
  }, []);
  return (
    <main id="content" className="page" tabIndex={-1} ref={ref}>
      {children}
    </main>
  );
}
