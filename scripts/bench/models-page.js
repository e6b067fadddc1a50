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
// A crashed wllama worker never answers: every call gets a deadline, so the page reports it.
const within = (promise, ms, what) => Promise.race([promise,
  new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer in ${ms / 1000} s`)), ms))]);

// Issue 21 §4's figure target: the text changes → lm.run() of `tokens` tokens → an <attn-heads>
// grid of every layer and head redrawn (the figure's updateComplete), timed from the change.
async function headsGridRedraw(lm, shape, { tokens = 64, redraws = 5 } = {}) {
  await import('../../web/elements/attn-heads.js');
  const host = document.body.appendChild(document.createElement('div'));
  host.style.width = '800px';
  const el = host.appendChild(document.createElement('attn-heads'));
  const n = Math.min(tokens, shape.context);
  const show = async (seed) => {
    const t0 = performance.now();
    const r = lm.run(promptIds(shape, n, seed));
    const runMs = performance.now() - t0;
    el.data = { tokens: r.tokens, attention: r.layers.map((l) => l.attention) };
    if (!(await el.updateComplete)) throw new Error(`the heads grid did not draw: ${el.error}`);
    return { ms: performance.now() - t0, runMs };
  };
  const first = await show(1);
  const timed = [];
  for (let i = 0; i < redraws; i++) timed.push(await show(2 + i));
  host.remove();
  return { tokens: n, layers: lm.config.layers, heads: lm.config.heads, firstMs: first.ms,
    medianMs: median(timed.map((t) => t.ms)), bestMs: Math.min(...timed.map((t) => t.ms)), runMs: median(timed.map((t) => t.runMs)), redraws };
}

async function oursFor(lens, spec, shape, dtype, folder) {
  let files;
  // One model.safetensors, or (spec.shards, --big) the shards named there, relative to the folder.
  const weightFiles = spec.shards ?? [`${dtype}/model.safetensors`];
  let reading = weightFiles[0], streamed = false;
  try {
    let weights = [];
    try {
      for (const f of weightFiles) weights.push(await bytesOf(`${folder}/${(reading = f)}`));
    } catch {
      // A file too large for one ArrayBuffer of this browser (2 GiB): given as its URL, which
      // the loader streams tensor by tensor (the load time then includes the transfer).
      weights = weightFiles.map((f) => new URL(`${folder}/${f}`, location.href));
      streamed = true;
    }
    reading = `${dtype}/config.json`;
    files = { config: JSON.parse(new TextDecoder().decode(await bytesOf(`${folder}/${dtype}/config.json`))),
      weights: spec.shards ? weights : weights[0],
      tokenizer: await bytesOf(`${folder}/${shape.arch === 'gpt2' ? 'tokenizer.json' : 'tokenizer.bin'}`) };
  } catch (e) {
    const head = await fetch(`${folder}/${reading}`, { method: 'HEAD' }).catch(() => null);
    const size = Number(head?.headers.get('Content-Length'));
    return { error: `reading ${reading}${size ? ` (${(size / 2 ** 30).toFixed(2)} GiB)` : ''} into the page failed: ${errorOf(e)}` };
  }
  console.log(`ours ${shape.name} ${dtype}: loading`);
  try {
    const { lm, ms, memory } = await loadOurs(lens, files);
    const greedy = timeGreedy(lm, promptIds(shape, spec.promptTokens), { steps: spec.newTokens, runs: spec.generateRuns });
    const check = lm.generate(promptIds(shape, spec.promptTokens), { steps: spec.checkTokens, temperature: 0 });
    const prefill = timePrefill(lm, promptIds(shape, spec.prefillTokens, 13), { runs: spec.generateRuns });
    const headsGrid = dtype === 'F16' && spec.headsGrid ? await headsGridRedraw(lm, shape, spec.headsGrid) : undefined;
    return { streamed, loadMs: ms, heapBytes: memory.heapSize, heapInUse: memory.inUse, memory, greedy, prefill, headsGrid,
      check: { text: check.text, ids: Array.from(check.ids), top: check.steps.map((s) => s.candidates.slice(0, 3).map((c) => ({ id: c.id, p: c.p }))) } };
  } catch (e) {
    return { error: errorOf(e) };
  }
}

// One wllama instance per (file, thread count): loading, the agreement run, then timed runs.
async function wllamaFor(spec, shape, dtype, folder, threads, ours) {
  // spec.debug: llama.cpp's own log on the page's console (models-browser.mjs prints it).
  const wllama = new Wllama({ default: WLLAMA_WASM }, { allowOffline: true, suppressNativeLog: !spec.debug });
  try {
    // From its URL (this page's server), not a Blob: headless Chromium 156 here fails to read
    // back a Blob of the F32 file (476 MiB and up: NotReadableError in wllama's worker, also in
    // 64 MiB parts), where F16's 240 MiB reads fine. The load time includes the local transfer.
    const url = new URL(`${folder}/model-${dtype}.gguf`, location.href).href;
    const t0 = performance.now();
    console.log(`wllama ${shape.name} ${dtype}, ${threads} thread(s): loading`);
    await within(wllama.loadModelFromUrl(url, { useCache: false, n_threads: threads, n_ctx: Math.min(shape.context, 1024), n_batch: 512, n_gpu_layers: 0 }),
      spec.deadlineMs, 'wllama.loadModel');
    const loadMs = performance.now() - t0;
    // wllama takes text: the made-up words of the ids after BOS; llama.cpp adds a Llama's BOS, and
    // reads GPT-2's <|endoftext|> from the text as the special token.
    const textOf = (ids) => (shape.arch === 'gpt2' ? '<|endoftext|>' : '') +
      ids.slice(1).map((id) => pieceOf(shape.arch === 'gpt2' ? id + SPECIAL_PIECES : id)).join('');
    const complete = (ids, max, extra = {}) => within(wllama.createCompletion({ prompt: textOf(ids), max_tokens: max,
      temperature: 0, ignore_eos: true, cache_prompt: false, ...extra }), spec.deadlineMs, `wllama.createCompletion (${ids.length} + ${max} tokens)`);
    const prompt = promptIds(shape, spec.promptTokens);
    const check = await complete(prompt, spec.checkTokens, { logprobs: 3 });
    const text = check.choices[0].text;
    const agreement = { text, sameText: ours?.check ? text === ours.check.text : null,
      promptTokens: check.usage?.prompt_tokens, samePrompt: check.usage?.prompt_tokens === prompt.length };
    if (ours?.check) {
      // The same ids, and each step's top-3 probabilities: wllama's log-probabilities against our p.
      const steps = check.choices[0].logprobs?.content ?? [];
      agreement.sameIds = steps.length === ours.check.ids.length && steps.every((c, i) => c.id === ours.check.ids[i]);
      let maxDiff = 0, compared = 0;
      steps.forEach((c, i) => {
        for (const top of c.top_logprobs ?? []) {
          const mine = ours.check.top[i]?.find((x) => x.id === top.id);
          if (mine) maxDiff = Math.max(maxDiff, Math.abs(Math.exp(top.logprob) - mine.p)), compared++;
        }
      });
      agreement.topProbabilityMaxAbs = compared ? maxDiff : null;
      agreement.comparedProbabilities = compared;
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
    await within(wllama.exit(), 10_000, 'wllama.exit').catch(() => {});
  }
}

// Per file and thread count: ours on an engine of that many threads (its load, memory and the
// heads grid from the last count), then wllama on as many, compared with ours at that count.
window.attnlensModelsBench = async (spec) => {
  const shape = shapeOf(spec.shape);
  const folder = `/${spec.folder}`;
  const result = { userAgent: navigator.userAgent, crossOriginIsolated: globalThis.crossOriginIsolated,
    bandwidth: { start: readBandwidth({ mib: spec.bandwidthMiB }) }, ours: {}, wllama: {} };
  for (const dtype of spec.dtypes) {
    result.wllama[dtype] = [];
    for (const [i, threads] of spec.threads.entries()) {
      const lens = await init({ threads });
      const last = i === spec.threads.length - 1;
      const ours = await oursFor(lens, { ...spec, headsGrid: last ? spec.headsGrid : undefined }, shape, dtype, folder);
      ours.threads = lens.threads;
      ours.build = lens.build;
      if (last) result.ours[dtype] = ours;
      const w = await wllamaFor(spec, shape, dtype, folder, threads, ours);
      w.ours = ours.error ? { error: ours.error } : { threads: ours.threads, greedy: ours.greedy, prefill: ours.prefill };
      result.wllama[dtype].push(w);
    }
  }
  result.build = result.ours[spec.dtypes[0]]?.build;
  result.bandwidth.end = readBandwidth({ mib: spec.bandwidthMiB });
  return result;
};
// Ours alone on one file (--big): load, memory, greedy tokens/s, or the error that stops it.
window.attnlensModelsOurs = async (spec) => {
  const lens = await init();
  const r = await oursFor(lens, { checkTokens: 1, ...spec }, shapeOf(spec.shape), spec.dtype, `/${spec.folder}`);
  delete r.check;
  return { crossOriginIsolated: globalThis.crossOriginIsolated, build: lens.build, ...r };
};
window.attnlensBenchReady = true;  // what bench-page.mjs waits for
