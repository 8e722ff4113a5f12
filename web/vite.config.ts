import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { gbOutline } from './gb-outline.ts';

/** The policyholder app: built to web/dist/app, served by the service at /app/. */
export default defineConfig({
  root: fileURLToPath(new URL('./app', import.meta.url)),
  base: '/app/',
  logLevel: 'warn',
  plugins: [gbOutline()],
  // React's automatic JSX runtime, compiled by Vite's own transformer (no plugin needed for a build).
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: fileURLToPath(new URL('./dist/app', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
});
