// The engine as JavaScript users see it: plain typed arrays in, fresh typed arrays out, errors as
// TypeError/RangeError. No handles to delete: every call frees what it allocated.
import { CallBuffers } from './heap.js';
import * as check from './validate.js';

const ATTENTION_OPTIONS = [
  'dK', 'dV', 'heads', 'causal', 'scale', 'keyMask', 'returnScores', 'weights', 'output', 'into',
];
const MULTI_HEAD_OPTIONS = [
  'dModel', 'heads', 'wQ', 'wK', 'wV', 'wO', 'bQ', 'bK', 'bV', 'bO', 'xKV', 'causal', 'scale', 'keyMask',
  'output', 'into',
];
const F32 = 4;

export class Lens {
  #module;
  #lastCallBytes = 0;

  constructor(module, simd) {
    this.#module = module;
    /** True when the SIMD128 build is running. */
    this.simd = simd;
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
      // returned, of ≤ 96 keys otherwise.
      (nK * (dK + dV + 16) + (wantWeights || returnScores ? 64 * nK : 0) + 64 * (dK + dV + 128)) * F32,
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
   * Benchmarking aid: runs `iterations` steps of 12 independent 4-lane multiply-then-add chains
   * (96 flops a step; WebAssembly SIMD128 has no fused multiply-add) in this module and returns
   * { flops, ms, gflops }: the machine's practical f32x4 ceiling. Call it a few times: the engine
   * swaps in optimised code only for later calls.
   */
  ceilingProbe(iterations = 1e6) {
    const n = check.positiveInteger('iterations', iterations);
    if (n > 0xffffffff) throw new RangeError(`iterations must be < 2^32 (got ${n})`);
    const start = performance.now();
    this.#module.ceilingProbe(n);
    const ms = performance.now() - start;
    const flops = 96 * n;
    return { flops, ms, gflops: flops / ms / 1e6 };
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
