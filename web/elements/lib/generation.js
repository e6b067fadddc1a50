// What <attn-generate> shows, without the DOM: its options read from attributes or properties
// (each checked, RangeError/TypeError naming it), and the view of one generation: the prompt's
// run (its causal rows) followed by the generated steps (one attention row per step, produced
// incrementally with the KV cache), as rows, matrices and labels.
import { parseColorScale } from './color-scale.js';
import { isBytePiece as isByte, pieceLabels } from './tokens.js';

const integer = (name, value, { min = 0, max = 2 ** 32 - 1 } = {}) => {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max)
    throw new RangeError(`${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(value)})`);
  return n;
};

const number = (name, value, ok, what) => {
  const x = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof x !== 'number' || !Number.isFinite(x) || !ok(x))
    throw new RangeError(`${name} must be ${what} (got ${JSON.stringify(value)})`);
  return x;
};

/**
 * The options, their defaults (lm.generate's, but a fixed seed so the figure is reproducible) and
 * parsers; `layer`/`head` are checked against the model later.
 */
export const OPTIONS = {
  model: { default: 'stories260K', parse(v) {
    if (typeof v !== 'string' || !v.trim()) throw new TypeError('model must be a model name or URL (got an empty value)');
    return v.trim();
  } },
  prompt: { default: 'Once upon a time', parse(v) {
    if (typeof v !== 'string') throw new TypeError(`prompt must be text (got ${typeof v})`);
    return v;
  } },
  steps: { default: 32, parse: (v) => integer('steps', v, { min: 1, max: 4096 }) },
  temperature: { default: 1, parse: (v) => number('temperature', v, (x) => x >= 0, 'a number ≥ 0 (0: always the most likely token)') },
  topP: { attribute: 'top-p', default: 1, parse: (v) => number('top-p', v, (x) => x > 0 && x <= 1, 'a number in (0, 1]') },
  seed: { default: 1, parse: (v) => integer('seed', v, { max: Number.MAX_SAFE_INTEGER }) },
  layer: { default: 0, parse: (v) => integer('layer', v, { max: 1e6 }) },
  head: { default: 'mean', parse(v) {
    if (v === 'mean' || (typeof v === 'string' && v.trim() === 'mean')) return 'mean';
    return integer('head', v, { max: 1e6 });
  } },
  // How weights map to colours (color-scale.js): the text's tints and the matrix; a redraw only.
  colorScale: { attribute: 'color-scale', default: 'linear', parse: parseColorScale },
};

/** The text each token adds: a character split into byte pieces shows on its last byte. */
function joinBytes(ids, tokens) {
  const out = [...tokens];
  const decoder = new TextDecoder();
  for (let j = 0; j < ids.length; j++) {
    if (!isByte(ids[j], tokens[j])) continue;
    out[j] = decoder.decode(Uint8Array.of(ids[j] - 3), { stream: true });
    if (!isByte(ids[j + 1], tokens[j + 1])) out[j] += decoder.decode();
  }
  return out;
}

/** One generation as the figure draws it. */
export class GenerationView {
  /**
   * @param run lm.run(prompt): { ids, tokens, layers: [{ heads, attention [heads·P·P] }] }
   * @param generation lm.generate(prompt, …): { ids, tokens, steps: [{ id, token, position, attention, candidates }] }
   */
  constructor(run, generation) {
    this.run = run;
    this.generation = generation;
    this.steps = generation.steps;
    this.promptLength = run.ids.length;                       // P, BOS included
    this.ids = [...run.ids, ...this.steps.map((s) => s.id)];
    const tokens = [...run.tokens, ...this.steps.map((s) => s.token)];
    this.pieces = joinBytes(this.ids, tokens);
    this.labels = pieceLabels(this.ids, tokens);
    this.layers = run.layers.length;
    this.heads = run.layers[0]?.heads ?? 0;
    // Rows exist for every position the model read: the prompt's, then one per step but the last
    // token, which is written and never read.
    this.size = this.promptLength - 1 + this.steps.length;
    for (const [k, step] of this.steps.entries())
      if (step.position !== this.promptLength - 1 + k)
        throw new Error(`generate step ${k} is at position ${step.position}, expected ${this.promptLength - 1 + k}`);
    this.matrices = new Map();
  }

  /** Row i (the query at position i) over keys 0…i, for a layer and a head index or 'mean'. */
  row(i, layer, head) {
    const P = this.promptLength, out = new Float32Array(i + 1);
    const heads = head === 'mean' ? [...Array(this.heads).keys()] : [head];
    for (const hd of heads) {
      if (i < P - 1) {
        const a = this.run.layers[layer].attention, base = (hd * P + i) * P;
        for (let j = 0; j <= i; j++) out[j] += a[base + j];
      } else {
        const a = this.steps[i - (P - 1)].attention[layer], base = hd * (i + 1);
        for (let j = 0; j <= i; j++) out[j] += a[base + j];
      }
    }
    if (heads.length > 1) for (let j = 0; j <= i; j++) out[j] /= heads.length;
    return out;
  }

  /** Where step k's token looked: the row of the position that produced it. */
  looked(k, layer, head) {
    return this.row(this.promptLength - 1 + k, layer, head);
  }

  /** The size×size causal matrix of every row (the last few layer/head choices are kept). */
  matrix(layer, head) {
    const key = `${layer}/${head}`;
    if (!this.matrices.has(key)) {
      if (this.matrices.size >= 4) this.matrices.delete(this.matrices.keys().next().value);
      const n = this.size, m = new Float32Array(n * n);
      for (let i = 0; i < n; i++) m.set(this.row(i, layer, head), i * n);
      this.matrices.set(key, m);
    }
    return this.matrices.get(key);
  }

  /** How many rows are known when step k (−1: none yet) is shown. */
  filledRows(k) {
    return Math.min(this.size, this.promptLength + k);
  }
}
