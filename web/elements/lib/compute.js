// From checked data and the figure's state (scale, temperature, mask) to attention weights.
// Vectors and projections go through the wasm engine (head by head, lazy-weights.js); a model's
// run (runModel, the model add-on) becomes precomputed weights; precomputed weights are
// re-weighted in JavaScript (a temperature T turns softmax(s) into softmax(s/T) = w^(1/T)
// renormalised; a mask renormalises over the kept keys), since there are no scores to recompute.
// Mean, max and rollout of the shown layer come from the engine too (selectedMatrix).
import { DataError, paddingGuess } from './data.js';
import { LazyWeights, lazyOf, lazyWeightsArray } from './lazy-weights.js';
import { pieceLabels } from './tokens.js';

/** 'auto' → 1/√d, 'none' → 1, or the number itself; divided by the temperature. */
export function effectiveScale(scale, temperature, d) {
  const base = scale === 'auto' ? 1 / Math.sqrt(d) : scale === 'none' ? 1 : scale;
  return base / temperature;
}

/** The masks to apply: { causal, keyMask } from the mask state ('none', 'causal', 'padding', 'causal padding'). */
export function masksFor(data, mask) {
  const words = new Set(mask.split(' '));
  const keyMask = words.has('padding') ? data.keyMask ?? paddingGuess(data.keyTokens ?? data.tokens) : null;
  return { causal: words.has('causal'), keyMask };
}

/**
 * Whether cell (i, j) is masked out. After hiding tokens (filter.js) `queryPositions` and
 * `keyPositions` may give the original positions of rows and columns: causal compares those.
 */
export function isMasked(masks, i, j) {
  const after = masks.keyPositions ? masks.keyPositions[j] > masks.queryPositions[i] : j > i;
  return (masks.causal && after) || (masks.keyMask != null && masks.keyMask[j] === 0);
}

/** Masked cells of an nQ×nK matrix as 1s (for drawing), or null when nothing is masked. */
export function maskMatrix(masks, nQ, nK = nQ) {
  if (!masks.causal && !masks.keyMask) return null;
  const out = new Uint8Array(nQ * nK);
  // Row by row (= isMasked for every cell, ~10× faster at n = 512): the key mask, then causal.
  for (let i = 0; i < nQ; i++) {
    const row = out.subarray(i * nK, (i + 1) * nK);
    if (masks.keyMask) for (let j = 0; j < nK; j++) row[j] = masks.keyMask[j] === 0 ? 1 : 0;
    if (masks.causal) row.fill(1, masks.keyPositions ? firstAfter(masks.keyPositions, masks.queryPositions[i]) : i + 1);
  }
  return out;
}

