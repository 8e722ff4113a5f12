import { goTo, useLocationRoute } from '../../shared/router.ts';

/** The app's pages, as paths under /app/. */
export type Route =
  | 'sign-in'
  | 'quote'
  | 'policy'
  | 'journeys'
  | 'scores'
  | 'usage'
  | 'statements'
  | 'documents'
  | 'cards'
  | 'direct-debit'
  | 'device'
  | 'claims'
  | 'claim-answer'
  | 'claim-report';

/** Pages reached from another page rather than the navigation, with the page the navigation marks for them. */
export const SUBPAGES: Readonly<Partial<Record<Route, Exclude<Route, 'sign-in' | 'quote'>>>> = {
  'direct-debit': 'cards',
  'claim-answer': 'claims',
  'claim-report': 'claims',
};

/** The signed-in pages, in the order the navigation shows them, with their names. */
export const PAGES: ReadonlyArray<{
  readonly route: Exclude<Route, 'sign-in' | 'quote' | 'direct-debit' | 'claim-answer' | 'claim-report'>;
  readonly name: string;
}> = [
  { route: 'policy', name: 'My policy' },
  { route: 'journeys', name: 'Journeys' },
  { route: 'scores', name: 'Driving score' },
  { route: 'usage', name: 'Usage' },
  { route: 'statements', name: 'Statements' },
  { route: 'documents', name: 'Documents' },
  { route: 'cards', name: 'Payment methods' },
  { route: 'device', name: 'Device' },
  { route: 'claims', name: 'Claims' },
];

/** The subpages' names, for the window's title. */
export const SUBPAGE_NAMES: Readonly<Partial<Record<Route, string>>> = {
  'direct-debit': 'Set up a Direct Debit',
  'claim-answer': 'Tell us what happened',
  'claim-report': 'Report an accident',
};

const BASE = '/app/';

function current(): Route {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : '';
  const name = path.replace(/\/+$/, '');
  if (name === 'sign-in') return 'sign-in';
  if (name === 'quote') return 'quote';
  const subpage = (Object.keys(SUBPAGES) as Route[]).find((route) => route === name);
  if (subpage !== undefined) return subpage;
  return PAGES.find((page) => page.route === name)?.route ?? 'policy';
}

/** Goes to a page, keeping the query (`?demo`) so a mode survives navigation. */
export function navigate(route: Route, replace = false): void {
  goTo(`${BASE}${route}${window.location.search}`, replace);
}

/** The href of a page, for links (opened in a new tab, they still work). */
export const hrefOf = (route: Route): string => `${BASE}${route}${window.location.search}`;

/** The route in the address bar, following back and forward. */
export const useRoute = (): Route => useLocationRoute(current);
