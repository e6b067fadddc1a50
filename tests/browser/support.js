// Shared set-up for browser tests: Debian's headless Chromium driven by playwright-core, a local
// static server, and guards that every test uses: no request may leave 127.0.0.1 and the
// console must stay clean.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import assert from 'node:assert/strict';
import path from 'node:path';

import { chromium } from 'playwright-core';

import { STRICT_CSP, serve } from '../../scripts/serve.mjs';

/** How long a Playwright wait may hang before it fails: generous, as tests run on loaded machines. */
export const HANG_GUARD_MS = 600_000;

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
  // Waits end on the event they wait for; this is only a hang guard, never a speed limit.
  context.setDefaultTimeout(HANG_GUARD_MS);
  const offHost = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === 'data:' || url.protocol === 'blob:' || url.hostname === '127.0.0.1') return route.continue();
    offHost.push(url.href);
    return route.abort();
  });
  const pages = [];
  return {
    url: server.url,
    context,
    offHost,
    /** A page that records console errors, failed requests and page errors in `page.problems`. */
    async newPage() {
      const page = await context.newPage();
      pages.push(page);
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
    /**
     * For afterEach: fails the test that just ran if any page of this browser recorded a problem
     * (or a request left 127.0.0.1), then forgets them, so that the next test starts clean and a
     * problem fails only the test that caused it. Expected problems are taken out by
     * expectProblems() where they are provoked.
     */
    assertNoProblems() {
      const problems = pages.flatMap((p) => p.problems.splice(0));
      const off = offHost.splice(0);
      assert.deepEqual(problems, [], 'console errors, page errors or failed requests');
      assert.deepEqual(off, [], 'requests that left 127.0.0.1');
    },
    async close() {
      await context.close();
      await server.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs `fn` (which provokes errors on purpose) and asserts that exactly the problems matching
 * `patterns` appeared on `page` meanwhile, one problem per pattern; removes those and fails on
 * any other. Returns what `fn` returned.
 */
export async function expectProblems(page, patterns, fn) {
  const start = page.problems.length;
  const result = await fn();
  // One more round trip: the browser sends console and error events before this reply.
  await page.evaluate(() => 0);
  const fresh = page.problems.splice(start), left = [...fresh];
  for (const pattern of patterns) {
    const at = left.findIndex((p) => pattern.test(p));
    assert.ok(at >= 0, `expected a problem matching ${pattern}; got ${JSON.stringify(fresh)}`);
    left.splice(at, 1);
  }
  assert.deepEqual(left, [], 'unexpected console errors, page errors or failed requests');
  return result;
}

/**
 * What a test needs from the machine that scripts/setup.sh or scripts/build.sh provides: missing,
 * the test fails with a message saying so (never a silent skip).
 */
export function requireDependency(name, present, how) {
  if (!present) throw new Error(`${name} is missing (${how}): this test cannot run without it`);
}
