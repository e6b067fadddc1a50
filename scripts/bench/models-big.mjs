// `npm run bench:models -- --big` (issue 21 §5): a 1.1B-parameter Llama in TinyLlama's shape,
// BF16 random weights, loaded from bytes and asked for greedy tokens, in Node (this process) and
// in a cross-origin-isolated Chromium page; load time, memory and tokens/s, or the error that
// stops it, as measured.
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { init } from '../../web/attnlens.js';
import { promptIds } from './model-files.js';
import { parameterCount, shapeOf } from './model-shapes.js';
import { readBytes, writeModelFiles } from './models.mjs';
import { loadOurs, timeGreedy } from './models-ours.js';
import { formatBig } from './models-report.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const errorOf = (e) => String(e?.message ?? e).split('\n')[0];

export async function benchBig(o, { log = () => {}, shapeName = 'tinyllama-1.1b', dtype = 'BF16', newTokens = 16 } = {}) {
  const shape = shapeOf(shapeName);
  const t0 = performance.now();
  const folder = writeModelFiles(shape, { dir: o.dir, seed: o.seed, dtypes: [dtype], onnx: false, gguf: false, log });
  const writeMs = performance.now() - t0;
  const files = {
    config: JSON.parse(readFileSync(path.join(folder, dtype, 'config.json'), 'utf8')),
    weights: readBytes(path.join(folder, dtype, 'model.safetensors')),
    tokenizer: new Uint8Array(readFileSync(path.join(folder, 'tokenizer.bin'))),
  };
  const spec = { promptTokens: 32, newTokens, generateRuns: 1 };
  const result = { shape: { ...shape, parameters: parameterCount(shape) }, dtype, fileBytes: files.weights.byteLength, filesMs: writeMs };
  const rss0 = process.memoryUsage().rss;
  const lens = await init();
  try {
    const { lm, ms, memory } = await loadOurs(lens, files);
    result.node = { loadMs: ms, heapBytes: memory.heapSize, heapInUse: memory.inUse, memory,
      rssAddedBytes: process.memoryUsage().rss - rss0, peakRssBytes: process.resourceUsage().maxRSS * 1024 };
    const g = timeGreedy(lm, promptIds(shape, spec.promptTokens), { steps: newTokens, runs: 1 });
    result.node.greedy = { tokens: g.tokens, decodeTokensPerSecond: g.decodeTokensPerSecond, prefillMs: g.prefillMs };
  } catch (e) {
    result.node = { error: errorOf(e), rssAddedBytes: process.memoryUsage().rss - rss0, peakRssBytes: process.resourceUsage().maxRSS * 1024 };
  }
  log(`Node: ${result.node.error ? `stopped: ${result.node.error}` : `loaded in ${result.node.loadMs.toFixed(0)} ms`}`);
  files.weights = null;  // the page fetches its own copy
  if (o.browser) {
    const { withBenchPage } = await import('./bench-page.mjs');
    const { ISOLATION_HEADERS } = await import('../serve.mjs');
    result.chromium = await withBenchPage(async (page, context) => {
      const r = await page.evaluate((s) => window.attnlensModelsOurs(s), {
        ...spec, shape: shapeName, dtype, folder: path.relative(ROOT, folder), prefillTokens: 32 });
      return { ...r, browser: context.browser()?.version() };
    }, { log: (t) => log(`[page] ${t}`), headers: ISOLATION_HEADERS, pagePath: '/scripts/bench/models-page.html' });
    log(`Chromium: ${result.chromium.error ? `stopped: ${result.chromium.error}` : `loaded in ${result.chromium.loadMs.toFixed(0)} ms`}`);
  }
  return { json: result, text: formatBig(result) };
}
