// node [--experimental-wasm-relaxed-simd] scripts/bench/lm.mjs [--browser] [--cpu-time] [--runs 5] [--steps 256] [--json FILE]
// Generation speed (tokens/s) and ms per run() at 16/128/512 tokens for stories260K, in Node and,
// with --browser, in headless Chromium (playwright-core, /usr/bin/chromium; files served from
// 127.0.0.1 through bench-page.mjs). Outside npm test: timings under load are noisy.
import { init } from '../../web/attnlens.js';
import { relaxedSimdSupported } from '../../web/engine/load.js';
import { withBenchPage } from './bench-page.mjs';
import { benchLanguageModel, formatLanguageModelBench, formatLanguageModelRatio } from './lm.js';
import { commandLine, jsonArg, writeSections } from './record.js';

const { json, rest: args } = jsonArg(process.argv.slice(2));
const sections = [];
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
  sections.push({ section: 'language-model', runtime: 'node', model: 'stories260K', build: lm.info.build, cpuTime: args.includes('--cpu-time'), ...node[build] });
  console.log(formatLanguageModelBench(node[build], `Node ${process.version} (model module ${lm.info.build})`));
}
if (node.relaxed) console.log(formatLanguageModelRatio(node.relaxed, node.simd, 'relaxed', 'SIMD128'));

if (args.includes('--browser')) {
  // The same headless page set-up as the other browser benchmarks (bench-page.mjs).
  await withBenchPage(async (page, context) => {
    const results = {};
    for (const build of ['simd', 'relaxed']) {
      const result = await page.evaluate((o) => window.attnlensLmBench(o), { ...options, build });
      results[build] = result;
      sections.push({ section: 'language-model', runtime: 'chromium', model: 'stories260K', build: result.build, ...result });
      console.log(formatLanguageModelBench(result, `Chromium ${context.browser()?.version() ?? result.userAgent} (model module ${result.build})`));
    }
    console.log(formatLanguageModelRatio(results.relaxed, results.simd, 'relaxed', 'SIMD128'));
  }, { log: (text) => console.error(`[page] ${text}`), pagePath: '/scripts/bench/lm-page.html' });
}
if (json) writeSections(json, sections, { command: commandLine('scripts/bench/lm.mjs', process.argv.slice(2)), fresh: true });
