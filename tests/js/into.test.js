// Results into the caller's arrays (`options.into`) and the weights-only path (`output: false`)
// of lens.attention and lens.multiHead: every combination against the float64 reference, every
// bad `into` refused with the right error, the engine usable after each, and no heap left behind.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { init } from 'attnlens';
import * as ref from './reference.js';
import { into as checkInto } from '../../web/engine/validate.js';

const builds = [['SIMD', await init()], ['scalar', await init({ simd: false })]];

const shape = { heads: 3, nQ: 11, nK: 13, dK: 6, dV: 5 };
const nn = shape.heads * shape.nQ * shape.nK, nOut = shape.heads * shape.nQ * shape.dV;
const q = ref.uniform(shape.heads * shape.nQ * shape.dK, 1);
const k = ref.uniform(shape.heads * shape.nK * shape.dK, 2);
const v = ref.uniform(shape.heads * shape.nK * shape.dV, 3);
const keyMask = Uint8Array.from({ length: shape.nK }, (_, j) => (j % 4 === 2 ? 0 : 1));
const base = { dK: shape.dK, dV: shape.dV, heads: shape.heads, causal: true, keyMask, scale: 0.7 };
const want = ref.attention(q, k, v, base);

// A caller array filled with a sentinel, so a result the engine did not write shows up.
const sentinel = (n) => new Float32Array(n).fill(-7);

function checkResult(got, { output, weights, scores }) {
  assert.deepEqual(Object.keys(got).sort(), [output && 'output', weights && 'weights', scores && 'scores'].filter(Boolean).sort());
  if (output) assert.ok(ref.normalisedError(got.output, want.output) <= 1e-4, 'output');
  if (weights) assert.ok(ref.maxAbsDiff(got.weights, want.weights) <= 1e-5, 'weights');
  if (scores) assert.ok(ref.normalisedError(got.scores, want.scores) <= 1e-5, 'scores');
}

