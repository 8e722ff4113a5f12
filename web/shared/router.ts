import { useEffect, useState } from 'react';

/**
 * The route in the address bar, as `read` makes it of `window.location`, following back and forward and
 * every `goTo`. `read` is a module's function (the same one on every render).
 */
export function useLocationRoute<T>(read: () => T): T {
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const update = () => {
      setRoute(read());
    };
    window.addEventListener('popstate', update);
    return () => {
      window.removeEventListener('popstate', update);
    };
  }, [read]);
  return route;
}

/** Goes to `url` in the page (a new history entry, or in place of the current one) and tells the routes. */
export function goTo(url: string, replace = false): void {
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.dispatchEvent(new PopStateEvent('popstate'));
}
