import { Suspense, useCallback, useEffect, useMemo, useState, type CSSProperties } from 'react';
import { unwrap } from '../../../sdk/src/client.ts';
import { Focused } from '../../shared/focused.tsx';
import { lazyPage } from '../../shared/lazy-page.ts';
import { createConsoleApi, consoleError, type ConsoleApi } from './api.ts';
import type { Company, Environment, StaffSession } from './api-types.ts';
import { allows, ConsoleContext, useConsole, type ConsoleState } from './console-context.tsx';
import { followLink, hrefOf, NAV, navigate, routeKey, useRoute, type Route } from './router.ts';
import { loadConfig, type ConsoleConfig } from './config.ts';
import { takeEarlySession } from './early-request.ts';
import { SearchPage } from './search.tsx';

/*
 * The pages. Search, where the console opens, is in its first chunk; every other page is a chunk of
 * its own, loaded when first shown (`lazyPage`, rendered in the Suspense around the page slot). A new
 * page is added here the same way, with its route in router.ts and its case in `Page`.
 */
const SignInPage = lazyPage(() => import('./sign-in.tsx').then((m) => m.SignInPage));
const PolicyPage = lazyPage(() => import('./policy/policy-page.tsx').then((m) => m.PolicyPage));
const ClaimsPage = lazyPage(() => import('./claims/claims-queue.tsx').then((m) => m.ClaimsPage));
const ClaimPage = lazyPage(() => import('./claims/claim-page.tsx').then((m) => m.ClaimPage));
const FailedPaymentsPage = lazyPage(() => import('./failed-payments.tsx').then((m) => m.FailedPaymentsPage));
const CollectionsPage = lazyPage(() => import('./collections.tsx').then((m) => m.CollectionsPage));
const BillingRunsPage = lazyPage(() => import('./billing-runs.tsx').then((m) => m.BillingRunsPage));
const WebhooksPage = lazyPage(() => import('./webhooks.tsx').then((m) => m.WebhooksPage));
const DevicesPage = lazyPage(() => import('./devices.tsx').then((m) => m.DevicesPage));
const ScoreDisputesPage = lazyPage(() => import('./score-disputes.tsx').then((m) => m.ScoreDisputesPage));
const CompaniesPage = lazyPage(() => import('./companies.tsx').then((m) => m.CompaniesPage));
const ProductsPage = lazyPage(() => import('./products.tsx').then((m) => m.ProductsPage));
const RateBooksPage = lazyPage(() => import('./rate-books.tsx').then((m) => m.RateBooksPage));
const ReferralsPage = lazyPage(() => import('./referrals.tsx').then((m) => m.ReferralsPage));
const QuotePage = lazyPage(() => import('./quote-page.tsx').then((m) => m.QuotePage));
const DocumentTemplatesPage = lazyPage(() =>
  import('./document-templates.tsx').then((m) => m.DocumentTemplatesPage),
);
const StaffPage = lazyPage(() => import('./staff.tsx').then((m) => m.StaffPage));
const AuditPage = lazyPage(() => import('./audit.tsx').then((m) => m.AuditPage));
const AccountPage = lazyPage(() => import('./account.tsx').then((m) => m.AccountPage));

/** What a page's slot shows while its chunk loads. */
const PAGE_LOADING = (
  <p className="loading" role="status">
    Loading…
  </p>
);

const TENANT_KEY = 'milepost.console.tenant';
/** The console's own colours (the app's stylesheet reads them), apart from any insurer's brand. */
const CONSOLE_COLOURS = { '--brand': '#1f3a5f', '--on-brand': '#ffffff' } as CSSProperties;

/** `initialConfig`: the settings the page carried (main.tsx); undefined: asked of config.json. */
export function ConsoleApp({ initialConfig }: { initialConfig: ConsoleConfig | undefined }) {
  const [config, setConfig] = useState<ConsoleConfig | 'failed' | undefined>(initialConfig);
  useEffect(() => {
    if (initialConfig !== undefined) return;
    loadConfig().then(setConfig, () => {
      setConfig('failed');
    });
  }, [initialConfig]);
  if (config === undefined) return <p className="loading">Loading…</p>;
  if (config === 'failed')
    return (
      <main className="page">
        <h1>The console cannot start</h1>
        <p role="alert">Its settings could not be loaded. Please reload the page, or try again later.</p>
      </main>
    );
  return <Console config={config} />;
}

