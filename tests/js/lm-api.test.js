// The language model's API at the edges a new user reaches first: option values at and past
// their limits, stop strings that end inside a token, bigint seeds, temperatures too small for
// float32, prompts at and past the context, Unicode and byte-fallback prompts, decode() of bad
// ids, and the model still working after each error.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { readFileSync } from 'node:fs';

import { init } from 'attnlens';
import { ReferenceModel, readLlama2c } from './llama-reference.js';

// The float64 reference says which way each greedy run ends (EOS or the context), so each
// assertion pins one outcome.
let lm, reference;
before(async () => {
  lm = await (await init()).loadModel('stories260K');
  reference = new ReferenceModel(readLlama2c(readFileSync(new URL('../../web/models/stories260K/stories260K.bin', import.meta.url))));
});

function assertGreedyOutcome(g, prompt, steps, message) {
  const want = reference.greedyOutcome([...prompt], steps);
  assert.equal(g.stopped, want.stopped, message);
  assert.deepEqual([...g.ids], want.ids, message);
}

const greedy = (prompt, steps) => lm.generate(prompt, { steps, temperature: 0 });

describe('generate() options at their limits', () => {
  it('steps: 0, negative, non-integer, non-number and infinite are refused; huge stops at EOS or the context', () => {
    for (const steps of [0, -1, 2.5, Infinity, NaN])
      assert.throws(() => lm.generate('Hi', { steps }), { name: 'RangeError', message: /options\.steps must be a positive integer/ });
    for (const steps of ['3', 3n, null, [3]])
      assert.throws(() => lm.generate('Hi', { steps }), { name: 'TypeError', message: /options\.steps/ });
    const g = lm.generate('', { steps: Number.MAX_SAFE_INTEGER, temperature: 0 });
    assert.equal(g.stopped, 'eos');
    assertGreedyOutcome(g, [1], Number.MAX_SAFE_INTEGER, 'from BOS');
    assert.equal(g.text.startsWith(greedy('', 40).text), true);
    // Repeating one token runs into the context instead.
    const near = new Int32Array(500).fill(261);
    near[0] = 1;
    const c = lm.generate(near, { steps: 1e9, temperature: 0 });
    assert.equal(c.stopped, 'context');
    assertGreedyOutcome(c, near, 1e9, '500 tokens of one piece');
    assert.equal(c.ids.length, 13);
    assert.equal(c.steps.at(-1).position, 511);
  });

  it('temperature: negative, NaN, infinite refused; tiny ones are the argmax limit, never NaN', () => {
    for (const temperature of [-1, -1e-9, NaN, Infinity, -Infinity])
      assert.throws(() => lm.generate('Hi', { temperature }), { name: 'RangeError', message: /options\.temperature/ });
    assert.throws(() => lm.generate('Hi', { temperature: '0' }), { name: 'TypeError', message: /options\.temperature/ });
    const argmax = greedy('Once', 4);
    for (const temperature of [1e-30, 1e-45, Number.MIN_VALUE]) {
      const g = lm.generate('Once', { steps: 4, temperature, seed: 9 });
      assert.deepEqual(g.ids, argmax.ids, `temperature ${temperature}`);
      for (const s of g.steps) {
        assert.ok(s.candidates.every((c) => Number.isFinite(c.p)), 'finite probabilities');
        assert.equal(s.candidates[0].p, 1);
      }
    }
    // A huge temperature flattens the distribution: every candidate ≈ 1 / vocab.
    const flat = lm.generate('Once', { steps: 1, temperature: 1e30, seed: 9 });
    for (const c of flat.steps[0].candidates) assert.ok(Math.abs(c.p - 1 / 512) < 1e-6);
  });

  it('topP outside (0, 1] refused; a tiny topP keeps only the most probable token', () => {
    for (const topP of [0, -0.5, 1.0000001, 2, NaN, Infinity])
      assert.throws(() => lm.generate('Hi', { topP }), { name: 'RangeError', message: /options\.topP must be a number in \(0, 1\]/ });
    assert.throws(() => lm.generate('Hi', { topP: '0.9' }), { name: 'TypeError', message: /options\.topP/ });
    const g = lm.generate('Once', { steps: 6, temperature: 1, topP: Number.MIN_VALUE, seed: 4 });
    assert.deepEqual(g.ids, greedy('Once', 6).ids);
  });

  it('seed: numbers up to 2^53 − 1 and bigints up to 2^64 − 1, reproducible; others refused', () => {
    const options = { steps: 12, temperature: 1 };
    const a = lm.generate('The', { ...options, seed: 77 });
    assert.deepEqual(lm.generate('The', { ...options, seed: 77n }).ids, a.ids, 'a bigint seed is the same seed');
    assert.equal(lm.generate('The', { ...options, seed: 77n }).seed, 77n);
    const big = lm.generate('The', { ...options, seed: 2n ** 64n - 1n });
    assert.deepEqual(lm.generate('The', { ...options, seed: 2n ** 64n - 1n }).ids, big.ids);
    assert.deepEqual(lm.generate('The', { ...options, seed: 2 ** 53 - 1 }).ids,
      lm.generate('The', { ...options, seed: 2n ** 53n - 1n }).ids);
    for (const seed of [-1, 0.5, 2 ** 53, NaN, Infinity])
      assert.throws(() => lm.generate('The', { seed }), { name: 'RangeError', message: /options\.seed/ });
    for (const seed of [-1n, 2n ** 64n])
      assert.throws(() => lm.generate('The', { seed }), { name: 'RangeError', message: /options\.seed .*2\^64/ });
    for (const seed of ['1', null, {}])
      assert.throws(() => lm.generate('The', { seed }), { name: 'TypeError', message: /options\.seed must be a number or a bigint/ });
  });

  it('stop strings that end inside a token, span tokens, or never occur', () => {
    const free = greedy('', 120).text;
    for (const stop of ['e w', 'Lily', ', ', 'park.', 'ed to pl']) {
      const at = free.indexOf(stop);
      assert.ok(at > 0, `the greedy text holds ${JSON.stringify(stop)}`);
      const g = lm.generate('', { steps: 120, temperature: 0, stop });
      assert.equal(g.stopped, 'stop', stop);
      // Stopped at the first token completing the stop string, that token kept whole.
      assert.equal(g.text.indexOf(stop), at, stop);
      const without = g.text.slice(0, -g.tokens.at(-1).length || undefined);
      assert.ok(!without.includes(stop), `stopped at the first occurrence of ${JSON.stringify(stop)}`);
      assert.ok(free.startsWith(g.text), stop);
    }
    const none = lm.generate('', { steps: 30, temperature: 0, stop: ['zzz', 'qqq'] });
    assert.equal(none.stopped, 'steps');
    // Only the new text counts: a stop string in the prompt does not stop at once.
    assert.ok(lm.generate('Lily', { steps: 5, temperature: 0, stop: 'Lily' }).ids.length > 1);
  });

  it('onToken: a throw propagates, false stops, other values continue; the model stays usable', () => {
    const boom = new Error('reader closed the page');
    assert.throws(() => lm.generate('Hi', { onToken: () => { throw boom; } }), (e) => e === boom);
    assert.equal(lm.generate('Hi', { steps: 5, temperature: 0, onToken: () => 0 }).ids.length, 5);
    assert.equal(lm.generate('Hi', { steps: 5, temperature: 0, onToken: () => false }).ids.length, 1);
    assert.deepEqual(greedy('Hi', 5).ids, lm.generate('Hi', { steps: 5, temperature: 0, onToken: () => null }).ids);
  });
});

