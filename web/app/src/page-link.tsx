import type { ReactNode } from 'react';
import { hrefOf, navigate, type Route } from './router.ts';

/** A link to a page of the app: a click routes in the page; a new tab or a copied link works too. */
export function PageLink({ route, children }: { route: Route; children: ReactNode }) {
  return (
    <a
      href={hrefOf(route)}
      onClick={(event) => {
        if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
        event.preventDefault();
        navigate(route);
      }}
    >
      {children}
    </a>
  );
}
