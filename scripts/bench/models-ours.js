// Our side of `npm run bench:models`, shared by Node (models-node.mjs) and Chromium
// (models-page.js): load from bytes, greedy decoding and prefill timed through the public API.
// Plain JavaScript, no Node modules.
import { median } from './core.js';

export { median };

// The weights go in as bytes (an ArrayBuffer of each file), or as URLs where a page cannot hold
// a file (models-page.js): the loader streams those.
const wholeBuffer = (b) => (b instanceof URL ? b : b instanceof ArrayBuffer ? b : b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b.buffer : b.slice().buffer);

/** { lm, ms, memory } of lens.loadModel() on the files' bytes (already in memory). */
export async function loadOurs(lens, { config, weights, tokenizer }) {
  const buffer = Array.isArray(weights) ? weights.map(wholeBuffer) : wholeBuffer(weights);  // one file or its shards
  const t0 = performance.now();
  const lm = await lens.loadModel({ config, weights: buffer, tokenizer });
  const ms = performance.now() - t0;
  return { lm, ms, memory: lm.memory() };
}

/**
 * Greedy decoding of `steps` tokens after `prompt` (ids, BOS first): the prefill is the time to
 * the first token, decoding the rate over the remaining ones. `runs` timed runs after one
 * warm-up; medians. `text` and `ids` are the greedy output (the agreement check's).
 */
export function timeGreedy(lm, prompt, { steps = 128, runs = 3 } = {}) {
  const once = () => {
    const stamps = [];
    const t0 = performance.now();
    const g = lm.generate(prompt, { steps, temperature: 0, onToken: () => { stamps.push(performance.now()); } });
    const n = stamps.length;
    return { text: g.text, ids: Array.from(g.ids), firstMs: stamps[0] - t0,
      decodePerSecond: n > 1 ? ((n - 1) * 1000) / (stamps[n - 1] - stamps[0]) : NaN, tokens: n, stopped: g.stopped };
  };
  const first = once();
  const timed = Array.from({ length: runs }, once);
  return { text: first.text, ids: first.ids, tokens: first.tokens, stopped: first.stopped,
    decodeTokensPerSecond: median(timed.map((r) => r.decodePerSecond)),
    prefillMs: median(timed.map((r) => r.firstMs)), runs };
}

/** Prefill of a longer prompt: lm.generate(prompt, { steps: 1 }) (the prompt plus one token). */
export function timePrefill(lm, prompt, { runs = 3 } = {}) {
  const once = () => {
    const t0 = performance.now();
    lm.generate(prompt, { steps: 1, temperature: 0 });
    return performance.now() - t0;
  };
  once();
  const ms = median(Array.from({ length: runs }, once));
  return { tokens: prompt.length, ms, tokensPerSecond: (prompt.length * 1000) / ms, runs };
}
