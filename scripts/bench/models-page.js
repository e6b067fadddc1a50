// The Chromium half of `npm run bench:models` (models-browser.mjs opens this page, served
// cross-origin isolated so that wllama can run two threads): ours and llama.cpp's wasm build
// (@wllama/wllama) on the same model, in one page. Every wllama run is checked against ours first
// (the same greedy text and top-token probabilities), then both are timed: greedy decoding after
// a short prompt and the prefill of a longer one.
import { init } from '../../web/attnlens.js';
import { Wllama } from '../../node_modules/@wllama/wllama/esm/index.js';
import { readBandwidth } from './bandwidth.js';
import { pieceOf, promptIds, SPECIAL_PIECES } from './model-files.js';
import { shapeOf } from './model-shapes.js';
import { loadOurs, median, timeGreedy, timePrefill } from './models-ours.js';

const WLLAMA_WASM = new URL('../../node_modules/@wllama/wllama/esm/wasm/wllama.wasm', import.meta.url).href;
const bytesOf = async (url) => {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
};
const errorOf = (e) => String(e?.message ?? e).split('\n')[0];

async function oursFor(lens, spec, shape, dtype, folder) {
  const files = { config: JSON.parse(new TextDecoder().decode(await bytesOf(`${folder}/${dtype}/config.json`))),
    weights: await bytesOf(`${folder}/${dtype}/model.safetensors`),
    tokenizer: await bytesOf(`${folder}/${shape.arch === 'gpt2' ? 'tokenizer.json' : 'tokenizer.bin'}`) };
  try {
    const { lm, ms, memory } = await loadOurs(lens, files);
    const greedy = timeGreedy(lm, promptIds(shape, spec.promptTokens), { steps: spec.newTokens, runs: spec.generateRuns });
    const check = lm.generate(promptIds(shape, spec.promptTokens), { steps: spec.checkTokens, temperature: 0 });
    const prefill = timePrefill(lm, promptIds(shape, spec.prefillTokens, 13), { runs: spec.generateRuns });
    return { loadMs: ms, heapBytes: memory.heapSize, greedy, prefill,
      check: { text: check.text, top: check.steps.map((s) => s.candidates.slice(0, 3).map((c) => ({ token: c.token, p: c.p }))) } };
  } catch (e) {
    return { error: errorOf(e) };
  }
}

// One wllama instance per (file, thread count): loading, the agreement run, then timed runs.
async function wllamaFor(spec, shape, dtype, folder, threads, ours) {
  const wllama = new Wllama({ default: WLLAMA_WASM }, { allowOffline: true, suppressNativeLog: !spec.debug });
  try {
    const blob = new Blob([await bytesOf(`${folder}/model-${dtype}.gguf`)]);
    const t0 = performance.now();
    await wllama.loadModel([blob], { n_threads: threads, n_ctx: Math.min(shape.context, 1024), n_batch: 512, n_gpu_layers: 0 });
    const loadMs = performance.now() - t0;
    // wllama takes text: the made-up words of the ids after BOS (llama.cpp adds the BOS).
    const textOf = (ids) => ids.slice(1).map((id) => pieceOf(shape.arch === 'gpt2' ? id + SPECIAL_PIECES : id)).join('');
    const complete = (ids, max, extra = {}) => wllama.createCompletion({ prompt: textOf(ids), max_tokens: max, temperature: 0, ignore_eos: true, cache_prompt: false, ...extra });
    const prompt = promptIds(shape, spec.promptTokens);
    const check = await complete(prompt, spec.checkTokens, { logprobs: 3 });
    const text = check.choices[0].text;
    const agreement = { text, sameText: ours?.check ? text === ours.check.text : null,
      promptTokens: check.usage?.prompt_tokens, samePrompt: check.usage?.prompt_tokens === prompt.length };
    if (ours?.check) {
      // Top-token probabilities: wllama's log-probabilities against our candidates' p.
      const lp = check.choices[0].logprobs;
      let maxDiff = 0;
      lp?.top_logprobs?.forEach((top, i) => {
        for (const c of ours.check.top[i] ?? []) if (c.token in top) maxDiff = Math.max(maxDiff, Math.abs(Math.exp(top[c.token]) - c.p));
      });
      agreement.topProbabilityMaxAbs = lp?.top_logprobs ? maxDiff : null;
    }
    const decode = [], prefill = [];
    for (let i = 0; i <= spec.generateRuns; i++) {
      // A different prompt each run (llama.cpp reuses a cached prefix): the same length.
      const g = await complete(promptIds(shape, spec.promptTokens, 100 + i), spec.newTokens);
      const p = await complete(promptIds(shape, spec.prefillTokens, 200 + i), 1);
      if (i === 0) continue;  // warm-up
      decode.push(g.timings.predicted_per_second);
      prefill.push(p.timings.prompt_per_second);
    }
    return { threads, multithread: wllama.isMultithread(), actualThreads: wllama.getNumThreads(), loadMs, agreement,
      decodeTokensPerSecond: median(decode), prefillTokensPerSecond: median(prefill), runs: spec.generateRuns };
  } catch (e) {
    return { threads, error: errorOf(e), stack: String(e?.stack ?? "").slice(0, 1500) };
  } finally {
    await wllama.exit().catch(() => {});
  }
}

window.attnlensModelsBench = async (spec) => {
  const shape = shapeOf(spec.shape);
  const folder = `/${spec.folder}`;
  const lens = await init();
  const result = { userAgent: navigator.userAgent, crossOriginIsolated: globalThis.crossOriginIsolated, build: lens.build,
    bandwidth: { start: readBandwidth({ mib: spec.bandwidthMiB }) }, ours: {}, wllama: {} };
  for (const dtype of spec.dtypes) {
    result.ours[dtype] = await oursFor(lens, spec, shape, dtype, folder);
    result.wllama[dtype] = [];
    for (const threads of spec.threads) result.wllama[dtype].push(await wllamaFor(spec, shape, dtype, folder, threads, result.ours[dtype]));
  }
  result.bandwidth.end = readBandwidth({ mib: spec.bandwidthMiB });
  return result;
};
window.attnlensBenchReady = true;  // what bench-page.mjs waits for
