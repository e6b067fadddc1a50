// `attnlens run MODEL "text" [-o run.json] [--generate N]`: runs a language model (a Hugging Face
// folder, or 'stories260K') on the text and writes the figures' JSON: the tokens and every
// layer's and head's attention ([layers][heads][n][n], rows are queries), which `attnlens render`
// draws; --generate N adds N greedy steps (each new token, its position, its attention rows
// [layers][heads][position + 1] and its ten most probable candidates).
import { init } from '../attnlens.js';

const round = (x) => Math.round(x * 1e6) / 1e6;  // six decimals keep the files readable

function nested(flat, heads, rows, cols) {
  return Array.from({ length: heads }, (_, h) =>
    Array.from({ length: rows }, (_, i) => Array.from(flat.subarray((h * rows + i) * cols, (h * rows + i + 1) * cols), round)));
}

/** The figures' JSON for `model` run on `text` (and `generate` greedy steps). */
export async function runToJson(model, text, { generate = 0 } = {}) {
  const lens = await init();
  const lm = await lens.loadModel(model);
  if (typeof lm.run !== 'function' || !lm.kind) throw new Error(`${model} is not a language model`);
  const r = lm.run(text);
  const n = r.ids.length, { heads, architecture } = lm.config;
  const out = {
    source: `${model} (${architecture})`,  // not "model": render would run that model itself
    kind: lm.kind,
    tokens: r.tokens,
    ids: Array.from(r.ids),
    causal: lm.kind === 'causal-lm',
    heads,
    attention: r.layers.map((layer) => nested(layer.attention, heads, n, n)),
  };
  if (generate > 0) {
    if (lm.kind !== 'causal-lm') throw new Error(`--generate needs a causal language model; ${model} is a ${lm.kind}`);
    const g = lm.generate(text, { steps: generate, temperature: 0 });
    out.generation = {
      text: g.text,
      stopped: g.stopped,
      steps: g.steps.map((s) => ({
        id: s.id, token: s.token, position: s.position,
        attention: s.attention.map((row) => nested(row, heads, 1, s.position + 1).map((h) => h[0])),
        candidates: s.candidates.map((c) => ({ id: c.id, token: c.token, p: round(c.p) })),
      })),
    };
  }
  return out;
}