function Console({ config }: { config: ConsoleConfig }) {
  const route = useRoute();
  // The session index.html's start script asked for, where it has come: the first render shows it.
  const [early] = useState(() => takeEarlySession() as StaffSession | undefined);
  // undefined: not known yet (the session is being read); null: signed out.
  const [session, setSession] = useState<StaffSession | null | undefined>(early);
  const [notice, setNotice] = useState<string | undefined>();
  const api = useMemo(() => {
    const made = createConsoleApi(() => {
      setSession(null);
      setNotice('Your session has ended. Please sign in again.');
    });
    made.setCsrfToken(early?.csrf_token);
    return made;
  }, [early]);
  const changeSession = useCallback(
    (next: StaffSession | null) => {
      api.setCsrfToken(next?.csrf_token);
      setSession(next);
    },
    [api],
  );
  useEffect(() => {
    if (early !== undefined) return;
    unwrap(api.client.GET('/staff/session')).then(changeSession, () => {
      changeSession(null);
    });
  }, [api, changeSession, early]);

  const active = session?.stage === 'active';
  useEffect(() => {
    if (session === undefined) return;
    if (!active && route.page !== 'sign-in') navigate({ page: 'sign-in' }, true);
    if (active && route.page === 'sign-in') navigate({ page: 'search', q: '' }, true);
  }, [session, active, route.page]);
  useEffect(() => {
    document.title = `${titleOf(route)} · ${config.brand_name} staff console`;
  }, [route, config.brand_name]);

  return (
    <div className="shell console" style={CONSOLE_COLOURS}>
      <a className="skip" href="#content">
        Skip to content
      </a>
      {session === undefined ? (
        <main id="content" className="page">
          <p className="loading" role="status">
            Loading…
          </p>
        </main>
      ) : active && route.page !== 'sign-in' ? (
        <SignedIn
          api={api}
          config={config}
          session={session}
          route={route}
          onSignedOut={(message) => {
            changeSession(null);
            setNotice(message);
          }}
        />
      ) : (
        <>
          <header className="bar">
            <span className="brand">{config.brand_name}</span>
            <span className="tag">Staff</span>
          </header>
          <Focused key="sign-in">
            <Suspense fallback={PAGE_LOADING}>
              <SignInPage
                api={api}
                session={session}
                notice={notice}
                onSession={(next) => {
                  setNotice(undefined);
                  changeSession(next);
                }}
              />
            </Suspense>
          </Focused>
        </>
      )}
    </div>
  );
}

/** Every company, a page of 100 at a time. */
async function listCompanies(api: ConsoleApi): Promise<Company[]> {
  const all: Company[] = [];
  let after: string | undefined;
  do {
    const page = await unwrap(
      api.client.GET('/admin/companies', {
        params: { query: { limit: 100, ...(after === undefined ? {} : { after }) } },
      }),
    );
    all.push(...page.companies);
    after = page.next_cursor ?? undefined;
  } while (after !== undefined);
  return all;
}

function titleOf(route: Route): string {
  if (route.page === 'sign-in') return 'Sign in';
  if (route.page === 'policy') return `Policy ${route.policyReference}`;
  if (route.page === 'claim') return `Claim ${route.claimReference}`;
  if (route.page === 'quote') return `Quote ${route.quoteReference}`;
  return NAV.find((item) => item.page === route.page)?.name ?? 'Search';
}

function SignedIn(props: {
  api: ConsoleApi;
  config: ConsoleConfig;
  session: StaffSession;
  route: Route;
  onSignedOut: (message: string) => void;
}) {
  const { api, config, session, route } = props;
  const [companies, setCompanies] = useState<readonly Company[] | undefined>();
  const [companiesError, setCompaniesError] = useState<string | undefined>();
  const [generation, setGeneration] = useState(0);
  const [chosen, setChosen] = useState<{ companyReference: string; environment: Environment } | undefined>(
    () => {
      try {
        const kept = JSON.parse(localStorage.getItem(TENANT_KEY) ?? 'null') as {
          companyReference: string;
          environment: Environment;
        } | null;
        return kept ?? undefined;
      } catch {
        return undefined;
      }
    },
  );
  useEffect(() => {
    let live = true;
    listCompanies(api).then(
      (all) => {
        if (!live) return;
        setCompanies(all);
        setCompaniesError(undefined);
      },
      (caught: unknown) => {
        if (live) setCompaniesError(consoleError(caught));
      },
    );
    return () => {
      live = false;
    };
  }, [api, generation]);

  const tenant = useMemo(() => {
    const company =
      companies?.find((c) => c.company_reference === chosen?.companyReference) ?? companies?.[0];
    return company === undefined
      ? undefined
      : { company, environment: chosen?.environment ?? config.environment_default };
  }, [companies, chosen, config.environment_default]);

  const state: ConsoleState = useMemo(
    () => ({
      api,
      config,
      session,
      companies: companies ?? [],
      companiesLoaded: companies !== undefined,
      tenant,
      setTenant(companyReference, environment) {
        const next = { companyReference, environment };
        localStorage.setItem(TENANT_KEY, JSON.stringify(next));
        setChosen(next);
      },
      reloadCompanies() {
        setGeneration((n) => n + 1);
      },
    }),
    [api, config, session, companies, tenant],
  );
  const nav = NAV.find((item) => item.page === route.page);
  return (
    <ConsoleContext.Provider value={state}>
      <header className="bar">
        <span className="brand">{config.brand_name}</span>
        <span className="tag">Staff</span>
        <span className="who" data-testid="signed-in-as">
          {session.staff.email} <span className="role">({session.staff.role})</span>
        </span>
        <button
          type="button"
          className="link-button"
          onClick={() => {
            unwrap(api.client.DELETE('/staff/session')).then(
              () => {
                props.onSignedOut('You have signed out.');
              },
              () => {
                props.onSignedOut('You have signed out.');
              },
            );
          }}
        >
          Sign out
        </button>
      </header>
      <Navigation route={route} />
      {nav?.perCompany === true ? <TenantPicker /> : null}
      {companiesError === undefined ? null : (
        <p className="message error page-wide" role="alert">
          The companies could not be loaded. {companiesError}
        </p>
      )}
      <Focused key={routeKey(route)}>
        <Suspense fallback={PAGE_LOADING}>
          <Page route={route} onSignedOut={props.onSignedOut} />
        </Suspense>
      </Focused>
    </ConsoleContext.Provider>
  );
}

