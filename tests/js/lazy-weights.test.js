// compute.js computes the layer and head a figure shows, the other heads when first read
// (lazy-weights.js). Every head, read in any order, must equal the float64 reference at the
// result's own state: vectors (self- and cross-attention, masks), projections, precomputed
// weights re-weighted, hidden tokens; an older result whose pooled array a newer one took
// computes again into its own array; errors still come from computeWeights itself.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { init } from 'attnlens';
import * as ref from './reference.js';
import { BufferPool } from '../../web/elements/lib/buffers.js';
import { computeWeights, headMatrix, selectedMatrix } from '../../web/elements/lib/compute.js';
import { parseData } from '../../web/elements/lib/data.js';
import { applyFilter } from '../../web/elements/lib/filter.js';
import { lazyOf } from '../../web/elements/lib/lazy-weights.js';

const lens = await init();
const heads = 3, nQ = 7, nK = 9, dK = 5;
const tokens = (count, word) => Array.from({ length: count }, (_, i) => `${word}${i}`);
const q = ref.uniform(heads * nQ * dK, 41, -2, 2), k = ref.uniform(heads * nK * dK, 42, -2, 2), v = ref.uniform(heads * nK * dK, 43);
const keyMask = [1, 1, 0, 1, 1, 1, 0, 1, 1];
const cross = parseData({ queryTokens: tokens(nQ, 'q'), keyTokens: tokens(nK, 'k'), heads, dK, keyMask,
  Q: Array.from(q), K: Array.from(k), V: Array.from(v) });
const state = (s) => ({ scale: 'auto', temperature: 1, mask: 'none', layer: 0, head: 0, ...s });
const computedHeads = (result, layer = 0) => Array.from({ length: result.heads }, (_, h) => lazyOf(result.weights).computed(layer, h));

function assertHead(got, want, h, size, what) {
  const w = want.subarray(h * size, (h + 1) * size);
  assert.equal(got.length, size, `${what}: length`);
  const diff = ref.maxAbsDiff(got, w);
  assert.ok(diff <= 1e-5, `${what}: max |Δ| ${diff}`);
}

