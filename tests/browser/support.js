// Shared set-up for browser tests: Debian's headless Chromium driven by playwright-core, a local
// static server, and guards that every test uses: no request may leave 127.0.0.1 and the
// console must stay clean.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { chromium } from 'playwright-core';

import { STRICT_CSP, serve } from '../../scripts/serve.mjs';

const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/**
 * Starts a server and a browser; returns { url, context, newPage(), fixture(), close() }.
 * `contextOptions` go to Playwright's browser context (e.g. { hasTouch: true }).
 */
export async function startBrowser({ serveOptions = {}, colorScheme = 'light', viewport, contextOptions = {} } = {}) {
  const server = await serve({ port: 0, ...serveOptions });
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'attnlens-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS, colorScheme, viewport: viewport ?? { width: 1000, height: 800 }, ...contextOptions,
  });
  const offHost = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === 'data:' || url.protocol === 'blob:' || url.hostname === '127.0.0.1') return route.continue();
    offHost.push(url.href);
    return route.abort();
  });
  return {
    url: server.url,
    context,
    offHost,
    /** A page that records console errors, failed requests and page errors in `page.problems`. */
    async newPage() {
      const page = await context.newPage();
      page.problems = [];
      page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') page.problems.push(`console ${m.type()}: ${m.text()}`); });
      page.on('pageerror', (e) => page.problems.push(`page error: ${e.message}`));
      page.on('requestfailed', (r) => page.problems.push(`request failed: ${r.url()}`));
      page.on('response', (r) => { if (r.status() >= 400) page.problems.push(`HTTP ${r.status()}: ${r.url()}`); });
      return page;
    },
    /**
     * A page showing `body` inside a minimal HTML document served from the test server (same
     * origin, strict CSP) that loads `modules` (default: all the figures).
     */
    async fixture(body, { modules = ['/elements/index.js'], name = 'fixture', files = {} } = {}) {
      const page = await this.newPage();
      const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${name}</title>
<link rel="icon" href="data:,">${modules.map((m) => `<script type="module" src="${m}"></script>`).join('')}
</head><body>${body}</body></html>`;
      const routes = { [`/__fixture__/${name}.html`]: ['text/html; charset=utf-8', html] };
      for (const [file, content] of Object.entries(files))
        routes[`/__fixture__/${file}`] = ['application/json', typeof content === 'string' ? content : JSON.stringify(content)];
      await page.route(`${server.url}/__fixture__/**`, (route) => {
        const found = routes[new URL(route.request().url()).pathname];
        if (!found) return route.fulfill({ status: 404, body: 'not found' });
        return route.fulfill({ status: 200, headers: { 'Content-Type': found[0], 'Content-Security-Policy': STRICT_CSP }, body: found[1] });
      });
      await page.goto(`${server.url}/__fixture__/${name}.html`);
      return page;
    },
    async close() {
      await context.close();
      await server.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}
