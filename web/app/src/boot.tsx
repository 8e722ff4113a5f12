import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.tsx';
import type { AppConfig } from './config.ts';

/** Renders the app; `config` undefined: the page carried no settings, and the app asks config.json. */
export function boot(config: AppConfig | undefined): void {
  const root = document.getElementById('root');
  if (root !== null)
    createRoot(root).render(
      <StrictMode>
        <App initialConfig={config} />
      </StrictMode>,
    );
}