// The first column whose (increasing) original position is past `position`.
function firstAfter(positions, position) {
  let lo = 0, hi = positions.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (positions[mid] > position) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The first key of row `i` a causal mask hides (nK when none): row loops stop there. */
export function causalEnd(masks, i, nK) {
  if (!masks.causal) return nK;
  return masks.keyPositions ? firstAfter(masks.keyPositions, masks.queryPositions[i]) : Math.min(nK, i + 1);
}

// Rows of `weights` re-weighted into `out` (same length, rows of nK; row r is query r % nQ).
function reweightInto(weights, out, nQ, nK, temperature, masks) {
  const power = 1 / temperature, n = nK, keep = masks.keyMask;
  for (let r = 0; r < out.length / n; r++) {
    const row = r * n, end = causalEnd(masks, r % nQ, n);
    if (power === 1 && !keep) normalizeRow(weights, out, row, row + end);  // a causal mask alone
    else {
      let sum = 0;
      for (let j = 0; j < end; j++) {
        const w = weights[row + j];
        const x = (keep && keep[j] === 0) || w === 0 ? 0 : power === 1 ? w : w ** power;
        out[row + j] = x;
        sum += x;
      }
      if (sum > 0) for (let j = 0; j < end; j++) out[row + j] /= sum;
    }
    out.fill(0, row + end, row + n);
  }
  return out;
}

// The loop above with nothing masked and T = 1: alone, V8 optimises it (8192²: ~3× faster).
function normalizeRow(weights, out, from, to) {
  let sum = 0;
  for (let c = from; c < to; c++) sum += weights[c];
  if (!(sum > 0)) sum = 1;
  for (let c = from; c < to; c++) out[c] = weights[c] / sum;
}

// The weights of one layer per entry, computed head by head when read (lazy-weights.js): a
// figure shows one head, so a change recomputes that head only; reading `weights[layer]` fills
// the rest. `compute(layer, first, count, target)` writes heads first…first+count−1.
function lazyWeights(data, nK, pool, compute, whole = false) {
  const size = data.n * nK, length = data.heads * size;
  const lazy = new LazyWeights({
    layers: data.kind === 'attention' ? data.layers : 1, heads: data.heads, size, compute, whole,
    provide: (layer) => (pool ? pool.take(`weights/${layer}`, length) : new Float32Array(length)),
  });
  return lazyWeightsArray(lazy, data.kind === 'attention' ? data.layers : 1);
}

// What the state shows is computed now (so errors surface here, not on a later read, and the
// figure's pooled arrays are taken in order); other heads when first read. Indices past the data's are
// clamped as the figure clamps them.
function computeShown(result, { layer = 0, head = 0 } = {}) {
  if (layer === 'rollout') {
    for (let l = 0; l < result.layers; l++) void result.weights[l];
    return;
  }
  const l = Math.min(Math.max(0, Number(layer) || 0), result.layers - 1);
  if (typeof head === 'string') void result.weights[l];
  else headMatrix(result, l, Math.min(Math.max(0, Number(head) || 0), result.heads - 1));
}

/**
 * Attention weights for every layer and head: { tokens, n (= nQ), nQ, nK, queryTokens,
 * keyTokens (= tokens for self-attention), layers, heads, weights: [layer]
 * Float32Array[heads·nQ·nK], masks, scale (the effective factor, or null for precomputed weights),
 * d (the per-head width, or null) }. `state` = { scale, temperature, mask, layer, head }: the
 * layer and head shown are computed now, the other heads when first read (`weights[layer]`
 * reads all of a layer; headMatrix one head). With a `pool` (buffers.js), the weights are
 * written into its reused arrays: the engine computes them weights-only (no A·V) straight into
 * them.
 */
export function computeWeights(lens, data, state, pool = null) {
  const { n } = data;
  const nK = data.nK ?? n, keyTokens = data.keyTokens ?? data.tokens;
  const masks = masksFor(data, state.mask);
  const base = { tokens: data.tokens, n, nQ: n, nK, queryTokens: data.tokens, keyTokens, masks, kind: data.kind };
  let result;
  if (data.kind === 'attention') {
    const same = state.temperature === 1 && !masks.causal && !masks.keyMask;
    const size = n * nK;
    result = { ...base, layers: data.layers, heads: data.heads, scale: null, d: null,
      weights: same ? data.weights : lazyWeights(data, nK, pool, (layer, first, count, target) =>
        reweightInto(data.weights[layer].subarray(first * size, (first + count) * size), target, n, nK, state.temperature, masks)) };
  } else if (data.kind === 'vectors') {
    const scale = effectiveScale(state.scale, state.temperature, data.dK);
    const { dK } = data;
    result = { ...base, layers: 1, heads: data.heads, scale, d: dK,
      weights: lazyWeights(data, nK, pool, (layer, first, count, target) => {
        lens.attention(data.q.subarray(first * n * dK, (first + count) * n * dK), data.k.subarray(first * nK * dK, (first + count) * nK * dK), null, {
          dK, dV: data.dV, heads: count, causal: masks.causal, scale, keyMask: masks.keyMask, output: false, into: { weights: target },
        });
      }) };
  } else {  // projections: the engine projects X for every head in one call
    const d = data.dModel / data.heads;
    const scale = effectiveScale(state.scale, state.temperature, d);
    result = { ...base, layers: 1, heads: data.heads, scale, d,
      weights: lazyWeights(data, nK, pool, (layer, first, count, target) => {
        lens.multiHead(data.x, {
          ...(data.xKV ? { xKV: data.xKV } : {}), dModel: data.dModel, heads: data.heads, wQ: data.wQ, wK: data.wK, wV: data.wV, wO: data.wO,
          bQ: data.bQ, bK: data.bK, bV: data.bV, bO: data.bO, causal: masks.causal, scale,
          keyMask: masks.keyMask, output: false, into: { weights: target },
        });
      }, true) };
  }
  computeShown(result, state);
  return result;
}

/** One head's nQ×nK matrix (a view, not a copy). */
export function headMatrix(result, layer, head) {
  const lazy = lazyOf(result.weights);
  if (lazy) return lazy.head(layer, head);
  const nn = result.n * (result.nK ?? result.n);
  return result.weights[layer].subarray(head * nn, (head + 1) * nn);
}

// Aggregates computed for a result, kept while it lives: `${layer}/${head}` → Float32Array.
const aggregates = new WeakMap();

/** Whether (layer, head) names an aggregate, which the engine computes. */
export const isAggregate = (layer, head) => typeof layer === 'string' || typeof head === 'string';

/**
 * The nQ×nK matrix a figure shows for `layer` (index or 'rollout') and `head` (index, 'mean' or
 * 'max'): one head's weights, or the element-wise mean/max over the layer's heads
 * (lens.aggregate), or attention rollout over every layer (lens.rollout; heads ignored). Rollout
 * needs self-attention (nQ = nK).
 */
export function selectedMatrix(lens, result, layer, head) {
  if (!isAggregate(layer, head)) return headMatrix(result, layer, head);
  if (!lens) throw new Error('aggregating heads or layers needs the engine, which is not loaded');
  const nK = result.nK ?? result.n;
  const key = layer === 'rollout' ? 'rollout' : `${layer}/${head}`;
  let cache = aggregates.get(result);
  if (!cache) aggregates.set(result, (cache = new Map()));
  let matrix = cache.get(key);
  if (matrix) return matrix;
  if (layer === 'rollout') {
    if (nK !== result.n)
      throw new RangeError(`layer="rollout" needs self-attention: these weights are ${result.n}×${nK} (queries × keys)`);
    matrix = lens.rollout(result.weights, { heads: result.heads, n: result.n });
  } else {
    matrix = lens.aggregate(result.weights[layer], { heads: result.heads, nQ: result.n, nK, mode: head });
  }
  cache.set(key, matrix);
  return matrix;
}

// y[n, out] = x[n, in]·w[in, out] + b, columns `from`…`from + width` of the output only.
function project(x, n, dModel, w, b, from, width) {
  const y = new Float32Array(n * width);
  for (let i = 0; i < n; i++)
    for (let o = 0; o < width; o++) {
      let acc = b ? b[from + o] : 0;
      for (let c = 0; c < dModel; c++) acc += x[i * dModel + c] * w[c * dModel + from + o];
      y[i * width + o] = acc;
    }
  return y;
}

/** One head's Q, K, V as [n, d] rows: sliced from vectors, or projected from X·W. */
export function headVectors(data, head) {
  const { n } = data;
  if (data.kind === 'vectors') {
    const { dK, dV } = data;
    return {
      dK, dV,
      q: data.q.subarray(head * n * dK, (head + 1) * n * dK),
      k: data.k.subarray(head * n * dK, (head + 1) * n * dK),
      v: data.v.subarray(head * n * dV, (head + 1) * n * dV),
    };
  }
  const d = data.dModel / data.heads, from = head * d;
  return {
    dK: d, dV: d,
    q: project(data.x, n, data.dModel, data.wQ, data.bQ, from, d),
    k: project(data.x, n, data.dModel, data.wK, data.bK, from, d),
    v: project(data.x, n, data.dModel, data.wV, data.bV, from, d),
  };
}

/**
 * Every step of one head's attention, for the pipeline figure: scores QKᵀ, scaled scores,
 * masked scores (−Infinity where masked), exp(s − row max), weights A (from the engine), and
 * the output A·V (from the engine).
 */
export function computeSteps(lens, data, state, head) {
  const { n } = data;
  const { q, k, v, dK, dV } = headVectors(data, head);
  const masks = masksFor(data, state.mask);
  const scale = effectiveScale(state.scale, state.temperature, dK);
  const engine = lens.attention(q, k, v, {
    dK, dV, causal: masks.causal, scale, keyMask: masks.keyMask, returnScores: true,
  });
  // A score beyond float32 (|q·k| > 3.4e38) would make every later step of its row NaN.
  const overflow = engine.scores.findIndex((s) => !Number.isFinite(s));
  if (overflow >= 0)
    throw new DataError(`the score of query ${Math.floor(overflow / n)} and key ${overflow % n} (Q·K) is beyond float32's range: scale Q and K down`);
  const scaled = engine.scores.map((s) => s * scale);
  const masked = scaled.map((s, c) => (isMasked(masks, Math.floor(c / n), c % n) ? -Infinity : s));
  const exp = new Float32Array(n * n), sums = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let max = -Infinity;
    for (let j = 0; j < n; j++) max = Math.max(max, masked[i * n + j]);
    for (let j = 0; j < n; j++) {
      const e = max === -Infinity ? 0 : Math.exp(masked[i * n + j] - max);
      exp[i * n + j] = e;
      sums[i] += e;
    }
  }
  return {
    tokens: data.tokens, n, dK, dV, scale, masks, q, k, v,
    scores: engine.scores, scaled, masked, exp, sums, weights: engine.weights, output: engine.output,
  };
}

