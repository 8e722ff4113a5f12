import { Suspense, useEffect, useMemo, useState, type ComponentType, type CSSProperties } from 'react';
import { Focused } from '../../shared/focused.tsx';
import { lazyPage } from '../../shared/lazy-page.ts';
import type { Session } from '../../../sdk/src/index.ts';
import { effectiveConfig, loadConfig, textOn, type AppConfig } from './config.ts';
import { DEMO_PASSWORD, DEMO_USERNAME, leaveDemoHref } from './demo.ts';
import type { PageProps } from './page-props.ts';
import { ClaimsProvider, CrashBanner } from './claims-context.tsx';
import { PolicyProvider } from './policy-context.tsx';
import { PolicyPage } from './policy.tsx';
import { hrefOf, navigate, PAGES, SUBPAGE_NAMES, SUBPAGES, useRoute, type Route } from './router.ts';
import { createAppSession } from './session.ts';

/*
 * Each signed-in page's component. The policy page, where a signed-in visit lands, is in the app's
 * first chunk; every other page is a chunk of its own, loaded when first shown (`lazyPage`, rendered
 * in the Suspense below). A new page is added here the same way, with its route in router.ts.
 */
const PAGE_COMPONENTS: Readonly<Record<Exclude<Route, 'sign-in' | 'quote'>, ComponentType<PageProps>>> = {
  policy: PolicyPage,
  journeys: lazyPage(() => import('./journeys.tsx').then((m) => m.JourneysPage)),
  scores: lazyPage(() => import('./scores.tsx').then((m) => m.ScoresPage)),
  usage: lazyPage(() => import('./usage.tsx').then((m) => m.UsagePage)),
  statements: lazyPage(() => import('./statements.tsx').then((m) => m.StatementsPage)),
  documents: lazyPage(() => import('./documents.tsx').then((m) => m.DocumentsPage)),
  cards: lazyPage(() => import('./cards.tsx').then((m) => m.CardsPage)),
  'direct-debit': lazyPage(() => import('./direct-debit.tsx').then((m) => m.DirectDebitPage)),
  device: lazyPage(() => import('./device.tsx').then((m) => m.DevicePage)),
  claims: lazyPage(() => import('./claims.tsx').then((m) => m.ClaimsPage)),
  'claim-answer': lazyPage(() => import('./claim-answer.tsx').then((m) => m.ClaimAnswerPage)),
  'claim-report': lazyPage(() => import('./claim-report.tsx').then((m) => m.ClaimReportPage)),
};
/** Signed-in visits never need the sign-in forms: they load when shown. */
const SignInPage = lazyPage(() => import('./sign-in.tsx').then((m) => m.SignInPage));
/** The public quote and buy (no sign-in), a chunk of its own. */
const QuotePage = lazyPage(() => import('./quote.tsx').then((m) => m.QuotePage));

/** The titles of the pages shown without signing in. */
const PUBLIC_TITLES: Readonly<Partial<Record<Route, string>>> = {
  'sign-in': 'Sign in',
  quote: 'Get a quote',
};

/** What a page's slot shows while its chunk loads. */
const PAGE_LOADING = (
  <p className="loading" role="status">
    Loading…
  </p>
);

/** `initialConfig`: the settings the page carried (main.tsx); undefined: asked of config.json. */
export function App({ initialConfig }: { initialConfig: AppConfig | undefined }) {
  const [config, setConfig] = useState<AppConfig | 'failed' | undefined>(initialConfig);
  useEffect(() => {
    if (initialConfig !== undefined) return;
    loadConfig().then(
      (loaded) => {
        setConfig(effectiveConfig(loaded));
      },
      () => {
        setConfig('failed');
      },
    );
  }, [initialConfig]);
  if (config === undefined) return <p className="loading">Loading…</p>;
  if (config === 'failed')
    return (
      <main className="page">
        <h1>This app cannot start</h1>
        <p role="alert">Its settings could not be loaded. Please reload the page, or try again later.</p>
      </main>
    );
  return <Signed config={config} />;
}