describe('weights computed head by head', () => {
  it('cross-attention vectors with masks: the shown head now, the others when read, each right', () => {
    const result = computeWeights(lens, cross, state({ temperature: 2, mask: 'causal padding', head: 1 }));
    assert.deepEqual(computedHeads(result), [false, true, false]);
    const want = ref.attention(q, k, v, { dK, heads, causal: true, keyMask, scale: 1 / Math.sqrt(dK) / 2 }).weights;
    for (const h of [2, 0, 1]) assertHead(headMatrix(result, 0, h), want, h, nQ * nK, `head ${h}`);
    assert.deepEqual(computedHeads(result), [true, true, true]);
    assert.ok(ref.maxAbsDiff(result.weights[0], want) <= 1e-5, 'weights[0]');
    // All at once from a fresh result (one engine call) = head by head, bit for bit.
    const whole = computeWeights(lens, cross, state({ temperature: 2, mask: 'causal padding', head: 'mean' }));
    assert.deepEqual(computedHeads(whole), [true, true, true]);
    assert.deepEqual(Array.from(whole.weights[0]), Array.from(result.weights[0]));
  });

  it('head "mean" and a rollout state compute every head at once; the mean is the float64 mean', () => {
    const result = computeWeights(lens, cross, state({ head: 'mean', scale: 0.4 }));
    assert.deepEqual(computedHeads(result), [true, true, true]);
    const want = ref.attention(q, k, v, { dK, heads, scale: 0.4 }).weights;
    const mean = selectedMatrix(lens, result, 0, 'mean');
    for (let c = 0; c < nQ * nK; c++) {
      const m = (want[c] + want[nQ * nK + c] + want[2 * nQ * nK + c]) / 3;
      assert.ok(Math.abs(mean[c] - m) <= 1e-6, `mean cell ${c}`);
    }
  });

  it('projections (cross-attention through W): the engine computes the whole layer, correct per head', () => {
    const dModel = 6, h = 2, n = 5, nKV = 4;
    const x = ref.uniform(n * dModel, 51), xKV = ref.uniform(nKV * dModel, 52);
    const wQ = ref.uniform(dModel * dModel, 53), wK = ref.uniform(dModel * dModel, 54), wV = ref.uniform(dModel * dModel, 55);
    const nest = (flat, rows) => Array.from({ length: rows }, (_, i) => Array.from(flat.subarray(i * dModel, (i + 1) * dModel)));
    const data = parseData({ queryTokens: tokens(n, 'q'), keyTokens: tokens(nKV, 'k'), heads: h,
      X: nest(x, n), X_KV: nest(xKV, nKV), W_Q: nest(wQ, dModel), W_K: nest(wK, dModel), W_V: nest(wV, dModel) });
    const result = computeWeights(lens, data, state({ temperature: 3, head: 1 }));
    assert.deepEqual(computedHeads(result), [true, true]);
    const want = ref.multiHead(x, { dModel, heads: h, wQ, wK, wV, xKV, scale: 1 / Math.sqrt(dModel / h) / 3 }).weights;
    for (const hd of [0, 1]) assertHead(headMatrix(result, 0, hd), want, hd, n * nKV, `projections head ${hd}`);
  });

  it('precomputed layers re-weighted by temperature and mask, per head when read', () => {
    const n = 6, layers = 2;
    const attention = ref.randomAttention(layers, heads, n, 61, 2);
    const data = parseData({ tokens: tokens(n, 't'), attention });
    const result = computeWeights(null, data, state({ temperature: 0.5, mask: 'causal', layer: 1, head: 2 }));
    assert.deepEqual([computedHeads(result, 0), computedHeads(result, 1)], [[false, false, false], [false, false, true]]);
    for (const [l, h] of [[0, 1], [1, 0], [1, 2]]) {
      const got = headMatrix(result, l, h);
      for (let i = 0; i < n; i++) {
        const row = attention[l][h][i].map((w, j) => (j > i ? 0 : Math.fround(w) ** 2));
        const sum = row.reduce((a, b) => a + b, 0);
        for (let j = 0; j < n; j++) assert.ok(Math.abs(got[i * n + j] - row[j] / sum) <= 1e-6, `layer ${l} head ${h} (${i}, ${j})`);
      }
    }
    // Temperature 1 without a mask: the data's own arrays, nothing computed.
    assert.equal(computeWeights(null, data, state()).weights, data.weights);
  });

  it('an older result whose pooled array a newer one took computes its heads again, into its own array', () => {
    const pool = new BufferPool();
    const [r1, r2, r3] = [1.5, 2, 3].map((temperature) => computeWeights(lens, cross, state({ temperature }), pool));
    const want = (temperature) => ref.attention(q, k, v, { dK, heads, scale: 1 / Math.sqrt(dK) / temperature }).weights;
    // r3 was handed r1's array (the pool alternates two): r1 is no longer computed there.
    assert.deepEqual(computedHeads(r1), [false, false, false]);
    assert.deepEqual(computedHeads(r3), [true, false, false]);
    for (const h of [2, 0]) assertHead(headMatrix(r1, 0, h), want(1.5), h, nQ * nK, `r1 head ${h}`);
    for (const h of [0, 1, 2]) {
      assertHead(headMatrix(r3, 0, h), want(3), h, nQ * nK, `r3 head ${h} after r1 recomputed`);
      assertHead(headMatrix(r2, 0, h), want(2), h, nQ * nK, `r2 head ${h}`);
    }
    assert.notEqual(r1.weights[0], r3.weights[0]);
  });

  it('hidden tokens: each head filtered from its own computed head, into the pool', () => {
    const pool = new BufferPool();
    const base = computeWeights(lens, cross, state({ temperature: 2, head: 0 }), pool);
    const hidden = applyFilter(base, { hide: ['q0', 'k3'], renormalize: true }, pool);
    assert.deepEqual([hidden.nQ, hidden.nK], [nQ - 1, nK - 1]);
    const want = ref.attention(q, k, v, { dK, heads, scale: 1 / Math.sqrt(dK) / 2 }).weights;
    for (const h of [2, 1]) {
      const got = headMatrix(hidden, 0, h);
      for (let i = 1; i < nQ; i++) {
        const row = Array.from({ length: nK }, (_, j) => want[(h * nQ + i) * nK + j]).filter((_, j) => j !== 3);
        const sum = row.reduce((a, b) => a + b, 0);
        row.forEach((w, c) => assert.ok(Math.abs(got[(i - 1) * (nK - 1) + c] - w / sum) <= 1e-5, `hidden head ${h} (${i}, ${c})`));
      }
    }
    assert.equal(hidden.weights[0].length, heads * (nQ - 1) * (nK - 1));
  });

  it('a scale the engine refuses is still an error from computeWeights, not from a later read', () => {
    assert.throws(() => computeWeights(lens, cross, state({ scale: 1e300, temperature: 1e-300 })), RangeError);
    assert.throws(() => computeWeights(lens, cross, state({ head: 2, scale: 1e300, temperature: 1e-300 })), RangeError);
  });
});
