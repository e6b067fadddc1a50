// The bench page (scripts/bench/page.html) served from 127.0.0.1 in a fresh headless Chromium
// profile, for the browser benchmarks (browser.mjs, heatmap-frame.mjs, threads-browser.mjs, lm.mjs,
// the pages they name): runs `use(page, context)`
// once the page says it is ready, then closes everything.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { serve } from '../serve.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHROMIUM_FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

// `headers`: e.g. COOP/COEP for the threads page (threads-page.html); `pagePath`: another page.
export async function withBenchPage(use, { log = () => {}, headers = {}, pagePath = '/scripts/bench/page.html' } = {}) {
  // No CSP header: the peers' loaders are not all written for one.
  const server = await serve({ root: ROOT, port: 0, index: pagePath, headers });
  const profile = await mkdtemp(path.join(os.tmpdir(), 'attnlens-bench-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_FLAGS,
    });
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (m) => log(m.text()));
    page.on('pageerror', (e) => log(`page error: ${e.message}`));
    await page.goto(`${server.url}${pagePath}`);
    await page.waitForFunction(() => window.attnlensBenchReady === true, null, { timeout: 60_000 });
    return await use(page, context);
  } finally {
    await context?.close();
    await server.close();
    await rm(profile, { recursive: true, force: true });
  }
}