function Page({ route, onSignedOut }: { route: Route; onSignedOut: (message: string) => void }) {
  const { session } = useConsole();
  const nav = NAV.find((item) => item.page === route.page);
  if (nav !== undefined && !allows(session.staff.role, nav.role))
    return (
      <>
        <h1>{nav.name}</h1>
        <p className="message error" role="alert">
          This page is for the {nav.role} role; you are signed in as {session.staff.role}.
        </p>
      </>
    );
  switch (route.page) {
    case 'sign-in':
    case 'search':
      return <SearchPage q={route.page === 'search' ? route.q : ''} />;
    case 'policy':
      return <PolicyPage {...route} />;
    case 'claims':
      return <ClaimsPage />;
    case 'claim':
      return <ClaimPage {...route} />;
    case 'failed-payments':
      return <FailedPaymentsPage />;
    case 'collections':
      return <CollectionsPage />;
    case 'billing-runs':
      return <BillingRunsPage />;
    case 'webhooks':
      return <WebhooksPage />;
    case 'devices':
      return <DevicesPage />;
    case 'score-disputes':
      return <ScoreDisputesPage />;
    case 'companies':
      return <CompaniesPage />;
    case 'products':
      return <ProductsPage />;
    case 'rate-books':
      return <RateBooksPage />;
    case 'referrals':
      return <ReferralsPage />;
    case 'quote':
      return <QuotePage {...route} />;
    case 'document-templates':
      return <DocumentTemplatesPage />;
    case 'staff':
      return <StaffPage />;
    case 'audit':
      return <AuditPage />;
    case 'account':
      return <AccountPage onSignedOut={onSignedOut} />;
  }
}

/** The pages the role may open, as links (a click routes in the page; a new tab works too). */
function Navigation({ route }: { route: Route }) {
  const { session } = useConsole();
  return (
    <nav className="tabs" aria-label="Console pages">
      <ul>
        {NAV.filter((item) => allows(session.staff.role, item.role)).map((item) => {
          const target: Route = item.page === 'search' ? { page: 'search', q: '' } : { page: item.page };
          return (
            <li key={item.page}>
              <a
                href={hrefOf(target)}
                aria-current={item.page === route.page ? 'page' : undefined}
                onClick={(event) => {
                  followLink(event, target);
                }}
              >
                {item.name}
              </a>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}

/** The company and environment the per-company pages show. */
function TenantPicker() {
  const { companies, tenant, setTenant } = useConsole();
  if (tenant === undefined) return null;
  return (
    <form
      className="tenant"
      aria-label="Company and environment"
      onSubmit={(event) => {
        event.preventDefault();
      }}
    >
      <div className="field">
        <label htmlFor="tenant-company">Company</label>
        <select
          id="tenant-company"
          value={tenant.company.company_reference}
          onChange={(event) => {
            setTenant(event.target.value, tenant.environment);
          }}
        >
          {companies.map((company) => (
            <option key={company.company_reference} value={company.company_reference}>
              {company.name} ({company.company_reference})
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="tenant-environment">Environment</label>
        <select
          id="tenant-environment"
          value={tenant.environment}
          onChange={(event) => {
            setTenant(
              tenant.company.company_reference,
              event.target.value === 'production' ? 'production' : 'sandbox',
            );
          }}
        >
          <option value="sandbox">Sandbox</option>
          <option value="production">Production</option>
        </select>
      </div>
    </form>
  );
}
