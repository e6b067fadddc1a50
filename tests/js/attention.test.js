import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { init, relaxedSimdSupported } from 'attnlens';
import * as ref from './reference.js';

// Every build this runtime runs. Node 20 runs the relaxed one only with
// --experimental-wasm-relaxed-simd: scripts/test.sh runs this file again that way with
// ATTNLENS_TEST_BUILDS=relaxed, and then a missing relaxed build is a failure, not a skip.
// A name ending in '-threads' is the threaded build of that flavour on 2 threads, the others run
// single-threaded (init's default in Node is the threaded build).
const ARCH = { relaxed: 'wasm_relaxed', simd: 'wasm', scalar: 'scalar' };
const asked = process.env.ATTNLENS_TEST_BUILDS?.split(',');
if (asked?.some((b) => b.startsWith('relaxed')) && !relaxedSimdSupported())
  throw new Error('ATTNLENS_TEST_BUILDS names relaxed, but this runtime has no relaxed SIMD');
const names = asked ?? ['relaxed', 'simd', 'scalar', 'simd-threads'].filter((b) => !b.startsWith('relaxed') || relaxedSimdSupported());
const builds = [];
for (const name of names) {
  const build = name.replace(/-threads$/, '');
  builds.push([build, await init({ build, threads: name.endsWith('-threads') ? 2 : false })]);
}

const shapes = [
  { heads: 1, nQ: 1, nK: 1, dK: 1, dV: 1 },
  { heads: 2, nQ: 3, nK: 7, dK: 5, dV: 9 },
  { heads: 3, nQ: 17, nK: 13, dK: 6, dV: 11 },
  { heads: 4, nQ: 33, nK: 65, dK: 64, dV: 64 },
  { heads: 1, nQ: 129, nK: 127, dK: 67, dV: 3 },
  { heads: 2, nQ: 9, nK: 9, dK: 8, dV: 8, causal: true },
  { heads: 2, nQ: 12, nK: 7, dK: 5, dV: 4, causal: true },
  { heads: 3, nQ: 10, nK: 23, dK: 7, dV: 5, mask: true },
  { heads: 2, nQ: 11, nK: 11, dK: 4, dV: 6, causal: true, mask: true },
  { heads: 1, nQ: 7, nK: 9, dK: 4, dV: 4, scale: 0.01 },
  { heads: 1, nQ: 1003, nK: 1001, dK: 8, dV: 4 },
];

function maskFor(nK, seed) {
  const r = ref.uniform(nK, seed, 0, 1);
  const m = Uint8Array.from(r, (x) => (x < 0.7 ? 1 : 0));
  m[0] = 0;  // with causal, query 0 then sees nothing: an all-zero row
  return m;
}

