import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { init } from 'attnlens';

const lens = await init();
const q = new Float32Array(8), k = new Float32Array(12), v = new Float32Array(15);
const ok = { dK: 4, dV: 5 };  // nQ = 2, nK = 3

// [description, call, error type, message pattern]
const attentionCases = [
  ['q not a Float32Array', () => lens.attention([1, 2], k, v, ok), TypeError, /^q must be a Float32Array \(got an Array\)/],
  ['k a Float64Array', () => lens.attention(q, new Float64Array(12), v, ok), TypeError, /^k must be a Float32Array \(got a Float64Array\)/],
  ['v missing', () => lens.attention(q, k, undefined, ok), TypeError, /^v must be a Float32Array/],
  ['options not an object', () => lens.attention(q, k, v, 4), TypeError, /^options must be an object/],
  ['dK missing', () => lens.attention(q, k, v, {}), TypeError, /options\.dK is required/],
  ['dK a string', () => lens.attention(q, k, v, { dK: '4' }), TypeError, /^options\.dK must be a number \(got the string "4"\)/],
  ['dK zero', () => lens.attention(q, k, v, { dK: 0 }), RangeError, /^options\.dK must be a positive integer \(got 0\)/],
  ['dK fractional', () => lens.attention(q, k, v, { dK: 2.5 }), RangeError, /^options\.dK must be a positive integer/],
  ['heads negative', () => lens.attention(q, k, v, { ...ok, heads: -1 }), RangeError, /^options\.heads must be a positive integer/],
  ['q length not a multiple', () => lens.attention(new Float32Array(7), k, v, ok), RangeError, /^q\.length \(7\) must be a positive multiple of heads·dK \(4\)/],
  ['empty q', () => lens.attention(new Float32Array(0), k, v, ok), RangeError, /^q\.length \(0\) must be a positive multiple/],
  ['v length inconsistent', () => lens.attention(q, k, new Float32Array(14), ok), RangeError, /^v\.length must be heads·nK·dV = 15 \(got 14\)/],
  ['NaN in q', () => lens.attention(Float32Array.of(1, 2, NaN, 4, 5, 6, 7, 8), k, v, ok), RangeError, /^q\[2\] is NaN: every value must be finite/],
  ['Infinity in v', () => lens.attention(q, k, Float32Array.from({ length: 15 }, (_, i) => (i === 9 ? Infinity : 0)), ok), RangeError, /^v\[9\] is Infinity/],
  ['scale zero', () => lens.attention(q, k, v, { ...ok, scale: 0 }), RangeError, /^options\.scale must be a finite number > 0 \(got 0\)/],
  ['scale negative', () => lens.attention(q, k, v, { ...ok, scale: -2 }), RangeError, /^options\.scale must be a finite number > 0/],
  ['scale NaN', () => lens.attention(q, k, v, { ...ok, scale: NaN }), RangeError, /^options\.scale must be a finite number > 0 \(got NaN\)/],
  ['scale Infinity', () => lens.attention(q, k, v, { ...ok, scale: Infinity }), RangeError, /^options\.scale must be a finite number > 0/],
  ['scale a string', () => lens.attention(q, k, v, { ...ok, scale: 'big' }), TypeError, /^options\.scale must be a number/],
  ['scale below float32', () => lens.attention(q, k, v, { ...ok, scale: 1e-50 }), RangeError, /outside float32's range/],
  ['causal not boolean', () => lens.attention(q, k, v, { ...ok, causal: 1 }), TypeError, /^options\.causal must be true or false/],
  ['mask wrong type', () => lens.attention(q, k, v, { ...ok, keyMask: [1, 1, 0] }), TypeError, /^options\.keyMask must be a Uint8Array/],
  ['mask wrong length', () => lens.attention(q, k, v, { ...ok, keyMask: new Uint8Array(2) }), RangeError, /^options\.keyMask must have nK = 3 entries \(got 2\)/],
  ['mask value 2', () => lens.attention(q, k, v, { ...ok, keyMask: Uint8Array.of(1, 2, 1) }), RangeError, /^options\.keyMask\[1\] is 2/],
  ['unknown option', () => lens.attention(q, k, v, { ...ok, casual: true }), TypeError, /unknown option 'casual'/],
];

describe('lens.attention rejects bad input with a clear Error', () => {
  for (const [what, call, type, message] of attentionCases) {
    it(what, () => assert.throws(call, (e) => e instanceof type && e.constructor === type && message.test(e.message)));
  }

  it('throws RangeError before allocating a size the engine cannot hold (n = 100 000, h = 16)', () => {
    // Weights alone would be 16·1e5·1e5·4 bytes = 640 GB. Tiny inputs, huge implied nQ·nK: use
    // dK = 1 so q, k, v stay 6.4 MB each.
    const big = new Float32Array(16 * 100_000);
    assert.throws(() => lens.attention(big, big, big, { dK: 1, heads: 16 }),
      (e) => e instanceof RangeError && /needs .* GiB of working memory/.test(e.message));
  });

  it('keeps working after errors', () => {
    for (const [, call] of attentionCases) try { call(); } catch {}
    const r = lens.attention(q, k, v, ok);
    assert.equal(r.weights.length, 6);
    assert.ok(Math.abs(r.weights[0] - 1 / 3) < 1e-6);
  });
});

describe('lens.multiHead rejects bad input with a clear Error', () => {
  const x = new Float32Array(12), w = new Float32Array(16);
  const base = { dModel: 4, heads: 2, wQ: w, wK: w, wV: w };
  const cases = [
    ['x wrong type', () => lens.multiHead([0], base), TypeError, /^x must be a Float32Array/],
    ['dModel missing', () => lens.multiHead(x, { ...base, dModel: undefined }), TypeError, /options\.dModel is required/],
    ['heads does not divide', () => lens.multiHead(x, { ...base, heads: 3 }), RangeError, /options\.heads \(3\) must divide options\.dModel \(4\)/],
    ['wK missing', () => lens.multiHead(x, { ...base, wK: undefined }), TypeError, /^options\.wK must be a Float32Array/],
    ['wV wrong length', () => lens.multiHead(x, { ...base, wV: new Float32Array(15) }), RangeError, /^options\.wV\.length must be dModel·dModel = 16 \(got 15\)/],
    ['bias wrong length', () => lens.multiHead(x, { ...base, bQ: new Float32Array(3) }), RangeError, /^options\.bQ\.length must be dModel = 4/],
    ['bO without wO', () => lens.multiHead(x, { ...base, bO: new Float32Array(4) }), RangeError, /bO needs options\.wO/],
    ['xKV ragged', () => lens.multiHead(x, { ...base, xKV: new Float32Array(6) }), RangeError, /^options\.xKV\.length \(6\) must be a positive multiple of dModel/],
    ['mask for the wrong nK', () => lens.multiHead(x, { ...base, keyMask: new Uint8Array(4) }), RangeError, /keyMask must have nK = 3/],
    ['NaN in x', () => lens.multiHead(Float32Array.from({ length: 12 }, (_, i) => (i === 5 ? NaN : 0)), base), RangeError, /^x\[5\] is NaN: every value must be finite/],
    ['Infinity in wK', () => lens.multiHead(x, { ...base, wK: Float32Array.from({ length: 16 }, (_, i) => (i === 3 ? -Infinity : 0)) }), RangeError, /^options\.wK\[3\] is -Infinity/],
    ['NaN in a bias', () => lens.multiHead(x, { ...base, bV: Float32Array.of(0, 0, NaN, 0) }), RangeError, /^options\.bV\[2\] is NaN/],
  ];
  for (const [what, call, type, message] of cases)
    it(what, () => assert.throws(call, (e) => e.constructor === type && message.test(e.message)));
});
