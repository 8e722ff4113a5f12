import { start } from './start.ts';

// Bundled on its own and written into index.html as an inline script (web/build-plugins.ts).
start();