for (const [name, lens] of builds) {
  describe(`lens.attention (${name} build${lens.threaded ? `, ${lens.threads} threads` : ""})`, () => {
    it('reports which build runs', () => {
      assert.equal(lens.build, name);
      assert.equal(lens.simd, name !== 'scalar');
      assert.equal(lens.arch, ARCH[name]);
    });

    for (const [i, s] of shapes.entries()) {
      it(`matches the float64 reference: ${JSON.stringify(s)}`, () => {
        const q = ref.uniform(s.heads * s.nQ * s.dK, 10 + i);
        const k = ref.uniform(s.heads * s.nK * s.dK, 20 + i);
        const v = ref.uniform(s.heads * s.nK * s.dV, 30 + i);
        const options = { dK: s.dK, dV: s.dV, heads: s.heads, causal: !!s.causal, returnScores: true };
        if (s.scale) options.scale = s.scale;
        if (s.mask) options.keyMask = maskFor(s.nK, 40 + i);
        const got = lens.attention(q, k, v, options);
        const want = ref.attention(q, k, v, options);
        assert.ok(got.weights instanceof Float32Array && got.output instanceof Float32Array);
        assert.equal(got.weights.length, s.heads * s.nQ * s.nK);
        assert.equal(got.output.length, s.heads * s.nQ * s.dV);
        assert.ok(ref.maxAbsDiff(got.weights, want.weights) <= 1e-5);
        assert.ok(ref.normalisedError(got.output, want.output) <= 1e-4);
        assert.ok(ref.normalisedError(got.scores, want.scores) <= 1e-5);
        for (let r = 0; r < s.heads * s.nQ; r++) {
          const row = got.weights.subarray(r * s.nK, (r + 1) * s.nK);
          const sum = row.reduce((a, b) => a + b, 0);
          const wantSum = want.weights.subarray(r * s.nK, (r + 1) * s.nK).reduce((a, b) => a + b, 0);
          if (wantSum === 0) assert.equal(sum, 0, `row ${r} is fully masked`);
          else assert.ok(Math.abs(sum - 1) <= 1e-5, `row ${r} sums to ${sum}`);
        }
      });
    }

    it('saturates to one-hot rows with a huge scale, never NaN', () => {
      const q = Float32Array.from(ref.uniform(2 * 5 * 3, 7, -3, 3), Math.round);
      const k = Float32Array.from(ref.uniform(2 * 8 * 3, 8, -3, 3), Math.round);
      const v = ref.uniform(2 * 8 * 2, 9);
      const got = lens.attention(q, k, v, { dK: 3, dV: 2, heads: 2, scale: 1e6 });
      const want = ref.attention(q, k, v, { dK: 3, dV: 2, heads: 2, scale: 1e6 });
      assert.ok(ref.maxAbsDiff(got.weights, want.weights) <= 1e-5);
      assert.ok(got.weights.every((w) => Number.isFinite(w)));
    });

    it('keeps scores of ±1e4 finite (stable softmax)', () => {
      const q = new Float32Array([100, 100]);
      const k = new Float32Array([50, 50, -50, -50, 50, 49.99, 0, 0]);
      const { weights } = lens.attention(q, k, new Float32Array(4), { dK: 2, dV: 1, scale: 1 });
      const e = Math.exp(-1);
      assert.ok(Math.abs(weights[0] - 1 / (1 + e)) < 1e-5);
      assert.equal(weights[1], 0);
      assert.ok(Math.abs(weights[2] - e / (1 + e)) < 1e-5);
    });

    it('returns only the output with weights: false, equal to the full path', () => {
      const q = ref.uniform(2 * 40 * 16, 1), k = ref.uniform(2 * 50 * 16, 2), v = ref.uniform(2 * 50 * 8, 3);
      const full = lens.attention(q, k, v, { dK: 16, dV: 8, heads: 2, causal: true });
      const lean = lens.attention(q, k, v, { dK: 16, dV: 8, heads: 2, causal: true, weights: false });
      assert.deepEqual(Object.keys(lean), ['output']);
      assert.ok(ref.maxAbsDiff(lean.output, full.output) <= 1e-5);
    });

    it('returns arrays the caller owns, still valid after later calls grow memory', () => {
      const small = lens.attention(new Float32Array([1, 2]), new Float32Array([3, 4]), new Float32Array([5]), { dK: 2, dV: 1 });
      const n = 1500;
      lens.attention(ref.uniform(n * 32, 1), ref.uniform(n * 32, 2), ref.uniform(n * 32, 3), { dK: 32 });
      assert.equal(small.output[0], 5);
      assert.equal(small.weights[0], 1);
    });
  });

  describe(`lens.multiHead (${name} build${lens.threaded ? `, ${lens.threads} threads` : ""})`, () => {
    const cases = [
      { nQ: 6, dModel: 8, heads: 2, bias: true, wO: true },
      { nQ: 11, dModel: 12, heads: 3, bias: true, wO: true, causal: true },
      { nQ: 5, nK: 9, dModel: 16, heads: 4, bias: false, wO: true },
      { nQ: 7, nK: 3, dModel: 10, heads: 5, bias: false, wO: false },
    ];
    for (const [i, c] of cases.entries()) {
      it(`matches project → attend → merge → project: ${JSON.stringify(c)}`, () => {
        const dm = c.dModel, r = 1 / Math.sqrt(dm);
        const options = {
          dModel: dm, heads: c.heads, causal: !!c.causal,
          wQ: ref.uniform(dm * dm, 100 + i, -r, r), wK: ref.uniform(dm * dm, 200 + i, -r, r),
          wV: ref.uniform(dm * dm, 300 + i, -r, r),
        };
        if (c.wO) options.wO = ref.uniform(dm * dm, 400 + i, -r, r);
        if (c.bias) {
          options.bQ = ref.uniform(dm, 500 + i); options.bK = ref.uniform(dm, 600 + i);
          options.bV = ref.uniform(dm, 700 + i); if (c.wO) options.bO = ref.uniform(dm, 800 + i);
        }
        if (c.nK) options.xKV = ref.uniform(c.nK * dm, 900 + i);
        const x = ref.uniform(c.nQ * dm, i);
        const got = lens.multiHead(x, options);
        const want = ref.multiHead(x, options);
        assert.equal(got.weights.length, c.heads * c.nQ * (c.nK ?? c.nQ));
        assert.ok(ref.maxAbsDiff(got.weights, want.weights) <= 1e-5);
        assert.ok(ref.normalisedError(got.output, want.output) <= 1e-4);
      });
    }
  });
}

