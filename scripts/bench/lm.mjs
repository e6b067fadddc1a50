// node [--experimental-wasm-relaxed-simd] scripts/bench/lm.mjs [--browser] [--cpu-time] [--runs 5] [--steps 256]
// Generation speed (tokens/s) and ms per run() at 16/128/512 tokens for stories260K, in Node and,
// with --browser, in headless Chromium (playwright-core, /usr/bin/chromium; files served from
// 127.0.0.1 by scripts/serve.mjs). Outside npm test: timings under load are noisy.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { init } from '../../web/attnlens.js';
import { relaxedSimdSupported } from '../../web/engine/load.js';
import { serve } from '../serve.mjs';
import { benchLanguageModel, formatLanguageModelBench, formatLanguageModelRatio } from './lm.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const options = { runs: option('runs', 5), steps: option('steps', 256) };
// --cpu-time: Node's timings by the process's CPU time, which other jobs disturb far less.
const cpuClock = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const nodeOptions = args.includes('--cpu-time') ? { ...options, clock: cpuClock } : options;

// Each model module the runtime runs: SIMD128, and relaxed SIMD (fused multiply-add) where it
// validates (Chromium; Node with --experimental-wasm-relaxed-simd), compared in the same process.
const builds = relaxedSimdSupported() ? ['simd', 'relaxed'] : ['simd'];
const node = {};
for (const build of builds) {
  const lens = await init({ build });
  const lm = await lens.loadModel('stories260K');
  node[build] = benchLanguageModel(lm, nodeOptions);
  console.log(formatLanguageModelBench(node[build], `Node ${process.version} (model module ${lm.info.build})`));
}
if (node.relaxed) console.log(formatLanguageModelRatio(node.relaxed, node.simd, 'relaxed', 'SIMD128'));

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
    const results = {};
    for (const build of ['simd', 'relaxed']) {
      const result = await page.evaluate((o) => window.attnlensLmBench(o), { ...options, build });
      results[build] = result;
      console.log(formatLanguageModelBench(result, `Chromium ${context.browser()?.version() ?? result.userAgent} (model module ${result.build})`));
    }
    console.log(formatLanguageModelRatio(results.relaxed, results.simd, 'relaxed', 'SIMD128'));
  } finally {
    await context?.close();
    await server.close();
    await rm(profile, { recursive: true, force: true });
  }
}
