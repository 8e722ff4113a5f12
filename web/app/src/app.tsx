import { useEffect, useMemo, useState, type CSSProperties, type ReactNode } from 'react';
import { Focused } from '../../shared/focused.tsx';
import type { Session } from '../../../sdk/src/index.ts';
import { loadConfig, textOn, withLinkedCompany, type AppConfig } from './config.ts';
import { DEMO_PASSWORD, DEMO_USERNAME, demoConfig, isDemo, leaveDemoHref } from './demo.ts';
import { CardsPage } from './cards.tsx';
import { DevicePage } from './device.tsx';
import { DirectDebitPage } from './direct-debit.tsx';
import { DocumentsPage } from './documents.tsx';
import { JourneysPage } from './journeys.tsx';
import type { PageProps } from './page-props.ts';
import { PolicyProvider } from './policy-context.tsx';
import { PolicyPage } from './policy.tsx';
import { hrefOf, navigate, PAGES, SUBPAGES, useRoute, type Route } from './router.ts';
import { createAppSession } from './session.ts';
import { SignInPage } from './sign-in.tsx';
import { StatementsPage } from './statements.tsx';
import { UsagePage } from './usage.tsx';

/** Each signed-in page's component. */
const PAGE_COMPONENTS: Readonly<Record<Exclude<Route, 'sign-in'>, (props: PageProps) => ReactNode>> = {
  policy: PolicyPage,
  journeys: JourneysPage,
  usage: UsagePage,
  statements: StatementsPage,
  documents: DocumentsPage,
  cards: CardsPage,
  'direct-debit': DirectDebitPage,
  device: DevicePage,
};

export function App() {
  const [config, setConfig] = useState<AppConfig | 'failed' | undefined>();
  useEffect(() => {
    loadConfig().then(
      (loaded) => {
        setConfig(isDemo() ? demoConfig(loaded) : withLinkedCompany(loaded));
      },
      () => {
        setConfig('failed');
      },
    );
  }, []);
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
  const [signedIn, setSignedIn] = useState(false);
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
    if (!session.isSignedIn() && route !== 'sign-in') navigate('sign-in', true);
    if (session.isSignedIn() && route === 'sign-in') navigate('policy', true);
  }, [session, route, opening]);
  useEffect(() => {
    const name =
      route === 'sign-in'
        ? 'Sign in'
        : route === 'direct-debit'
          ? 'Set up a Direct Debit'
          : PAGES.find((page) => page.route === route)?.name;
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
      ) : signedIn && route !== 'sign-in' ? (
        <PolicyProvider session={session}>
          <Navigation route={route} />
          <Focused key={route}>
            <SignedInPage route={route} session={session} config={config} />
          </Focused>
        </PolicyProvider>
      ) : (
        <Focused key={route}>
          <SignInPage
            session={session}
            notice={notice}
            onSignedIn={() => {
              setNotice(undefined);
              setSignedIn(true);
              navigate('policy');
            }}
          />
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

function SignedInPage({ route, ...props }: PageProps & { route: Exclude<Route, 'sign-in'> }) {
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
