import '../../shared/styles.css';
import './console.css';
import { configInPage } from '../../shared/web-config.ts';
import type { ConsoleConfig } from './config.ts';
import { startSessionRequest } from './early-request.ts';

/*
 * The entry script: small on purpose (no UI runtime, no pages), so it runs as soon as it arrives. It sends
 * the staff session request, reads the settings the service put in the page, and then loads the
 * console (Preact, the shell and the search page: a chunk index.html already preloads), which renders
 * while the session is on its way. Every other page is a chunk of its own, loaded when first shown.
 */
startSessionRequest();
const config = configInPage() as ConsoleConfig | undefined;

import('./boot.tsx').then(
  ({ boot }) => {
    boot(config);
  },
  () => {
    const root = document.getElementById('root');
    if (root !== null)
      root.textContent = 'The console could not load. Please check your connection and reload the page.';
  },
);
