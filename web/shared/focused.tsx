import { useLayoutEffect, useRef, type ReactNode } from 'react';

/**
 * Whether a page has been shown since the document loaded. The first page leaves focus at the
 * document's start, where the skip link is, as any loaded page does (readers announce its title), and
 * does not pay for the style and layout that `focus()` forces before the first paint.
 */
let pageShown = false;

/** Moves focus to the page's main region when the page changes, so keyboard and reader users follow. */
export function Focused({ children }: { readonly children: ReactNode }) {
  const ref = useRef<HTMLElement>(null);
  // Before paint (Preact runs useEffect after it): what is typed next goes to the new page.
  useLayoutEffect(() => {
    if (pageShown) ref.current?.focus();
    pageShown = true;
  }, []);
  return (
    <main id="content" className="page" tabIndex={-1} ref={ref}>
      {children}
    </main>
  );
}
