import '../../shared/styles.css';
import { configInPage } from '../../shared/web-config.ts';
import { effectiveConfig, type AppConfig } from './config.ts';
import { startPolicyRequest } from './early-request.ts';

/*
 * The entry script: small on purpose (no UI runtime, no pages), so it runs as soon as it arrives. It reads
 * the settings the service put in the page, sends the policy request, and then loads the app (Preact,
 * the shell and the first page: a chunk index.html already preloads), which renders while the policy
 * is on its way. Pages other than the policy page are chunks of their own, loaded when first shown.
 */
const inPage = configInPage() as AppConfig | undefined;
const config = inPage === undefined ? undefined : effectiveConfig(inPage);
if (config !== undefined) startPolicyRequest(config, /\/sign-in\/?$/.test(window.location.pathname));

import('./boot.tsx').then(
  ({ boot }) => {
    boot(config);
  },
  () => {
    const root = document.getElementById('root');
    if (root !== null)
      root.textContent = 'This app could not load. Please check your connection and reload the page.';
  },
);
