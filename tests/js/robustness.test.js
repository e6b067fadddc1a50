// The engine under abuse, in Node: sizes it cannot hold are refused with a RangeError before any
// wasm memory is touched, and thousands of mixed valid and invalid calls leave the wasm heap as
// they found it and the module working.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { init } from 'attnlens';

import * as ref from './reference.js';

// Seeded PRNG: a failing run can be replayed.
function rng(seed) {
  const next = ref.random(seed);
  return {
    next,
    int(lo, hi) { return lo + Math.floor(this.next() * (hi - lo + 1)); },
    pick(list) { return list[Math.floor(this.next() * list.length)]; },
  };
}

const tooLarge = (e) => e instanceof RangeError && /needs [\d.]+ GiB of working memory/.test(e.message);

for (const simd of [true, false]) {
  describe(`engine robustness (${simd ? 'SIMD' : 'scalar'} build)`, async () => {
    const lens = await init({ simd });

    it('refuses n = 100 000, h = 16 with a RangeError before allocating', () => {
      // dK = 1 keeps q, k, v at 6.4 MB each; the weights alone would be 16·1e10 floats = 640 GB.
      const big = new Float32Array(16 * 100_000);
      const before = lens.memory();
      assert.throws(() => lens.attention(big, big, big, { dK: 1, heads: 16 }), tooLarge);
      assert.throws(() => lens.attention(big, big, big, { dK: 1, heads: 16, returnScores: true }), tooLarge);
      // Multi-head: x [100 000, 16], 16 heads of width 1.
      const w = new Float32Array(16 * 16);
      assert.throws(() => lens.multiHead(big, { dModel: 16, heads: 16, wQ: w, wK: w, wV: w }), tooLarge);
      // Nothing was allocated, and the memory did not grow trying.
      assert.deepEqual(lens.memory(), before);
    });

    it('10 000 calls of mixed sizes and errors leave the heap where it started', () => {
      const r = rng(simd ? 20240601 : 20240602);
      const MAX_N = 40, MAX_D = 12, MAX_H = 4, MAX_MODEL = 24;
      const values = (n) => { const a = new Float32Array(n); for (let i = 0; i < n; i++) a[i] = r.next() * 2 - 1; return a; };
      const bigQ = new Float32Array(16 * 100_000);

      // The engine keeps scratch buffers (kept across calls, grown on demand) sized for the largest
      // call so far; some exist only for some widths (padding to the vector width). Warm them up
      // with the most keys and heads the loop uses, every width and every combination of options,
      // then take the baseline.
      const mask = Uint8Array.from({ length: MAX_N }, (_, j) => j % 2);
      for (let d = 1; d <= MAX_D; d++)
        for (const [dK, dV] of [[d, d], [MAX_D, d], [d, MAX_D]]) {
          const args = [MAX_H * MAX_N * dK, MAX_H * MAX_N * dK, MAX_H * MAX_N * dV].map(values);
          for (const causal of [false, true])
            for (const keyMask of [undefined, mask])
              for (const opts of [{}, { weights: false }, { returnScores: true }, { output: false }])
                lens.attention(...args, { dK, dV, heads: MAX_H, causal, keyMask, ...opts });
        }
      for (const dModel of [4, 8, 12, MAX_MODEL]) {
        const wm = values(dModel * dModel), xm = values(MAX_N * dModel);
        for (const causal of [false, true])
          for (const keyMask of [undefined, mask])
            for (const heads of [1, 2, 4])
              for (const extra of [{}, { wO: wm }, { xKV: xm }])
                lens.multiHead(xm, { dModel, heads, wQ: wm, wK: wm, wV: wm, causal, keyMask, ...extra });
      }
      const start = lens.memory();
      // Where the heap in use first moved (for the failure message).
      let firstChange = 'nowhere';
      const watch = (call, what) => {
        if (firstChange === 'nowhere' && lens.memory().inUse !== start.inUse)
          firstChange = `call ${call} (${what}): inUse ${start.inUse} → ${lens.memory().inUse}`;
      };

      const counts = { ok: 0, TypeError: 0, RangeError: 0, tooLarge: 0 };
      const expectError = (type, call) => {
        try { call(); } catch (e) {
          assert.equal(e.constructor, type, `wanted ${type.name}, got ${e.constructor.name}: ${e.message}`);
          counts[type.name]++;
          return;
        }
        assert.fail(`wanted a ${type.name}`);
      };
      for (let call = 0; call < 10_000; call++) {
        const heads = r.int(1, MAX_H), nQ = r.int(1, MAX_N), nK = r.int(1, MAX_N);
        const dK = r.int(1, MAX_D), dV = r.int(1, MAX_D);
        const q = values(heads * nQ * dK), k = values(heads * nK * dK), v = values(heads * nK * dV);
        const kind = r.int(0, 9);
        if (kind <= 3) {  // valid attention, random options
          const opts = { dK, dV, heads };
          if (r.next() < 0.3) opts.causal = true;
          if (r.next() < 0.3) opts.keyMask = Uint8Array.from({ length: nK }, () => (r.next() < 0.7 ? 1 : 0));
          if (r.next() < 0.3) opts.scale = 0.01 + r.next() * 4;
          if (r.next() < 0.2) opts.returnScores = true;
          else if (r.next() < 0.2) opts.weights = false;
          else if (r.next() < 0.2) opts.output = false;  // weights only
          if (r.next() < 0.3) {  // results into caller arrays
            opts.into = {};
            if (opts.weights !== false && r.next() < 0.7) opts.into.weights = new Float32Array(heads * nQ * nK);
            if (opts.output !== false && r.next() < 0.7) opts.into.output = new Float32Array(heads * nQ * dV);
            if (opts.returnScores && r.next() < 0.7) opts.into.scores = new Float32Array(heads * nQ * nK);
          }
          const out = lens.attention(q, k, opts.output === false && r.next() < 0.5 ? null : v, opts);
          watch(call, `attention ${JSON.stringify({ heads, nQ, nK, ...opts, keyMask: opts.keyMask && 'given', into: opts.into && Object.keys(opts.into) })}`);
          if (opts.output !== false) assert.equal(out.output.length, heads * nQ * dV);
          for (const [slot, array] of Object.entries(opts.into ?? {})) assert.equal(out[slot], array);
          if (opts.weights !== false) assert.equal(out.weights.length, heads * nQ * nK);
          if (opts.returnScores) assert.equal(out.scores.length, heads * nQ * nK);
          counts.ok++;
        } else if (kind === 4) {  // valid multi-head
          const dModel = r.pick([4, 8, 12, 24]), h = r.pick([1, 2, 4]), n = r.int(1, MAX_N);
          const w = values(dModel * dModel);
          const opts = { dModel, heads: h, wQ: w, wK: w, wV: w };
          if (r.next() < 0.5) opts.wO = w;
          if (r.next() < 0.3) opts.xKV = values(r.int(1, MAX_N) * dModel);
          if (r.next() < 0.3) opts.causal = true;
          if (r.next() < 0.2) opts.output = false;
          if (r.next() < 0.2) opts.into = { weights: new Float32Array(h * n * (opts.xKV ? opts.xKV.length / dModel : n)) };
          const out = lens.multiHead(values(n * dModel), opts);
          watch(call, `multiHead ${JSON.stringify({ n, dModel, heads: h, wO: !!opts.wO, nKV: opts.xKV && opts.xKV.length / dModel, causal: opts.causal })}`);
          if (opts.output !== false) assert.equal(out.output.length, n * dModel);
          if (opts.into) assert.equal(out.weights, opts.into.weights);
          counts.ok++;
        } else if (kind === 5) {  // wrong types
          expectError(TypeError, r.pick([
            () => lens.attention(Array.from(q), k, v, { dK }),
            () => lens.attention(q, k, v, { dK: String(dK) }),
            () => lens.attention(q, k, new Float64Array(v), { dK, dV, heads }),
            () => lens.attention(q, k, v, { dK, dV, heads, causal: 'yes' }),
            () => lens.attention(q, k, v, { dK, dV, heads, keyMask: Array(nK).fill(1) }),
            () => lens.attention(q, k, v, { dK, dV, heads, nope: 1 }),
            () => lens.multiHead(q, { dModel: dK, wQ: null, wK: q, wV: q }),
            () => lens.attention(q, k, v, { dK, dV, heads, into: { weights: new Float64Array(heads * nQ * nK) } }),
            () => lens.attention(q, k, v, { dK, dV, heads, into: [] }),
            () => lens.attention(q, k, null, { dK, dV, heads }),
          ]));
        } else if (kind === 6) {  // wrong values
          const bad = Float32Array.from(q);
          bad[r.int(0, bad.length - 1)] = r.pick([NaN, Infinity, -Infinity]);
          expectError(RangeError, r.pick([
            () => lens.attention(bad, k, v, { dK, dV, heads }),
            () => lens.attention(q, k, v.subarray(1), { dK, dV, heads }),
            () => lens.attention(q, k, v, { dK, dV, heads, scale: r.pick([0, -1, NaN, Infinity, 1e-60]) }),
            () => lens.attention(q, k, v, { dK, dV, heads, keyMask: new Uint8Array(nK + 1) }),
            () => lens.attention(q, k, v, { dK: dK + 0.5, dV, heads }),
            () => lens.attention(new Float32Array(0), k, v, { dK, dV, heads }),
            () => lens.attention(q, k, v, { dK, dV, heads, into: { weights: new Float32Array(heads * nQ * nK + 1) } }),
            () => lens.attention(q, k, v, { dK, dV, heads, output: false, weights: false }),
            () => lens.attention(q, k, v, { dK, dV, heads, output: false, into: { output: new Float32Array(heads * nQ * dV) } }),
          ]));
        } else if (kind === 7) {  // too large: nQ·nK·4 bytes ≥ 2.5 GB (dK = 1, short arrays)
          const n = r.pick([25_000, 50_000, 100_000]);
          const big = bigQ.subarray(0, n);
          expectError(RangeError, r.pick([
            () => lens.attention(big, big, big, { dK: 1 }),
            () => lens.attention(big, big, big, { dK: 1, causal: true, keyMask: new Uint8Array(n).fill(1) }),
            () => lens.multiHead(big, { dModel: 1, wQ: bigQ.subarray(0, 1), wK: bigQ.subarray(0, 1), wV: bigQ.subarray(0, 1) }),
          ]));
          counts.tooLarge++;
        } else {  // multi-head errors
          const dModel = 8, w = values(64), x = values(3 * dModel);
          expectError(RangeError, r.pick([
            () => lens.multiHead(x, { dModel, heads: 3, wQ: w, wK: w, wV: w }),
            () => lens.multiHead(x, { dModel, wQ: w, wK: w, wV: w.subarray(1) }),
            () => lens.multiHead(x, { dModel, wQ: w, wK: w, wV: w, bO: values(dModel) }),
            () => lens.multiHead(x, { dModel, wQ: w, wK: w, wV: w, keyMask: new Uint8Array(2) }),
          ]));
        }
        watch(call, `error case of kind ${kind}`);
      }
      assert.ok(counts.ok > 4000 && counts.TypeError > 500 && counts.RangeError > 2500 && counts.tooLarge > 500,
        JSON.stringify(counts));
      assert.deepEqual(lens.memory(), start, `heap in use and size after 10 000 calls; first change: ${firstChange}`);
    });

    it('still computes correct results afterwards', () => {
      const heads = 2, nQ = 7, nK = 9, dK = 5, dV = 3;
      const q = ref.uniform(heads * nQ * dK, 1), k = ref.uniform(heads * nK * dK, 2), v = ref.uniform(heads * nK * dV, 3);
      const keyMask = Uint8Array.from({ length: nK }, (_, j) => (j % 4 === 3 ? 0 : 1));
      const got = lens.attention(q, k, v, { dK, dV, heads, causal: true, keyMask });
      const want = ref.attention(q, k, v, { dK, dV, heads, causal: true, keyMask });
      assert.ok(ref.maxAbsDiff(got.weights, want.weights) < 1e-5);
      assert.ok(ref.maxAbsDiff(got.output, want.output) < 1e-5);
    });
  });
}
