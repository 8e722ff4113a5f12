import { useEffect, useState } from 'react';

/** The app's pages, as paths under /app/. */
export type Route = 'sign-in' | 'policy';

const BASE = '/app/';

function current(): Route {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : '';
  return path.replace(/\/+$/, '') === 'sign-in' ? 'sign-in' : 'policy';
}

export function navigate(route: Route, replace = false): void {
  const url = `${BASE}${route}`;
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

/** The route in the address bar, following back and forward. */
export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const update = () => {
      setRoute(current());
    };
    window.addEventListener('popstate', update);
    return () => {
      window.removeEventListener('popstate', update);
    };
  }, []);
  return route;
}
