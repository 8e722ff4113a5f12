import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { skipWithoutChromium as skip } from './browser-support.ts';
import { startConsoleRig, type ConsoleRig } from './console-support.ts';

// The first page's data, asked for by index.html's inline start script before the entry script has
// loaded (web/shared/early-answer.ts): where the answer has come by the time the entry script runs, its
// first render shows the data, with no loading state in between; where the entry script runs first,
// the page shows its loading state, then the data from the same answer. Either way the data is asked
// for once. Which comes first is forced by holding back the entry script or the answer.
let rig: ConsoleRig;
before(async () => {
  if (skip === false) rig = await startConsoleRig();
});
after(async () => {
  if (skip === false) await rig.close();
});

// The page's globals, as far as the functions run in it use them (the root tsconfig has no DOM lib).
declare const document: { body: { textContent: string | null } | null };
declare const window: { loadingSeen?: boolean };
declare const MutationObserver: new (callback: () => void) => {
  observe(target: unknown, options: { childList: boolean; subtree: boolean; characterData: boolean }): void;
};

const HOLD_MS = 400;

/**
 * Records in the page whether `loading` was ever in its text, from before any of its scripts runs;
 * holds back the entry chunk or the data's answer by HOLD_MS; counts the requests for the data.
 */
async function watch(
  page: Page,
  options: { loading: string; dataPath: string; hold: 'entry' | 'data' },
): Promise<{ dataRequests: () => number }> {
  await page.addInitScript((loading: string) => {
    window.loadingSeen = false;
    new MutationObserver(() => {
      if (document.body?.textContent?.includes(loading) === true) window.loadingSeen = true;
    }).observe(document, { childList: true, subtree: true, characterData: true });
  }, options.loading);
  let dataRequests = 0;
  page.on('request', (request) => {
    if (new URL(request.url()).pathname === options.dataPath) dataRequests++;
  });
  const held = options.hold === 'entry' ? /\/assets\/index-[\w-]+\.js$/ : new RegExp(`${options.dataPath}$`);
  await page.route(held, async (route) => {
    const response = await route.fetch();
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    await route.fulfill({ response });
  });
  return { dataRequests: () => dataRequests };
}

const loadingSeen = (page: Page) => page.evaluate(() => window.loadingSeen === true);

test(
  'app: a policy in before the entry script is in its first render; one that comes later follows a loading state',
  { skip, timeout: 60_000 },
  async () => {
    for (const hold of ['entry', 'data'] as const) {
      const { holder, context, page, problems } = await rig.signedIn(`first-render-${hold}`);
      try {
        const { dataRequests } = await watch(page, {
          loading: 'Loading your policy…',
          dataPath: '/policys/details',
          hold,
        });
        await page.goto(`${rig.baseUrl}/app/`);
        await page.getByTestId('policy-reference').getByText(holder.reference).waitFor();
        assert.equal(await loadingSeen(page), hold === 'data', `held back: ${hold}`);
        assert.equal(dataRequests(), 1, `held back: ${hold}`);
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    }
  },
);

test(
  'console: the staff session in before the entry script is in its first render; one that comes later follows a loading state',
  { skip, timeout: 60_000 },
  async () => {
    for (const hold of ['entry', 'data'] as const) {
      const { email, context, page, problems } = await rig.signedInStaff(`first-render-${hold}`, 'viewer');
      try {
        const { dataRequests } = await watch(page, { loading: 'Loading…', dataPath: '/staff/session', hold });
        await page.goto(`${rig.baseUrl}/console/`);
        await page.getByTestId('signed-in-as').getByText(email).waitFor();
        assert.equal(await loadingSeen(page), hold === 'data', `held back: ${hold}`);
        assert.equal(dataRequests(), 1, `held back: ${hold}`);
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    }
  },
);