/**
 * A model run by the model add-on (`lens.loadModel`, web/model/): `model` is "use-lite" (the
 * model shipped next to the engine), "stories260K" (the bundled causal LM: its attention is
 * causal, BOS shows as <s>) or the same-site URL of a model file. The add-on returns
 * { tokens, layers: [{ heads, attention: Float32Array[heads·n·n] }] }; this turns it into
 * precomputed-attention data. The only place that knows the add-on's shape.
 */
export async function runModel(lens, { model, text }, parseTokens) {
  if (typeof lens.loadModel !== 'function')
    throw new Error(`model="${model}" needs the attnlens model add-on, which is not part of this build`);
  const loaded = await lens.loadModel(model === 'use-lite' ? undefined : model);
  const run = await loaded.run(text);
  // SentencePiece marks a word start with ▁ (or a space, for stories260K); show the word itself.
  // A causal LM's byte pieces (a character it has no piece for) show as <0xHH>, not as �.
  const causal = loaded.kind === 'causal-lm';
  const tokens = parseTokens(causal ? pieceLabels(run.ids, run.tokens)
    : run.tokens.map((t) => (t.length > 1 && t.startsWith('▁') ? t.slice(1) : t)));
  const heads = run.layers[0]?.heads ?? 0;
  return Object.freeze({
    kind: 'attention', tokens, n: tokens.length, keyMask: null, causal,
    layers: run.layers.length, heads, weights: run.layers.map((layer) => layer.attention),
  });
}
