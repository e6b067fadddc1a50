// The engine as JavaScript users see it: plain typed arrays in, fresh typed arrays out, errors as
// TypeError/RangeError. No handles to delete: every call frees what it allocated.
import { CallBuffers } from './heap.js';
import { probeOnce, steadyCeiling } from './ceiling.js';
import { chooseTilesFor } from './tiles.js';
import * as check from './validate.js';

const ATTENTION_OPTIONS = [
  'dK', 'dV', 'heads', 'causal', 'scale', 'keyMask', 'returnScores', 'weights', 'output', 'into',
];
const MULTI_HEAD_OPTIONS = [
  'dModel', 'heads', 'wQ', 'wK', 'wV', 'wO', 'bQ', 'bK', 'bV', 'bO', 'xKV', 'causal', 'scale', 'keyMask',
  'output', 'into',
];
const F32 = 4;
const AGGREGATE_OPTIONS = ['heads', 'nQ', 'nK', 'mode', 'into'];
const ROLLOUT_OPTIONS = ['heads', 'n', 'residual'];

export class Lens {
  #module;
  #lastCallBytes = 0;

  constructor(module, simd, build = simd ? 'simd' : 'scalar', threads = 1) {
    this.#module = module;
    /** Threads that compute a call (the calling thread included); 1 in a single-thread build. */
    this.threads = threads;
    /** True when the threaded (-pthread, Web Worker) build of `build` runs. */
    this.threaded = threads > 1;
    /** True when a SIMD build (SIMD128 or relaxed SIMD) is running. */
    this.simd = simd;
    /** The build that runs: 'relaxed', 'simd' or 'scalar'. */
    this.build = build;
    /** The xsimd architecture of the running kernels ('wasm' or 'scalar'). */
    this.arch = module.simdArch();
    Object.freeze(this);
  }