describe('the model module follows the engine build', () => {
  it('init({ build }) picks the model module; the greedy text is the same on each', async () => {
    const text = greedy('', 60).text;
    for (const build of ['simd', 'scalar']) {
      const other = await (await init({ build })).loadModel('stories260K');
      assert.equal(other.info.build, 'simd', build);  // the model module has no scalar build
      assert.equal(other.generate('', { steps: 60, temperature: 0 }).text, text);
    }
    assert.equal(lm.info.build, (await init()).build === 'relaxed' ? 'relaxed' : 'simd');
  });
});

describe('prompts and inputs', () => {
  it('the empty prompt is BOS; Unicode, emoji and byte-fallback prompts tokenize as stored and generate', () => {
    assert.deepEqual([...lm.generate('', { steps: 1, temperature: 0 }).prompt.ids], [1]);
    for (const prompt of ['😀🎉', '你好', 'naïve café', '\u0000\u0007', 'e\u0301', '\ud83d', 'Ω'.repeat(40)]) {
      const g = lm.generate(prompt, { steps: 3, temperature: 0 });
      assert.deepEqual([...g.prompt.ids], [...lm.tokenize(prompt).ids], prompt);
      assert.equal(g.prompt.tokens.length, g.prompt.ids.length);
      assert.equal(g.steps[0].position, g.prompt.ids.length - 1);
      assert.equal(g.steps[0].attention[0].length, 8 * g.prompt.ids.length);
      // Byte pieces show as the text they decode to; a lone byte of a character shows U+FFFD.
      if (/[^\u0000-\u00ff]/.test(prompt) && prompt !== 'naïve café') assert.ok(g.prompt.tokens.some((t) => t === '\ufffd'), prompt);
    }
  });

  it('prompts at the context: 511 and 512 tokens generate to position 511; 513 is a RangeError naming the limit', () => {
    for (const length of [511, 512]) {
      const ids = new Int32Array(length).fill(261);
      ids[0] = 1;
      const g = lm.generate(ids, { steps: 10, temperature: 0 });
      assert.equal(g.stopped, 'context');
      assertGreedyOutcome(g, ids, 10, `${length} tokens`);
      assert.equal(g.ids.length, 513 - length);
      assert.equal(g.steps.at(-1).position, 511);
    }
    assert.throws(() => lm.generate(new Int32Array(513).fill(261)), { name: 'RangeError', message: /513 ids, more than the model's context of 512/ });
    const long = 'Once upon a time, there was a little dog. '.repeat(60);
    assert.throws(() => lm.generate(long), { name: 'RangeError', message: /tokens long \(special tokens included\), more than the model's context of 512 tokens/ });
    assert.throws(() => lm.run(long), { name: 'RangeError', message: /context of 512/ });
  });

  it('run() on the longest text that fits (512 tokens) and tokenize() on long text', () => {
    const text = 'Once upon a time, there was a little dog. '.repeat(60);
    const ids = lm.tokenize(text).ids;
    assert.ok(ids.length > 512);
    const r = lm.run(ids.subarray(0, 512));
    assert.equal(r.layers[4].attention.length, 8 * 512 * 512);
    assert.ok(r.next.every(Number.isFinite));
    assert.equal(lm.tokenize('ab '.repeat(100_000)).ids.length > 100_000, true);
  });

  it('decode(): out-of-range, negative, fractional and NaN ids are RangeErrors; wrong types TypeErrors', () => {
    for (const ids of [[1, 512], [-1], [1.5], [NaN], [Infinity], [2 ** 40]])
      assert.throws(() => lm.decode(ids), { name: 'RangeError', message: /lm\.decode\(ids\): ids\[\d\] is .*token ids are integers from 0 to 511/ });
    for (const ids of [5, 'abc', null, undefined, [{}], ['1'], new DataView(new ArrayBuffer(4))])
      assert.throws(() => lm.decode(ids), { name: 'TypeError', message: /lm\.decode\(ids\)/ });
    assert.equal(lm.decode([]), '');
    assert.equal(lm.decode(new Uint16Array([403, 407])), 'Once upon');
    assert.equal(lm.decode([1n, 403n]), 'Once');
    assert.equal(lm.decode(greedy('', 50).ids), greedy('', 50).text);
  });

  it('after every kind of error, tokenize/run/generate/decode still give the same results', () => {
    const want = { g: greedy('Tom', 8), r: lm.run('Tom ran') };
    const bad = [
      () => lm.generate('x', { steps: -1 }), () => lm.generate('x', { onToken: () => { throw new Error('x'); } }),
      () => lm.run(new Int32Array(600)), () => lm.decode([9999]), () => lm.tokenize(7), () => lm.run([1, 512]),
      () => lm.generate(new Int32Array(513)), () => lm.generate('x', { seed: -1n }),
    ];
    for (const call of bad) assert.throws(call);
    assert.deepEqual(greedy('Tom', 8).ids, want.g.ids);
    assert.deepEqual(lm.run('Tom ran').logits, want.r.logits);
  });
});
