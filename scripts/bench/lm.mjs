// node scripts/bench/lm.mjs [--browser] [--runs 5] [--steps 256]
// Generation speed (tokens/s) and ms per run() at 16/128/512 tokens for stories260K, in Node and,
// with --browser, in headless Chromium (playwright-core, /usr/bin/chromium; files served from
// 127.0.0.1 by scripts/serve.mjs). Outside npm test: timings under load are noisy.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { init } from '../../web/attnlens.js';
import { serve } from '../serve.mjs';
import { benchLanguageModel, formatLanguageModelBench } from './lm.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const options = { runs: option('runs', 5), steps: option('steps', 256) };

const lens = await init();
const lm = await lens.loadModel('stories260K');
console.log(formatLanguageModelBench(benchLanguageModel(lm, options), `Node ${process.version} (${lens.arch})`));

if (args.includes('--browser')) {
  const { chromium } = await import('playwright-core');
  const server = await serve({ root: ROOT, port: 0, index: '/scripts/bench/lm-page.html', headers: {} });
  const profile = await mkdtemp(path.join(os.tmpdir(), 'attnlens-lm-bench-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium', headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
    await page.goto(`${server.url}/scripts/bench/lm-page.html`);
    await page.waitForFunction(() => window.attnlensLmBenchReady === true, null, { timeout: 60_000 });
    const result = await page.evaluate((o) => window.attnlensLmBench(o), options);
    console.log(formatLanguageModelBench(result, `Chromium ${context.browser()?.version() ?? result.userAgent}`));
  } finally {
    await context?.close();
    await server.close();
    await rm(profile, { recursive: true, force: true });
  }
}
