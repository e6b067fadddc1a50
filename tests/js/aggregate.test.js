// lens.aggregate and lens.rollout against float64 loops written here (not through the engine).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { init } from 'attnlens';
import * as ref from './reference.js';

const builds = [
  ['SIMD', await init()],
  ['scalar', await init({ simd: false })],
];

// Rows that sum to 1, as softmax output; every 4th row of head 0 all zero (a masked query).
function weights(heads, nQ, nK, seed) {
  const w = Float32Array.from(ref.uniform(heads * nQ * nK, seed, 0, 1));
  for (let r = 0; r < heads * nQ; r++) {
    let sum = 0;
    for (let j = 0; j < nK; j++) sum += w[r * nK + j];
    for (let j = 0; j < nK; j++) w[r * nK + j] = r < nQ && r % 4 === 1 ? 0 : w[r * nK + j] / sum;
  }
  return w;
}

function headMean(w, heads, count) {
  const out = new Float64Array(count);
  for (let h = 0; h < heads; h++) for (let c = 0; c < count; c++) out[c] += w[h * count + c];
  return out.map((x) => x / heads);
}

function headMax(w, heads, count) {
  const out = Float64Array.from(w.subarray(0, count));
  for (let h = 1; h < heads; h++) for (let c = 0; c < count; c++) out[c] = Math.max(out[c], w[h * count + c]);
  return out;
}

function rollout(layers, heads, n, residual) {
  let r = null;
  for (const layer of layers) {
    const a = headMean(layer, heads, n * n);
    for (let i = 0; i < n; i++) {
      let sum = 0;
      for (let j = 0; j < n; j++) {
        a[i * n + j] = (1 - residual) * a[i * n + j] + (i === j ? residual : 0);
        sum += a[i * n + j];
      }
      if (sum > 0) for (let j = 0; j < n; j++) a[i * n + j] /= sum;
    }
    if (!r) { r = a; continue; }
    const next = new Float64Array(n * n);
    for (let i = 0; i < n; i++)
      for (let k = 0; k < n; k++) {
        const x = a[i * n + k];
        for (let j = 0; j < n; j++) next[i * n + j] += x * r[k * n + j];
      }
    r = next;
  }
  return r;
}

const maxDiff = (got, want) => got.reduce((m, x, i) => Math.max(m, Math.abs(x - want[i])), 0);

