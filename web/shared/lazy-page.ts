import { lazy, type ComponentType } from 'react';

/**
 * A page loaded when it is first shown, in a chunk of its own (Vite splits at each `import()`), so the
 * entry script carries only what the first page needs. `load` names the module and picks its export:
 *
 *   journeys: lazyPage(() => import('./journeys.tsx').then((m) => m.JourneysPage)),
 *
 * Render it inside `<Suspense>` (the router's page slot does), which shows a fallback while it loads.
 */
export function lazyPage<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  return lazy(async () => ({ default: await load() }));
}
