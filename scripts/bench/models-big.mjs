// `npm run bench:models -- --big` (issue 21 §5): a 1.1B-parameter Llama in TinyLlama's shape,
// BF16 random weights, loaded from bytes and asked for greedy tokens, in Node (this process) and
// in a cross-origin-isolated Chromium page; load time, memory and tokens/s, or the error that
// stops it, as measured. The file is tried as one model.safetensors (as TinyLlama ships it); where
// that stops, the same bytes cut into two shards (as the Hub shards larger models) are tried too.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { init } from '../../web/attnlens.js';
import { promptIds, splitSafetensors } from './model-files.js';
import { parameterCount, shapeOf } from './model-shapes.js';
import { readBytes, writeBytes, writeModelFiles } from './models.mjs';
import { loadOurs, timeGreedy } from './models-ours.js';
import { formatBig } from './models-report.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const errorOf = (e) => String(e?.message ?? e).split('\n')[0];
const SHARDS = 2;

/** Ours in this process on `files` (weights: one file's bytes or the shards'): load, memory, greedy tokens/s, or the error. */
async function nodeRun(lens, files, shape, spec) {
  const rss0 = process.memoryUsage().rss;
  try {
    const { lm, ms, memory } = await loadOurs(lens, files);
    const out = { loadMs: ms, heapBytes: memory.heapSize, heapInUse: memory.inUse, memory,
      rssAddedBytes: process.memoryUsage().rss - rss0, peakRssBytes: process.resourceUsage().maxRSS * 1024 };
    const g = timeGreedy(lm, promptIds(shape, spec.promptTokens), { steps: spec.newTokens, runs: 1 });
    out.greedy = { tokens: g.tokens, decodeTokensPerSecond: g.decodeTokensPerSecond, prefillMs: g.prefillMs };
    return out;
  } catch (e) {
    return { error: errorOf(e), rssAddedBytes: process.memoryUsage().rss - rss0, peakRssBytes: process.resourceUsage().maxRSS * 1024 };
  }
}

export async function benchBig(o, { log = () => {}, shapeName = 'tinyllama-1.1b', dtype = 'BF16', newTokens = 16 } = {}) {
  const shape = shapeOf(shapeName);
  const t0 = performance.now();
  const folder = writeModelFiles(shape, { dir: o.dir, seed: o.seed, dtypes: [dtype], onnx: false, gguf: false, log });
  const writeMs = performance.now() - t0;
  const file = path.join(folder, dtype, 'model.safetensors');
  const files = {
    config: JSON.parse(readFileSync(path.join(folder, dtype, 'config.json'), 'utf8')),
    weights: readBytes(file),
    tokenizer: new Uint8Array(readFileSync(path.join(folder, 'tokenizer.bin'))),
  };
  const spec = { promptTokens: 32, newTokens, generateRuns: 1 };
  const result = { shape: { ...shape, parameters: parameterCount(shape) }, dtype, fileBytes: files.weights.byteLength, filesMs: writeMs };
  const lens = await init();
  result.node = await nodeRun(lens, files, shape, spec);
  log(`Node: ${result.node.error ? `stopped: ${result.node.error}` : `loaded in ${result.node.loadMs.toFixed(0)} ms`}`);
  // Where one file stops, the same bytes in shards (written beside it once, for the page too).
  const shardDir = path.join(folder, `${dtype}-${SHARDS}-shards`);
  let shardNames = null;
  if (result.node.error) {
    const split = splitSafetensors(files.weights, SHARDS);
    shardNames = split.names;
    files.weights = null;
    mkdirSync(shardDir, { recursive: true });
    split.names.forEach((n, i) => {
      const f = path.join(shardDir, n);
      if (!existsSync(f) || statSync(f).size !== split.shards[i].byteLength) writeBytes(f, split.shards[i]);
    });
    writeFileSync(path.join(shardDir, 'model.safetensors.index.json'), JSON.stringify(split.index));
    result.shards = { count: SHARDS, bytes: split.shards.map((s) => s.byteLength) };
    result.nodeShards = await nodeRun(lens, { ...files, weights: split.shards }, shape, spec);
    log(`Node, ${SHARDS} shards: ${result.nodeShards.error ? `stopped: ${result.nodeShards.error}` : `loaded in ${result.nodeShards.loadMs.toFixed(0)} ms`}`);
  }
  files.weights = null;  // the page fetches its own copy
  if (o.browser) {
    const { withBenchPage } = await import('./bench-page.mjs');
    const { ISOLATION_HEADERS } = await import('../serve.mjs');
    const inPage = (shards) => withBenchPage(async (page, context) => {
      const r = await page.evaluate((s) => window.attnlensModelsOurs(s), {
        ...spec, shape: shapeName, dtype, folder: path.relative(ROOT, folder), prefillTokens: 32,
        ...(shards && { shards: shards.map((n) => `${path.basename(shardDir)}/${n}`) }) });
      return { ...r, browser: context.browser()?.version() };
    }, { log: (t) => log(`[page] ${t}`), headers: ISOLATION_HEADERS, pagePath: '/scripts/bench/models-page.html' });
    result.chromium = await inPage(null);
    log(`Chromium: ${result.chromium.error ? `stopped: ${result.chromium.error}` : `loaded in ${result.chromium.loadMs.toFixed(0)} ms`}`);
    if (result.chromium.error) {
      if (!shardNames) {  // Node loaded the one file: cut it for the page now
        const split = splitSafetensors(readBytes(file), SHARDS);
        shardNames = split.names;
        mkdirSync(shardDir, { recursive: true });
        split.names.forEach((n, i) => writeBytes(path.join(shardDir, n), split.shards[i]));
        result.shards = { count: SHARDS, bytes: split.shards.map((s) => s.byteLength) };
      }
      result.chromiumShards = await inPage(shardNames);
      log(`Chromium, ${SHARDS} shards: ${result.chromiumShards.error ? `stopped: ${result.chromiumShards.error}` : `loaded in ${result.chromiumShards.loadMs.toFixed(0)} ms`}`);
    }
  }
  return { json: result, text: formatBig(result) };
}