for (const [name, lens] of builds) {
  describe(`lens.attention with output: false and into (${name} build)`, () => {
    // Every combination of what is asked for × whether each asked-for result has a caller array.
    const asks = [
      { output: true, weights: true, scores: false },
      { output: true, weights: false, scores: false },
      { output: false, weights: true, scores: false },
      { output: true, weights: true, scores: true },
      { output: false, weights: true, scores: true },
      { output: true, weights: false, scores: true },
    ];
    for (const ask of asks) {
      const slots = Object.keys(ask).filter((s) => ask[s]);
      for (let mask = 0; mask < 1 << slots.length; mask++) {
        const given = slots.filter((_, i) => mask & (1 << i));
        it(`asks ${slots.join('+')}, into ${given.join('+') || 'nothing'}`, () => {
          const into = {};
          for (const s of given) into[s] = sentinel(s === 'output' ? nOut : nn);
          const options = { ...base, output: ask.output, weights: ask.weights };
          if (ask.scores) options.returnScores = true;
          if (given.length) options.into = into;
          const got = lens.attention(q, k, v, options);
          checkResult(got, ask);
          for (const s of given) assert.equal(got[s], into[s], `result.${s} is the caller's array`);
        });
      }
    }

    it('into.scores alone asks for the scores', () => {
      const scores = sentinel(nn);
      const got = lens.attention(q, k, v, { ...base, into: { scores } });
      assert.equal(got.scores, scores);
      checkResult(got, { output: true, weights: true, scores: true });
    });

    it('weights only needs no v (null or left out), and ignores a v it does not read', () => {
      const a = lens.attention(q, k, null, { ...base, output: false });
      const b = lens.attention(q, k, undefined, { ...base, output: false });
      const bad = Float32Array.from(v);
      bad[0] = NaN;  // not read: no error, same weights
      const c = lens.attention(q, k, bad, { ...base, output: false });
      for (const r of [a, b, c]) checkResult(r, { weights: true });
      assert.deepEqual(a.weights, c.weights);
    });

    it('gives the same weights with and without the A·V product', () => {
      const full = lens.attention(q, k, v, base);
      const lean = lens.attention(q, k, v, { ...base, output: false });
      assert.deepEqual(lean.weights, full.weights);
    });

    it('writes into subarray views without touching the rest of their buffer', () => {
      const backing = new Float32Array(nn + 10).fill(-7);
      const view = backing.subarray(5, 5 + nn);
      lens.attention(q, k, v, { ...base, output: false, into: { weights: view } });
      assert.ok(ref.maxAbsDiff(view, want.weights) <= 1e-5);
      assert.deepEqual([...backing.subarray(0, 5), ...backing.subarray(5 + nn)], new Array(10).fill(-7));
    });

    it('refuses a bad into with a clear error, and works after each', () => {
      const heap = lens.memory();
      const cases = [
        [{ into: 5 }, TypeError, /options\.into must be an object/],
        [{ into: [] }, TypeError, /options\.into must be an object/],
        [{ into: { weight: sentinel(nn) } }, TypeError, /options\.into has an unknown option 'weight'/],
        [{ into: { weights: new Float64Array(nn) } }, TypeError, /options\.into\.weights must be a Float32Array \(got a Float64Array\)/],
        [{ into: { weights: Array(nn).fill(0) } }, TypeError, /options\.into\.weights must be a Float32Array \(got an Array\)/],
        [{ into: { output: 'out' } }, TypeError, /options\.into\.output must be a Float32Array/],
        [{ into: { weights: sentinel(nn - 1) } }, RangeError,
          new RegExp(`^options\\.into\\.weights\\.length must be heads·nQ·nK = ${nn} \\(got ${nn - 1}\\)$`)],
        [{ into: { output: sentinel(nOut + 1) } }, RangeError,
          new RegExp(`^options\\.into\\.output\\.length must be heads·nQ·dV = ${nOut} \\(got ${nOut + 1}\\)$`)],
        [{ returnScores: true, into: { scores: sentinel(0) } }, RangeError, /options\.into\.scores\.length must be heads·nQ·nK/],
        [{ output: false, into: { output: sentinel(nOut) } }, RangeError, /options\.into\.output is given but options\.output is false/],
        [{ weights: false, into: { weights: sentinel(nn) } }, RangeError, /options\.into\.weights is given but options\.weights is false/],
        [{ returnScores: false, into: { scores: sentinel(nn) } }, RangeError, /options\.into\.scores is given but options\.returnScores is false/],
        [{ output: false, weights: false }, RangeError, /options\.output and options\.weights are both false/],
        [{ output: 'no' }, TypeError, /options\.output must be true or false/],
      ];
      const shared = sentinel(nn);
      cases.push(
        [{ returnScores: true, into: { weights: shared, scores: shared } }, RangeError,
          /options\.into\.scores and options\.into\.weights share memory/]);
      const backing = new Float32Array(nn + nOut - 1);
      cases.push(
        [{ into: { weights: backing.subarray(0, nn), output: backing.subarray(nn - 1) } }, RangeError,
          /options\.into\.output and options\.into\.weights share memory/]);
      for (const [extra, type, message] of cases) {
        assert.throws(() => lens.attention(q, k, v, { ...base, ...extra }), (e) => {
          assert.equal(e.constructor, type, `${JSON.stringify(Object.keys(extra))}: ${e.message}`);
          assert.match(e.message, message);
          return true;
        });
        checkResult(lens.attention(q, k, v, { ...base, returnScores: true }), { output: true, weights: true, scores: true });
      }
      // v: still required (and checked) when the output is computed.
      assert.throws(() => lens.attention(q, k, null, base), { name: 'TypeError', message: /^v must be a Float32Array/ });
      assert.throws(() => lens.attention(q, k, v.subarray(1), { ...base, output: false }), { name: 'RangeError', message: /^v\.length must be/ });
      assert.deepEqual(lens.memory(), heap, 'no heap left behind by the refused calls');
    });

    it('refuses arrays that live in the engine\'s own memory (the check itself)', () => {
      // The public API never hands out views of the wasm memory, so the check is exercised
      // directly: a view of the engine's buffer would be overwritten or detached by later calls.
      const memory = new ArrayBuffer(64);
      const slots = { weights: [4, 'n'], output: [4, 'n'] };
      assert.throws(() => checkInto('options.into', { output: new Float32Array(memory, 16, 4) }, slots, memory),
        { name: 'TypeError', message: /^options\.into\.output is a view of the engine's own WebAssembly memory/ });
      assert.deepEqual(checkInto('options.into', { weights: new Float32Array(4) }, slots, memory).weights.length, 4);
    });

    it('keeps the wasm heap where it started over many calls with caller arrays', () => {
      const into = { weights: sentinel(nn), output: sentinel(nOut), scores: sentinel(nn) };
      lens.attention(q, k, v, { ...base, into });
      lens.attention(q, k, null, { ...base, output: false, into: { weights: into.weights } });
      const start = lens.memory();
      for (let i = 0; i < 500; i++) {
        lens.attention(q, k, v, { ...base, into });
        lens.attention(q, k, null, { ...base, output: false, into: { weights: into.weights } });
        lens.attention(q, k, v, { ...base, output: false, returnScores: true });
      }
      assert.deepEqual(lens.memory(), start);
      checkResult(lens.attention(q, k, v, { ...base, into }), { output: true, weights: true, scores: true });
    });
  });

  describe(`lens.multiHead with output: false and into (${name} build)`, () => {
    const dModel = 12, heads = 3, nQ = 9, nK = 7, r = 1 / Math.sqrt(dModel);
    const x = ref.uniform(nQ * dModel, 11), xKV = ref.uniform(nK * dModel, 12);
    const opts = {
      dModel, heads, causal: false, xKV,
      wQ: ref.uniform(dModel * dModel, 13, -r, r), wK: ref.uniform(dModel * dModel, 14, -r, r),
      wV: ref.uniform(dModel * dModel, 15, -r, r), wO: ref.uniform(dModel * dModel, 16, -r, r),
      bQ: ref.uniform(dModel, 17), bK: ref.uniform(dModel, 18), bV: ref.uniform(dModel, 19), bO: ref.uniform(dModel, 20),
    };
    const wanted = ref.multiHead(x, opts);
    const mnn = heads * nQ * nK;

    for (const output of [true, false])
      for (const intoWeights of [false, true])
        for (const intoOutput of output ? [false, true] : [false]) {
          it(`output ${output}, into ${[intoWeights && 'weights', intoOutput && 'output'].filter(Boolean).join('+') || 'nothing'}`, () => {
            const into = {};
            if (intoWeights) into.weights = sentinel(mnn);
            if (intoOutput) into.output = sentinel(nQ * dModel);
            const got = lens.multiHead(x, { ...opts, output, into });
            assert.deepEqual(Object.keys(got).sort(), output ? ['output', 'weights'] : ['weights']);
            assert.ok(ref.maxAbsDiff(got.weights, wanted.weights) <= 1e-5);
            if (output) assert.ok(ref.normalisedError(got.output, wanted.output) <= 1e-4);
            for (const s of Object.keys(into)) assert.equal(got[s], into[s]);
          });
        }

    it('weights only needs no wV', () => {
      const { wV, ...rest } = opts;
      const got = lens.multiHead(x, { ...rest, output: false });
      assert.ok(ref.maxAbsDiff(got.weights, wanted.weights) <= 1e-5);
      assert.throws(() => lens.multiHead(x, rest), { name: 'TypeError', message: /options\.wV must be a Float32Array/ });
      assert.throws(() => lens.multiHead(x, { ...opts, output: false, wV: wV.subarray(1) }), { name: 'RangeError', message: /options\.wV\.length/ });
      void wV;
    });

    it('refuses a bad into and stays usable', () => {
      const heap = lens.memory();
      const cases = [
        [{ into: { weights: new Float32Array(mnn - 1) } }, RangeError, new RegExp(`options\\.into\\.weights\\.length must be heads·nQ·nK = ${mnn} \\(got ${mnn - 1}\\)`)],
        [{ into: { output: new Float32Array(3) } }, RangeError, new RegExp(`options\\.into\\.output\\.length must be nQ·dModel = ${nQ * dModel} \\(got 3\\)`)],
        [{ into: { output: new Uint8Array(nQ * dModel) } }, TypeError, /options\.into\.output must be a Float32Array/],
        [{ into: { scores: new Float32Array(mnn) } }, TypeError, /options\.into has an unknown option 'scores'/],
        [{ output: false, into: { output: new Float32Array(nQ * dModel) } }, RangeError, /options\.into\.output is given but options\.output is false/],
      ];
      const shared = new Float32Array(Math.max(mnn, nQ * dModel));
      cases.push([{ into: { weights: shared.subarray(0, mnn), output: shared.subarray(0, nQ * dModel) } }, RangeError, /share memory/]);
      for (const [extra, type, message] of cases) {
        assert.throws(() => lens.multiHead(x, { ...opts, ...extra }), (e) => e.constructor === type && message.test(e.message));
        assert.ok(ref.maxAbsDiff(lens.multiHead(x, opts).weights, wanted.weights) <= 1e-5);
      }
      assert.deepEqual(lens.memory(), heap);
    });
  });
}

// docs/engine.md: "Your arrays may overlap the inputs: inputs are copied in before anything is
// written." Each case writes results over its own inputs (the same array, or views of one buffer
// that holds inputs and results), and must still give the reference's results for the inputs as
// they were before the call.
for (const [name, lens] of builds) {
  describe(`into arrays overlapping the inputs (${name} build)`, () => {
    const s = { heads: 2, nQ: 9, nK: 9, dK: 6, dV: 6 };  // nQ = nK, dK = dV: results as long as inputs
    const nIn = s.heads * s.nQ * s.dK, nW = s.heads * s.nQ * s.nK;
    const opts = { dK: s.dK, dV: s.dV, heads: s.heads, causal: true };
    const fresh = () => [ref.uniform(nIn, 31), ref.uniform(nIn, 32), ref.uniform(nIn, 33)];
    const [q0, k0, v0] = fresh();
    const wanted = ref.attention(q0, k0, v0, { ...opts, nQ: s.nQ, nK: s.nK });

    it('output written over q, k or v itself', () => {
      for (const over of [0, 1, 2]) {
        const inputs = fresh();
        const got = lens.attention(...inputs, { ...opts, into: { output: inputs[over] } });
        assert.equal(got.output, inputs[over]);
        assert.ok(ref.normalisedError(got.output, wanted.output) <= 1e-4, `output over input ${over}`);
        assert.ok(ref.maxAbsDiff(got.weights, wanted.weights) <= 1e-5, `weights with output over input ${over}`);
      }
    });

    it('weights, output and scores in one buffer with q, k and v, each result straddling inputs', () => {
      // [q | k | v | room]: output over q, weights over k and the start of v, scores over the rest
      // of v and the room; the results do not overlap each other (that is refused).
      const buffer = new Float32Array(nIn + 2 * nW);
      const [q, k, v] = [0, 1, 2].map((i) => buffer.subarray(i * nIn, (i + 1) * nIn));
      [q0, k0, v0].forEach((x, i) => [q, k, v][i].set(x));
      const output = buffer.subarray(0, nIn);
      const weights = buffer.subarray(nIn, nIn + nW);
      const scores = buffer.subarray(nIn + nW, nIn + 2 * nW);
      assert.ok(nIn + nW > 2 * nIn && nIn + nW < 3 * nIn, 'weights and scores both straddle v');
      const got = lens.attention(q, k, v, { ...opts, into: { weights, output, scores } });
      assert.equal(got.weights, weights);
      assert.ok(ref.maxAbsDiff(got.weights, wanted.weights) <= 1e-5, 'weights');
      assert.ok(ref.normalisedError(got.scores, wanted.scores) <= 1e-5, 'scores');
      assert.ok(ref.normalisedError(got.output, wanted.output) <= 1e-4, 'output');
    });

    it('multiHead: output written over x, weights over the projection matrices', () => {
      const dModel = 8, heads = 2, n = 8, r = 0.5;
      const make = () => ({ x: ref.uniform(n * dModel, 41), wQ: ref.uniform(dModel * dModel, 42, -r, r),
        wK: ref.uniform(dModel * dModel, 43, -r, r), wV: ref.uniform(dModel * dModel, 44, -r, r),
        wO: ref.uniform(dModel * dModel, 45, -r, r), bO: ref.uniform(dModel, 46) });
      const a = make();
      const want = ref.multiHead(a.x, { dModel, heads, ...a, causal: true });
      const b = make();
      // heads·n·n = 128 floats: weights over wQ and wK, laid out one after the other in a buffer.
      const buffer = new Float32Array(2 * dModel * dModel);
      buffer.set(b.wQ, 0);
      buffer.set(b.wK, dModel * dModel);
      const wQ = buffer.subarray(0, dModel * dModel), wK = buffer.subarray(dModel * dModel);
      const got = lens.multiHead(b.x, { dModel, heads, causal: true, wQ, wK, wV: b.wV, wO: b.wO, bO: b.bO,
        into: { output: b.x, weights: buffer } });
      assert.equal(got.output, b.x);
      assert.ok(ref.maxAbsDiff(got.weights, want.weights) <= 1e-5, 'weights');
      assert.ok(ref.normalisedError(got.output, want.output) <= 1e-4, 'output');
    });
  });
}
