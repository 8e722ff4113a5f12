import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import type { ConsoleConfig } from './config.ts';
import { ConsoleApp } from './console-app.tsx';

/** Renders the console; `config` undefined: the page carried no settings, and it asks config.json. */
export function boot(config: ConsoleConfig | undefined): void {
  const root = document.getElementById('root');
  if (root !== null)
    createRoot(root).render(
      <StrictMode>
        <ConsoleApp initialConfig={config} />
      </StrictMode>,
    );
}