function Signed({ config }: { config: AppConfig }) {
  const route = useRoute();
  const [notice, setNotice] = useState<string | undefined>();
  const demo = config.environment === 'mock';
  // The demo signs itself in on opening; after a sign-out, any username and password sign in again.
  const [opening, setOpening] = useState(demo);
  const session: Session = useMemo(
    () =>
      createAppSession(config, () => {
        setNotice('Your session has ended. Please sign in again.');
        setSignedIn(false);
        navigate('sign-in', true);
      }),
    [config],
  );
  // Known from the kept tokens at once, so that a signed-in visit renders its page (and asks for the
  // policy) on the first render, without passing through the sign-in page.
  const [signedIn, setSignedIn] = useState(() => !demo && session.isSignedIn());
  useEffect(() => {
    if (!opening) return;
    let live = true;
    (session.isSignedIn() ? Promise.resolve() : session.signIn(DEMO_USERNAME, DEMO_PASSWORD)).then(
      () => {
        if (live) setOpening(false);
      },
      () => {
        if (!live) return;
        setNotice('The demo is not available on this service.');
        setOpening(false);
      },
    );
    return () => {
      live = false;
    };
  }, [opening, session]);
  useEffect(() => {
    if (opening) return;
    setSignedIn(session.isSignedIn());
    if (!session.isSignedIn() && route !== 'sign-in' && route !== 'quote') navigate('sign-in', true);
    if (session.isSignedIn() && route === 'sign-in') navigate('policy', true);
  }, [session, route, opening]);
  useEffect(() => {
    const name =
      PUBLIC_TITLES[route] ?? SUBPAGE_NAMES[route] ?? PAGES.find((page) => page.route === route)?.name;
    document.title = `${name ?? 'My policy'} · ${config.brand_name}`;
  }, [route, config.brand_name]);

  const signOut = async () => {
    await session.signOut();
    setSignedIn(false);
    setNotice('You have signed out.');
    navigate('sign-in');
  };

  const style = {
    '--brand': config.brand_colour,
    '--on-brand': textOn(config.brand_colour),
  } as CSSProperties;
  return (
    <div className="shell" style={style}>
      <a className="skip" href="#content">
        Skip to content
      </a>
      <header className="bar">
        <span className="brand">{config.brand_name}</span>
        {config.environment === 'sandbox' ? <span className="tag">Test</span> : null}
        {signedIn ? (
          <button type="button" className="link-button" onClick={() => void signOut()}>
            Sign out
          </button>
        ) : null}
      </header>
      {demo ? <DemoBanner signedIn={signedIn} /> : null}
      {opening ? (
        <main id="content" className="page">
          <p className="loading" role="status">
            Opening the demo…
          </p>
        </main>
      ) : route === 'quote' ? (
        <Focused key={route}>
          <Suspense fallback={PAGE_LOADING}>
            <QuotePage config={config} />
          </Suspense>
        </Focused>
      ) : signedIn && route !== 'sign-in' ? (
        <PolicyProvider session={session} config={config}>
          <ClaimsProvider session={session}>
            <Navigation route={route} />
            <CrashBanner route={route} />
            <Focused key={route}>
              <Suspense fallback={PAGE_LOADING}>
                <SignedInPage route={route} session={session} config={config} />
              </Suspense>
            </Focused>
          </ClaimsProvider>
        </PolicyProvider>
      ) : (
        <Focused key={route}>
          <Suspense fallback={PAGE_LOADING}>
            <SignInPage
              session={session}
              notice={notice}
              onSignedIn={() => {
                setNotice(undefined);
                setSignedIn(true);
                navigate('policy');
              }}
            />
          </Suspense>
        </Focused>
      )}
    </div>
  );
}

/** Says the demo is made up and leads out of it (to the real app, whose session is kept apart). */
function DemoBanner({ signedIn }: { signedIn: boolean }) {
  return (
    <div className="demo-banner">
      <p className="message notice">
        <strong>Demo — sample data, nothing is saved.</strong>
        {signedIn ? '' : ' Sign in with any username and password.'}{' '}
        <a href={leaveDemoHref()}>Leave the demo</a>
      </p>
    </div>
  );
}

function SignedInPage({ route, ...props }: PageProps & { route: Exclude<Route, 'sign-in' | 'quote'> }) {
  const Page = PAGE_COMPONENTS[route];
  return <Page {...props} />;
}

/**
 * The pages, as links (a click routes in the page; a new tab or a copied link works too). On a phone they
 * wrap into a grid, so every page and the current one are in sight without scrolling sideways.
 */
function Navigation({ route }: { route: Route }) {
  const marked = SUBPAGES[route] ?? route;
  return (
    <nav className="app-tabs" aria-label="Pages">
      <ul>
        {PAGES.map((page) => (
          <li key={page.route}>
            <a
              href={hrefOf(page.route)}
              aria-current={page.route === marked ? 'page' : undefined}
              onClick={(event) => {
                if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
                event.preventDefault();
                navigate(page.route);
              }}
            >
              {page.name}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