describe('init', () => {
  it('returns the same instance when called twice', async () => {
    assert.equal(await init(), await init());
    assert.equal(await init({ simd: false }), await init({ simd: false }));
    assert.notEqual(await init(), await init({ simd: false }));
  });
  it('rejects bad options with TypeError', () => {
    assert.throws(() => init({ simd: 'yes' }), { name: 'TypeError', message: /simd/ });
    assert.throws(() => init({ thread: 2 }), { name: 'TypeError', message: /unknown option 'thread'/ });
    assert.throws(() => init({ build: 3 }), { name: 'TypeError', message: /options\.build/ });
  });
  it('picks the fastest build the runtime runs, and forces one with { build }', async () => {
    assert.equal((await init()).build, relaxedSimdSupported() ? 'relaxed' : 'simd');
    assert.equal((await init({ build: 'simd' })).build, 'simd');
    assert.equal((await init({ simd: false })).build, 'scalar');
    assert.equal(await init({ simd: false }), await init({ build: 'scalar' }));
    assert.throws(() => init({ build: 'avx' }), { name: 'RangeError', message: /options\.build must be one of relaxed, simd, scalar/ });
    assert.throws(() => init({ build: 'simd', simd: false }), { name: 'RangeError', message: /contradicts/ });
    if (!relaxedSimdSupported())
      await assert.rejects(init({ build: 'relaxed' }), { message: /--experimental-wasm-relaxed-simd/ });
  });
  it('ceilingProbe() reports a steady-state ceiling of the build that runs', async () => {
    for (const [name, lens] of builds) {
      const c = lens.ceilingProbe({ iterations: 2e4, calls: 3, warmupCalls: 2, warmupMs: 0 });
      assert.ok(c.mulAdd.gflops >= c.mulAdd.median && c.mulAdd.median >= c.mulAdd.min && c.mulAdd.min > 0);
      assert.equal(c.flops, 96 * 2e4);
      assert.equal(c.calls, 3);
      // Fused multiply-add exists exactly in the relaxed build, and is then the build's ceiling.
      assert.equal(c.fma !== null, name === 'relaxed', name);
      assert.equal(c.op, name === 'relaxed' ? 'fma' : 'mul+add');
      assert.equal(c.gflops, (c.fma ?? c.mulAdd).gflops);
      // Every chain count timed, the best one reported.
      for (const s of [c.mulAdd, ...(c.fma ? [c.fma] : [])]) {
        assert.deepEqual(Object.keys(s.byChains).map(Number), [8, 12, 16, 24]);
        assert.equal(s.gflops, Math.max(...Object.values(s.byChains)));
        assert.equal(s.byChains[s.chains], s.gflops);
      }
      const two = lens.ceilingProbe({ iterations: 2e4, calls: 1, warmupCalls: 0, warmupMs: 0, chains: [24, 8] });
      assert.deepEqual(Object.keys(two.mulAdd.byChains).map(Number).sort((a, b) => a - b), [8, 24]);
      assert.equal(two.flops, 96 * 2e4);  // 24 chains × 1e4 steps or 8 chains × 3e4: the same work
      assert.throws(() => lens.ceilingProbe({ chains: [10] }), { name: 'RangeError', message: /options\.chains/ });
      assert.throws(() => lens.ceilingProbe({ chains: 12 }), { name: 'TypeError', message: /options\.chains/ });
      const once = lens.ceilingProbe(1e4);
      assert.equal(once.flops, 96e4);
      assert.ok(once.gflops > 0 && once.ms > 0);
      assert.throws(() => lens.ceilingProbe({ calls: 0 }), { name: 'RangeError', message: /options\.calls/ });
      assert.throws(() => lens.ceilingProbe({ warmupMs: 'x' }), { name: 'TypeError', message: /options\.warmupMs/ });
      assert.throws(() => lens.ceilingProbe({ iters: 1 }), { name: 'TypeError', message: /unknown option 'iters'/ });
    }
  });
});
