import type { MouseEvent } from 'react';
import { goTo, useLocationRoute } from '../../shared/router.ts';
import type { Environment, Role } from './api-types.ts';

/** The console's pages, as paths under /console/. */
export type Route =
  | { readonly page: 'sign-in' }
  | { readonly page: 'search'; readonly q: string }
  | {
      readonly page: 'policy';
      readonly companyReference: string;
      readonly environment: Environment;
      readonly policyReference: string;
    }
  | {
      readonly page: 'quote';
      readonly companyReference: string;
      readonly environment: Environment;
      readonly quoteReference: string;
    }
  | {
      readonly page: 'claim';
      readonly companyReference: string;
      readonly environment: Environment;
      readonly claimReference: string;
    }
  | { readonly page: NavPage };

/** The pages the navigation links to, besides search. */
export type NavPage =
  | 'claims'
  | 'failed-payments'
  | 'collections'
  | 'billing-runs'
  | 'webhooks'
  | 'devices'
  | 'score-disputes'
  | 'companies'
  | 'products'
  | 'rate-books'
  | 'referrals'
  | 'document-templates'
  | 'staff'
  | 'audit'
  | 'account';

/** The navigation, in order: each page's name, and the least role that sees it. */
export const NAV: ReadonlyArray<{
  readonly page: 'search' | NavPage;
  readonly name: string;
  readonly role: Role;
  /** Shows one company at a time (the company picker applies). */
  readonly perCompany: boolean;
}> = [
  { page: 'search', name: 'Search', role: 'viewer', perCompany: false },
  { page: 'claims', name: 'Claims', role: 'viewer', perCompany: true },
  { page: 'failed-payments', name: 'Failed payments', role: 'viewer', perCompany: true },
  { page: 'collections', name: 'Collections', role: 'viewer', perCompany: true },
  { page: 'webhooks', name: 'Webhooks', role: 'viewer', perCompany: true },
  { page: 'devices', name: 'Devices offline', role: 'viewer', perCompany: true },
  { page: 'score-disputes', name: 'Score disputes', role: 'viewer', perCompany: false },
  { page: 'audit', name: 'Audit', role: 'viewer', perCompany: false },
  { page: 'billing-runs', name: 'Billing runs', role: 'admin', perCompany: false },
  { page: 'companies', name: 'Companies', role: 'admin', perCompany: false },
  { page: 'products', name: 'Products', role: 'admin', perCompany: true },
  { page: 'rate-books', name: 'Rate books', role: 'viewer', perCompany: true },
  { page: 'referrals', name: 'Referrals', role: 'viewer', perCompany: true },
  { page: 'document-templates', name: 'Document templates', role: 'admin', perCompany: true },
  { page: 'staff', name: 'Staff', role: 'admin', perCompany: false },
  { page: 'account', name: 'My account', role: 'viewer', perCompany: false },
];

export const BASE = '/console/';

const decode = (part: string | undefined): string => {
  try {
    return decodeURIComponent(part ?? '');
  } catch {
    return '';
  }
};

function current(): Route {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : '';
  const parts = path.replace(/\/+$/, '').split('/');
  const [first = ''] = parts;
  if (first === 'sign-in') return { page: 'sign-in' };
  if (first === 'policies' && parts.length === 4) {
    const environment = parts[2] === 'production' ? 'production' : 'sandbox';
    return {
      page: 'policy',
      companyReference: decode(parts[1]),
      environment,
      policyReference: decode(parts[3]),
    };
  }
  if (first === 'quotes' && parts.length === 4) {
    const environment = parts[2] === 'production' ? 'production' : 'sandbox';
    return {
      page: 'quote',
      companyReference: decode(parts[1]),
      environment,
      quoteReference: decode(parts[3]),
    };
  }
  if (first === 'claims' && parts.length === 4) {
    const environment = parts[2] === 'production' ? 'production' : 'sandbox';
    return {
      page: 'claim',
      companyReference: decode(parts[1]),
      environment,
      claimReference: decode(parts[3]),
    };
  }
  const nav = NAV.find((item) => item.page === first && item.page !== 'search');
  if (nav !== undefined && nav.page !== 'search') return { page: nav.page };
  return { page: 'search', q: new URLSearchParams(window.location.search).get('q') ?? '' };
}

/** The path of a route (for links; opened in a new tab, they still work). */
export function hrefOf(route: Route): string {
  switch (route.page) {
    case 'search':
      return route.q === '' ? BASE : `${BASE}?q=${encodeURIComponent(route.q)}`;
    case 'policy':
      return `${BASE}policies/${encodeURIComponent(route.companyReference)}/${route.environment}/${encodeURIComponent(route.policyReference)}`;
    case 'quote':
      return `${BASE}quotes/${encodeURIComponent(route.companyReference)}/${route.environment}/${encodeURIComponent(route.quoteReference)}`;
    case 'claim':
      return `${BASE}claims/${encodeURIComponent(route.companyReference)}/${route.environment}/${encodeURIComponent(route.claimReference)}`;
    default:
      return `${BASE}${route.page}`;
  }
}

export function navigate(route: Route, replace = false): void {
  goTo(hrefOf(route), replace);
}

/** A link's click routes in the page; a modified click (new tab) is left to the browser. */
export function followLink(event: MouseEvent<HTMLAnchorElement>, route: Route): void {
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey || event.button !== 0) return;
  event.preventDefault();
  navigate(route);
}

/** The route in the address bar, following back and forward. */
export const useRoute = (): Route => useLocationRoute(current);

/** A route's identity: the page re-mounts (and takes focus) when it changes, not on every query. */
export const routeKey = (route: Route): string =>
  route.page === 'policy'
    ? `policy/${route.companyReference}/${route.environment}/${route.policyReference}`
    : route.page === 'claim'
      ? `claim/${route.companyReference}/${route.environment}/${route.claimReference}`
      : route.page === 'quote'
        ? `quote/${route.companyReference}/${route.environment}/${route.quoteReference}`
        : route.page;
