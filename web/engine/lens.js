// The engine as JavaScript users see it: plain typed arrays in, fresh typed arrays out, errors as
// TypeError/RangeError. No handles to delete: every call frees what it allocated.
import { CallBuffers } from './heap.js';
import { probeOnce, steadyCeiling } from './ceiling.js';
import * as check from './validate.js';

const ATTENTION_OPTIONS = ['dK', 'dV', 'heads', 'causal', 'scale', 'keyMask', 'returnScores', 'weights'];
const MULTI_HEAD_OPTIONS = [
  'dModel', 'heads', 'wQ', 'wK', 'wV', 'wO', 'bQ', 'bK', 'bV', 'bO', 'xKV', 'causal', 'scale', 'keyMask',
];
const F32 = 4;

export class Lens {
  #module;
  #lastCallBytes = 0;

  constructor(module, simd, build = simd ? 'simd' : 'scalar') {
    this.#module = module;
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
   * v [heads·nK·dV], row-major float32.
   */
  attention(q, k, v, opts) {
    const o = check.options('options', opts, ATTENTION_OPTIONS);
    // Finiteness is checked in wasm after the copy (#copyIn): a scan in JS cost as much as the
    // attention itself at small sizes.
    check.floatArray('q', q);
    check.floatArray('k', k);
    check.floatArray('v', v);
    if (o.dK === undefined) throw new TypeError('options.dK is required (the query/key width)');
    const dK = check.positiveInteger('options.dK', o.dK);
    const dV = check.positiveInteger('options.dV', o.dV, dK);
    const heads = check.positiveInteger('options.heads', o.heads, 1);
    const nQ = check.rowsOf('q', q, heads * dK, 'heads·dK');
    const nK = check.rowsOf('k', k, heads * dK, 'heads·dK');
    check.exactLength('v', v, heads * nK * dV, 'heads·nK·dV');
    const causal = check.boolean('options.causal', o.causal, false);
    const scale = check.scale('options.scale', o.scale, 1 / Math.sqrt(dK));
    const keyMask = check.keyMask('options.keyMask', o.keyMask, nK);
    const returnScores = check.boolean('options.returnScores', o.returnScores, false);
    const wantWeights = check.boolean('options.weights', o.weights, true);

    const nn = heads * nQ * nK;
    const buffers = new CallBuffers(
      this.#module,
      {
        q: q.length * F32, k: k.length * F32, v: v.length * F32, keyMask: keyMask ? nK : 0,
        output: heads * nQ * dV * F32, weights: wantWeights ? nn * F32 : 0,
        scores: returnScores ? nn * F32 : 0,
      },
      `attention with heads·nQ·nK = ${heads}·${nQ}·${nK}`,
      // Scratch the engine keeps (cpp/src/workspace.hpp): K packed per head, V padded to whole
      // tiles, and blocks of ≤ 64 queries: of whole score rows when weights or scores are
      // returned, of ≤ 96 keys otherwise.
      (nK * (dK + dV + 16) + (wantWeights || returnScores ? 64 * nK : 0) + 64 * (dK + dV + 128)) * F32,
    );
    try {
      this.#copyIn(buffers, 'q', q);
      this.#copyIn(buffers, 'k', k);
      this.#copyIn(buffers, 'v', v);
      buffers.write('keyMask', keyMask);
      const a = buffers.address;
      this.#run(this.#module.attention({
        q: a.q, k: a.k, v: a.v, keyMask: a.keyMask, output: a.output, weights: a.weights,
        scores: a.scores, heads, nQ, nK, dK, dV, scale, causal, simd: this.simd,
      }));
      const result = { output: buffers.readFloats('output', heads * nQ * dV) };
      if (wantWeights) result.weights = buffers.readFloats('weights', nn);
      if (returnScores) result.scores = buffers.readFloats('scores', nn);
      this.#lastCallBytes = buffers.bytes + this.#module.lastCallScratch();
      return result;
    } finally {
      buffers.free();
    }
  }

  /**
   * Multi-head attention with projections, rows as vectors: Q = X·W_Q + b_Q, K = X_KV·W_K + b_K,
   * V = X_KV·W_V + b_V (W_* [dModel, dModel]); head h takes columns h·dHead…(h+1)·dHead;
   * output = concat(heads)·W_O + b_O. Self-attention unless `xKV` is given.
   */
  multiHead(x, opts) {
    const o = check.options('options', opts, MULTI_HEAD_OPTIONS);
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
      const m = check.floatArray(`options.${name}`, o[name], { optional: name === 'wO' });
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

    const sizes = { x: x.length * F32, xKV: xKV ? xKV.length * F32 : 0, keyMask: keyMask ? nK : 0 };
    for (const [name, m] of Object.entries(matrices)) sizes[name] = m ? m.length * F32 : 0;
    sizes.output = nQ * dModel * F32;
    sizes.weights = heads * nQ * nK * F32;
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
      return {
        weights: buffers.readFloats('weights', heads * nQ * nK),
        output: buffers.readFloats('output', nQ * dModel),
      };
    } finally {
      buffers.free();
    }
  }

  /**
   * Loads a real pretrained model, Universal Sentence Encoder lite, run by this engine's kernels
   * in a module of its own (imported on first use: the default import stays small). `source`:
   * nothing (Node: the installed model package; browsers: web/dist/use-lite.bin), a URL or path,
   * an ArrayBuffer, or { model, weights, vocab }. See web/model/index.d.ts.
   */
  loadModel(source, options) {
    return import('../model/index.js').then((m) => m.loadModel(source, options));
  }

  /**
   * Benchmarking aid: the machine's steady-state f32x4 ceiling in this module (web/engine/
   * ceiling.js): 12 independent 4-lane chains, multiply then add, and fused multiply-add where
   * the build has it, warmed up, then `calls` calls; best, median and worst GFLOP/s. A number
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