  /**
   * softmax(scale·QKᵀ + mask)·V over `heads` heads. q [heads·nQ·dK], k [heads·nK·dK],
   * v [heads·nK·dV], row-major float32. `output: false` computes the weights only (skipping A·V;
   * v is then not read and may be null); `into` takes caller arrays to write the results into.
   */
  attention(q, k, v, opts) {
    const o = check.options('options', opts, ATTENTION_OPTIONS);
    const wantOutput = check.boolean('options.output', o.output, true);
    // Finiteness is checked in wasm after the copy (#copyIn): a scan in JS cost as much as the
    // attention itself at small sizes.
    check.floatArray('q', q);
    check.floatArray('k', k);
    check.floatArray('v', v, { optional: !wantOutput });
    if (o.dK === undefined) throw new TypeError('options.dK is required (the query/key width)');
    const dK = check.positiveInteger('options.dK', o.dK);
    const dV = check.positiveInteger('options.dV', o.dV, dK);
    const heads = check.positiveInteger('options.heads', o.heads, 1);
    const nQ = check.rowsOf('q', q, heads * dK, 'heads·dK');
    const nK = check.rowsOf('k', k, heads * dK, 'heads·dK');
    if (v) check.exactLength('v', v, heads * nK * dV, 'heads·nK·dV');
    const causal = check.boolean('options.causal', o.causal, false);
    const scale = check.scale('options.scale', o.scale, 1 / Math.sqrt(dK));
    const keyMask = check.keyMask('options.keyMask', o.keyMask, nK);
    // An `into.scores` array asks for the scores unless returnScores says otherwise.
    const scoresGiven = o.into?.scores !== undefined && o.into?.scores !== null;
    const returnScores = check.boolean('options.returnScores', o.returnScores, scoresGiven);
    const wantWeights = check.boolean('options.weights', o.weights, true);
    if (!wantOutput && !wantWeights)
      throw new RangeError('options.output and options.weights are both false: ask for at least one of them');

    const nn = heads * nQ * nK, nOut = heads * nQ * dV;
    const into = check.into('options.into', o.into, {
      weights: wantWeights ? [nn, 'heads·nQ·nK'] : 'options.weights is false',
      output: wantOutput ? [nOut, 'heads·nQ·dV'] : 'options.output is false',
      scores: returnScores ? [nn, 'heads·nQ·nK'] : 'options.returnScores is false',
    }, this.#module.HEAPU8.buffer);
    // Q·Kᵀ, plus A·V when the output is asked for.
    chooseTilesFor(this.#module, 2 * nn * (dK + (wantOutput ? dV : 0)));
    const buffers = new CallBuffers(
      this.#module,
      {
        q: q.length * F32, k: k.length * F32, v: wantOutput ? v.length * F32 : 0,
        keyMask: keyMask ? nK : 0, output: wantOutput ? nOut * F32 : 0,
        weights: wantWeights ? nn * F32 : 0, scores: returnScores ? nn * F32 : 0,
      },
      `attention with heads·nQ·nK = ${heads}·${nQ}·${nK}`,
      // Scratch the engine keeps (cpp/src/workspace.hpp): K packed per head, V padded to whole
      // tiles, and blocks of ≤ 64 queries: of whole score rows when weights or scores are
      // returned, of ≤ 96 keys otherwise. Each thread of a threaded build has its own.
      (nK * (dK + dV + 16) + (wantWeights || returnScores ? 64 * nK : 0) + 64 * (dK + dV + 128)) * F32 * this.threads,
    );
    try {
      this.#copyIn(buffers, 'q', q);
      this.#copyIn(buffers, 'k', k);
      if (wantOutput) this.#copyIn(buffers, 'v', v);
      buffers.write('keyMask', keyMask);
      const a = buffers.address;
      this.#run(this.#module.attention({
        q: a.q, k: a.k, v: a.v, keyMask: a.keyMask, output: a.output, weights: a.weights,
        scores: a.scores, heads, nQ, nK, dK, dV, scale, causal, simd: this.simd,
      }));
      const result = {};
      if (wantOutput) result.output = buffers.result('output', nOut, into.output);
      if (wantWeights) result.weights = buffers.result('weights', nn, into.weights);
      if (returnScores) result.scores = buffers.result('scores', nn, into.scores);
      this.#lastCallBytes = buffers.bytes + this.#module.lastCallScratch();
      return result;
    } finally {
      buffers.free();
    }
  }

  /**
   * Multi-head attention with projections, rows as vectors: Q = X·W_Q + b_Q, K = X_KV·W_K + b_K,
   * V = X_KV·W_V + b_V (W_* [dModel, dModel]); head h takes columns h·dHead…(h+1)·dHead;
   * output = concat(heads)·W_O + b_O. Self-attention unless `xKV` is given. `output: false`
   * computes the weights only (no V projection, A·V or W_O; wV may then be left out); `into`
   * takes caller arrays for the results.
   */
  multiHead(x, opts) {
    const o = check.options('options', opts, MULTI_HEAD_OPTIONS);
    const wantOutput = check.boolean('options.output', o.output, true);
    check.floatArray('x', x);
    if (o.dModel === undefined) throw new TypeError('options.dModel is required (the width of x)');
    const dModel = check.positiveInteger('options.dModel', o.dModel);
    const heads = check.positiveInteger('options.heads', o.heads, 1);
    if (dModel % heads !== 0)
      throw new RangeError(`options.heads (${heads}) must divide options.dModel (${dModel})`);
    const nQ = check.rowsOf('x', x, dModel, 'dModel');
    const xKV = check.floatArray('options.xKV', o.xKV, { optional: true });
    const nK = xKV ? check.rowsOf('options.xKV', xKV, dModel, 'dModel') : nQ;
    const matrices = {};
    for (const name of ['wQ', 'wK', 'wV', 'wO']) {
      const optional = name === 'wO' || (name === 'wV' && !wantOutput);
      const m = check.floatArray(`options.${name}`, o[name], { optional });
      if (m) check.exactLength(`options.${name}`, m, dModel * dModel, 'dModel·dModel');
      matrices[name] = m;
    }
    for (const name of ['bQ', 'bK', 'bV', 'bO']) {
      const b = check.floatArray(`options.${name}`, o[name], { optional: true });
      if (b) check.exactLength(`options.${name}`, b, dModel, 'dModel');
      matrices[name] = b;
    }
    if (matrices.bO && !matrices.wO) throw new RangeError('options.bO needs options.wO');
    const causal = check.boolean('options.causal', o.causal, false);
    const scale = check.scale('options.scale', o.scale, 1 / Math.sqrt(dModel / heads));
    const keyMask = check.keyMask('options.keyMask', o.keyMask, nK);
    const nn = heads * nQ * nK, nOut = nQ * dModel;
    const into = check.into('options.into', o.into, {
      weights: [nn, 'heads·nQ·nK'],
      output: wantOutput ? [nOut, 'nQ·dModel'] : 'options.output is false',
    }, this.#module.HEAPU8.buffer);
    // Weights only: the value and output projections are not used, so not copied in.
    if (!wantOutput) for (const name of ['wV', 'bV', 'wO', 'bO']) matrices[name] = null;

    const sizes = { x: x.length * F32, xKV: xKV ? xKV.length * F32 : 0, keyMask: keyMask ? nK : 0 };
    for (const [name, m] of Object.entries(matrices)) sizes[name] = m ? m.length * F32 : 0;
    sizes.output = wantOutput ? nOut * F32 : 0;
    sizes.weights = nn * F32;
    chooseTilesFor(this.#module, 2 * nn * 2 * (dModel / heads));  // the attention inside
    const buffers = new CallBuffers(
      this.#module, sizes, `multi-head attention with heads·nQ·nK = ${heads}·${nQ}·${nK}`,
      // Scratch: projections and per-head copies of Q, K, V, O, plus Kᵀ.
      (6 * Math.max(nQ, nK) * dModel) * F32);
    try {
      this.#copyIn(buffers, 'x', x);
      if (xKV) this.#copyIn(buffers, 'xKV', xKV, 'options.xKV');
      buffers.write('keyMask', keyMask);
      for (const [name, m] of Object.entries(matrices)) if (m) this.#copyIn(buffers, name, m, `options.${name}`);
      const a = buffers.address;
      this.#run(this.#module.multiHead({
        xQ: a.x, xKV: a.xKV, wQ: a.wQ, wK: a.wK, wV: a.wV, wO: a.wO, bQ: a.bQ, bK: a.bK, bV: a.bV,
        bO: a.bO, keyMask: a.keyMask, output: a.output, weights: a.weights, nQ, nK, dModel, heads,
        scale, causal, simd: this.simd,
      }));
      const result = { weights: buffers.result('weights', nn, into.weights) };
      if (wantOutput) result.output = buffers.result('output', nOut, into.output);
      return result;
    } finally {
      buffers.free();
    }
  }

  // ——— aggregation across heads and layers (C2) ———

  /**
   * The element-wise mean or max over heads of weights [heads·nQ·nK] → Float32Array [nQ·nK]
   * (into `options.into` when given). Max rows do not sum to 1.
   */
  aggregate(weights, opts) {
    const o = check.options('options', opts, AGGREGATE_OPTIONS);
    check.floatArray('weights', weights);
    if (o.heads === undefined) throw new TypeError('options.heads is required (heads in weights)');
    const heads = check.positiveInteger('options.heads', o.heads);
    const mode = o.mode ?? 'mean';
    if (typeof mode !== 'string') throw new TypeError(`options.mode must be 'mean' or 'max' (got ${check.describe(mode)})`);
    if (mode !== 'mean' && mode !== 'max') throw new RangeError(`options.mode must be 'mean' or 'max' (got '${mode.slice(0, 40)}')`);
    const { nQ, nK } = matrixShape(weights, heads, o.nQ, o.nK, 'heads');
    const into = check.floatArray('options.into', o.into, { optional: true });
    if (into) check.exactLength('options.into', into, nQ * nK, 'nQ·nK');
    const buffers = new CallBuffers(this.#module, { weights: weights.length * F32, out: nQ * nK * F32 },
      `aggregate with heads·nQ·nK = ${heads}·${nQ}·${nK}`);
    try {
      this.#copyIn(buffers, 'weights', weights);
      const a = buffers.address;
      this.#run(this.#module.aggregateHeads(a.weights, a.out, heads, nQ, nK, mode === 'max', this.simd));
      if (!into) return buffers.readFloats('out', nQ * nK);
      into.set(this.#module.HEAPF32.subarray(a.out / F32, a.out / F32 + nQ * nK));
      return into;
    } finally {
      buffers.free();
    }
  }

  /**
   * Attention rollout (Abnar & Zuidema, 2020): R = Â_L·…·Â_1 with Â_l = rownorm(residual·I +
   * (1 − residual)·mean over heads of layers[l]); `layers` first layer first, each
   * Float32Array [heads·n·n] of weights ≥ 0 → Float32Array [n·n]. Row i: how much of token i's
   * last-layer representation comes from input token j. Costs 2·n³ flops per layer after the
   * first, refused above 2^38 in total.
   */
  rollout(layers, opts) {
    const o = check.options('options', opts, ROLLOUT_OPTIONS);
    if (!Array.isArray(layers))
      throw new TypeError(`layers must be an Array of Float32Array, one per layer (got ${check.describe(layers)})`);
    if (layers.length === 0) throw new RangeError('layers is empty: give at least one layer');
    layers.forEach((layer, l) => check.floatArray(`layers[${l}]`, layer));
    if (o.heads === undefined) throw new TypeError('options.heads is required (heads per layer)');
    const heads = check.positiveInteger('options.heads', o.heads);
    const n = o.n === undefined ? Math.sqrt(layers[0].length / heads) : check.positiveInteger('options.n', o.n);
    if (!Number.isInteger(n) || n < 1)
      throw new RangeError(`layers[0].length (${layers[0].length}) is not heads·n·n for any n: give options.n`);
    const residual = o.residual ?? 0.5;
    if (typeof residual !== 'number') throw new TypeError(`options.residual must be a number (got ${check.describe(residual)})`);
    if (!(residual >= 0 && residual <= 1)) throw new RangeError(`options.residual must be between 0 and 1 (got ${residual})`);
    const flops = (layers.length - 1) * 2 * n ** 3, limit = this.#module.rolloutMaxFlops();
    if (flops > limit)
      throw new RangeError(`rollout of ${layers.length} layers of n = ${n} tokens needs ${flops.toExponential(2)} ` +
        `flops (2·n³ per layer after the first), more than the limit of ${limit.toExponential(2)} (about 10 s): ` +
        'use fewer layers or tokens');
    layers.forEach((layer, l) => check.exactLength(`layers[${l}]`, layer, heads * n * n, 'heads·n·n'));
    const buffers = new CallBuffers(this.#module,
      { layer: heads * n * n * F32, r: n * n * F32, scratch: 2 * n * n * F32 },
      `rollout with heads·n·n = ${heads}·${n}·${n}`);
    try {
      const a = buffers.address;
      layers.forEach((layer, l) => {
        this.#copyIn(buffers, 'layer', layer, `layers[${l}]`);
        const error = this.#module.rolloutLayer(a.layer, a.r, a.scratch, heads, n, residual, l === 0, this.simd);
        this.#run(error && error.replace(/^layer\[/, `layers[${l}][`));
      });
      return buffers.readFloats('r', n * n);
    } finally {
      buffers.free();
    }
  }

  /**
   * Loads a real pretrained model, run by this engine's kernels in a module of its own (imported
   * on first use): Universal Sentence Encoder lite (see web/model/index.d.ts) or a causal
   * language model such as 'stories260K' (see web/model/language-model.d.ts).
   */
  loadModel(source, options) {
    // The models run in the model module of this engine's build (relaxed or SIMD128) and with
    // its threads (a threaded engine gets a threaded model module: products on the pool).
    return import('../model/index.js').then((m) => m.loadModel(source, options, { build: this.build, threads: this.threads }));
  }

  /**
   * Benchmarking aid: the machine's steady-state f32x4 ceiling in this module (web/engine/
   * ceiling.js): 8, 12, 16 and 24 independent 4-lane chains (the best count wins), multiply then
   * add, and fused multiply-add where the build has it, warmed up, then `calls` calls; best,
   * median and worst GFLOP/s. A number
   * instead of options times one call of the multiply-add chains (the earlier form).
   */
  ceilingProbe(options) {
    return typeof options === 'number' ? probeOnce(this.#module, options)
      : steadyCeiling(this.#module, options);
  }

  /**
   * Benchmarking aid: the working memory of the last successful attention() call in bytes, i.e.
   * the wasm heap it needed at its peak: its own buffers (inputs, outputs) plus the engine
   * scratch it used (kept and reused by later calls).
   */
  lastCallBytes() {
    return this.#lastCallBytes;
  }

  /** Bytes of the wasm heap in use and reserved: for leak checks and benchmarks. */
  memory() {
    return { inUse: this.#module.heapInUse(), heapSize: this.#module.HEAPU8.length };
  }

  // The C++ side validates again; a message from it means the JS checks missed a case.
  #run(error) {
    if (error) throw new RangeError(error);
  }

  // Copies a Float32Array into `slot` and rejects NaN/±Infinity, scanning the copy in wasm (SIMD);
  // `name` is the argument the message names.
  #copyIn(buffers, slot, array, name = slot) {
    buffers.write(slot, array);
    const i = this.#module.firstNonFinite(buffers.address[slot], array.length);
    if (i >= 0) throw check.nonFinite(name, array, i);
  }
}

// nQ, nK of a [heads·nQ·nK] buffer from what was given: both, one (the other follows), or none
// (square).
function matrixShape(weights, heads, nQGiven, nKGiven, headsText) {
  const nQ = nQGiven === undefined ? undefined : check.positiveInteger('options.nQ', nQGiven);
  const nK = nKGiven === undefined ? undefined : check.positiveInteger('options.nK', nKGiven);
  const per = weights.length / heads;
  if (nQ === undefined && nK === undefined) {
    const n = Math.sqrt(per);
    if (!Number.isInteger(n) || n < 1)
      throw new RangeError(`weights.length (${weights.length}) is not ${headsText}·n·n for any n: give options.nQ and options.nK`);
    return { nQ: n, nK: n };
  }
  const q = nQ ?? per / nK, k = nK ?? per / nQ;
  if (!Number.isInteger(q) || !Number.isInteger(k) || q < 1 || k < 1)
    throw new RangeError(`weights.length (${weights.length}) is not ${headsText}·nQ·nK for nQ = ${nQ ?? '?'}, nK = ${nK ?? '?'}`);
  check.exactLength('weights', weights, heads * q * k, `${headsText}·nQ·nK`);
  return { nQ: q, nK: k };
}