for (const [name, lens] of builds) {
  describe(`lens.aggregate (${name})`, () => {
    for (const [heads, nQ, nK] of [[1, 1, 1], [2, 3, 7], [12, 16, 16], [5, 33, 9], [3, 130, 129]]) {
      it(`mean and max of ${heads}·${nQ}·${nK}`, () => {
        const w = weights(heads, nQ, nK, heads * 31 + nK);
        const mean = lens.aggregate(w, { heads, nQ, nK });
        assert.ok(mean instanceof Float32Array && mean.length === nQ * nK);
        assert.ok(maxDiff(mean, headMean(w, heads, nQ * nK)) < 1e-6);
        const into = new Float32Array(nQ * nK);
        const max = lens.aggregate(w, { heads, nK, mode: 'max', into });
        assert.equal(max, into);
        assert.equal(maxDiff(max, headMax(w, heads, nQ * nK)), 0);
      });
    }

    it('square by default, errors name the argument, engine usable after', () => {
      const w = weights(2, 4, 4, 1);
      assert.equal(lens.aggregate(w, { heads: 2 }).length, 16);
      assert.throws(() => lens.aggregate([1, 2], { heads: 1 }), { name: 'TypeError', message: /weights must be a Float32Array/ });
      assert.throws(() => lens.aggregate(w, {}), { name: 'TypeError', message: /options.heads is required/ });
      assert.throws(() => lens.aggregate(w, { heads: 2, mode: 'sum' }), { name: 'RangeError', message: /options.mode must be 'mean' or 'max'/ });
      assert.throws(() => lens.aggregate(w, { heads: 2, mode: 1 }), { name: 'TypeError', message: /options.mode/ });
      assert.throws(() => lens.aggregate(w, { heads: 3 }), { name: 'RangeError', message: /weights.length \(32\)/ });
      assert.throws(() => lens.aggregate(w, { heads: 2, nQ: 3 }), { name: 'RangeError', message: /weights.length/ });
      assert.throws(() => lens.aggregate(w, { heads: 2, into: new Float32Array(15) }), { name: 'RangeError', message: /options.into.length must be nQ·nK = 16/ });
      assert.throws(() => lens.aggregate(w, { heads: 2, into: new Float64Array(16) }), { name: 'TypeError', message: /options.into/ });
      assert.throws(() => lens.aggregate(w, { heads: 2, extra: 1 }), { name: 'TypeError', message: /unknown option 'extra'/ });
      const bad = w.slice();
      bad[5] = NaN;
      assert.throws(() => lens.aggregate(bad, { heads: 2 }), { name: 'RangeError', message: /weights\[5\] is NaN/ });
      assert.ok(maxDiff(lens.aggregate(w, { heads: 2 }), headMean(w, 2, 16)) < 1e-6);
    });
  });

  describe(`lens.rollout (${name})`, () => {
    for (const [layers, heads, n, residual] of [[1, 1, 1, 0.5], [2, 2, 5, 0.5], [4, 3, 17, 0.5], [3, 12, 64, 0.5], [3, 2, 9, 0], [2, 2, 9, 0.3]]) {
      it(`${layers} layers × ${heads} heads × n = ${n}, residual ${residual}`, () => {
        const ws = Array.from({ length: layers }, (_, l) => weights(heads, n, n, 100 * l + n));
        const got = lens.rollout(ws, { heads, residual });
        const want = rollout(ws, heads, n, residual);
        assert.equal(got.length, n * n);
        assert.ok(maxDiff(got, want) < 2e-5, `max diff ${maxDiff(got, want)}`);
        if (residual > 0)
          for (let i = 0; i < n; i++) {
            let sum = 0;
            for (let j = 0; j < n; j++) sum += got[i * n + j];
            assert.ok(Math.abs(sum - 1) < 1e-4, `row ${i} sums to ${sum}`);
          }
      });
    }

    it('errors name the argument; the limit on work is a RangeError', () => {
      const w = weights(2, 3, 3, 9);
      assert.throws(() => lens.rollout(w, { heads: 2 }), { name: 'TypeError', message: /layers must be an Array/ });
      assert.throws(() => lens.rollout([], { heads: 2 }), { name: 'RangeError', message: /layers is empty/ });
      assert.throws(() => lens.rollout([w, [1]], { heads: 2 }), { name: 'TypeError', message: /layers\[1\] must be a Float32Array/ });
      assert.throws(() => lens.rollout([w, w.subarray(1)], { heads: 2 }), { name: 'RangeError', message: /layers\[1\].length must be heads·n·n = 18/ });
      assert.throws(() => lens.rollout([w], { heads: 2, residual: 2 }), { name: 'RangeError', message: /options.residual must be between 0 and 1/ });
      assert.throws(() => lens.rollout([w], { heads: 2, residual: '0.5' }), { name: 'TypeError', message: /options.residual/ });
      const negative = w.slice();
      negative[4] = -0.5;
      assert.throws(() => lens.rollout([w, negative], { heads: 2 }), { name: 'RangeError', message: /layers\[1\]\[4\] is -0.5/ });
      const big = new Float32Array(1);
      assert.throws(() => lens.rollout([big, big, big, big, big], { heads: 1, n: 4096 }), { name: 'RangeError', message: /more than the limit/ });
      assert.ok(maxDiff(lens.rollout([w, w], { heads: 2 }), rollout([w, w], 2, 3, 0.5)) < 1e-6);
    });
  });
}
