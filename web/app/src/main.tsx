import '../../shared/styles.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.tsx';
import { start } from './start.ts';

/*
 * The entry script: the app's first render (Preact, the shell and the policy page) in one chunk. The
 * settings and the policy request come from `start()`, which index.html's inline copy has already run
 * by the time this arrives (the request is on its way while this downloads); where the page had no
 * inline copy (Vite's dev server), it runs here. Pages other than the policy page are chunks of their
 * own, loaded when first shown.
 */
const root = document.getElementById('root');
if (root !== null)
  createRoot(root).render(
    <StrictMode>
      <App initialConfig={start()} />
    </StrictMode>,
  );
