import { useEffect, useMemo, useRef, useState, type CSSProperties, type ReactNode } from 'react';
import type { Session } from '../../../sdk/src/index.ts';
import { loadConfig, textOn, type AppConfig } from './config.ts';
import { PolicyPage } from './policy.tsx';
import { navigate, useRoute } from './router.ts';
import { createAppSession } from './session.ts';
import { SignInPage } from './sign-in.tsx';

export function App() {
  const [config, setConfig] = useState<AppConfig | 'failed' | undefined>();
  useEffect(() => {
    loadConfig().then(setConfig, () => {
      setConfig('failed');
    });
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
    setSignedIn(session.isSignedIn());
    if (!session.isSignedIn() && route !== 'sign-in') navigate('sign-in', true);
    if (session.isSignedIn() && route === 'sign-in') navigate('policy', true);
  }, [session, route]);
  useEffect(() => {
    document.title = `${route === 'sign-in' ? 'Sign in' : 'My policy'} · ${config.brand_name}`;
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
      <Focused key={route}>
        {route === 'sign-in' || !signedIn ? (
          <SignInPage
            session={session}
            notice={notice}
            onSignedIn={() => {
              setNotice(undefined);
              setSignedIn(true);
              navigate('policy');
            }}
          />
        ) : (
          <PolicyPage session={session} />
        )}
      </Focused>
    </div>
  );
}

/** Moves focus to the page's main region when the page changes, so keyboard and reader users follow. */
function Focused({ children }: { children: ReactNode }) {
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    ref.current?.focus();
  }, []);
  return (
    <main id="content" className="page" tabIndex={-1} ref={ref}>
      {children}
    </main>
  );
}
