import '../../shared/styles.css';
import './console.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ConsoleApp } from './console-app.tsx';
import { start } from './start.ts';

/*
 * The entry script: the console's first render (Preact, the shell and the search page) in one chunk.
 * The session request and the settings come from `start()`, which index.html's inline copy has already
 * run by the time this arrives (the request is on its way while this downloads); where the page had no
 * inline copy (Vite's dev server), it runs here. Every other page is a chunk of its own, loaded when
 * first shown.
 */
const root = document.getElementById('root');
if (root !== null)
  createRoot(root).render(
    <StrictMode>
      <ConsoleApp initialConfig={start()} />
    </StrictMode>,
  );
