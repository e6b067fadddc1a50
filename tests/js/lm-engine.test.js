// The language-model engine through its JavaScript API (the wasm model module): stories260K's
// greedy output against llama2.c's recorded text and ids, from the bundled .bin and from
// safetensors written here (F32, F16, BF16); the KV-cache path against full runs; seeded
// sampling; the context limit; error handling; and the heap after 1,000 generate calls.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import { init } from 'attnlens';
import { ModelFormatError } from '../../web/model/pack.js';
import {
  readFixture, readLlama2c, readModelFile, roundedModel, writeLlama2c, writeSafetensors,
} from './lm-files.js';

const GREEDY_200 = readFixture('expected_greedy_200.txt').toString('utf8');
const GREEDY_256 = readFixture('expected_greedy_256.txt').toString('utf8');
const GREEDY_IDS = JSON.parse(readFixture('greedy_token_ids.json')).ids_256;
const CONFIG = JSON.parse(readFixture('config.json'));
const BIN = readModelFile('stories260K.bin');
const TOKENIZER = readModelFile('tok512.bin');
// Logits of the same float32 weights through the .bin and safetensors loaders (q/k rows permuted
// for RoPE halves: another summation order): worst seen 6.7e-6 (F32) and 8.8e-6 (F16/BF16 against
// their rounded weights), SIMD128 and relaxed modules, Node 20; the C++ test holds 1e-5.
const F32_LOGIT_TOLERANCE = 3e-5;

const maxAbs = (a, b) => {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
};

let lens;
let lm;
before(async () => {
  lens = await init();
  lm = await lens.loadModel('stories260K');
});

describe('stories260K through lens.loadModel', () => {
  it('describes itself', () => {
    assert.equal(lm.kind, 'causal-lm');
    assert.deepEqual({ ...lm.config }, { architecture: 'llama2.c', modelType: 'llama', dim: 64, hiddenDim: 172, layers: 5, heads: 8,
      kvHeads: 4, headDim: 8, vocabSize: 512, context: 512, seqLen: 512, typeVocab: 0 });
    assert.equal(lm.info.rope, 'interleaved');
  });

  it('reports progress and caches the bundled model', async () => {
    const stages = [];
    const again = await lens.loadModel('stories260K', { onProgress: (p) => stages.push(p.stage) });
    assert.equal(again, lm);
    assert.deepEqual(stages, ['ready']);
  });

  it('greedy generation reproduces llama2.c\'s recorded 200- and 256-step texts and ids', () => {
    const g256 = lm.generate('', { steps: 256, temperature: 0 });
    assert.equal(g256.text, GREEDY_256);
    assert.deepEqual([...g256.ids], GREEDY_IDS);
    assert.equal(g256.stopped, 'steps');
    assert.deepEqual([...g256.prompt.ids], [1]);
    const g200 = lm.generate('', { steps: 200, temperature: 0 });
    assert.equal(g200.text, GREEDY_200);
    assert.equal(lm.decode(g200.ids), GREEDY_200);
  });

  it('tokenizes as run.c encode(): BOS, dummy prefix, merges, byte fallback', () => {
    assert.deepEqual([...lm.tokenize('Once upon a time').ids], [1, 403, 407, 261, 378]);
    assert.deepEqual(lm.tokenize('Once upon a time').tokens, ['<s>', ' Once', ' upon', ' a', ' time']);
    assert.deepEqual([...lm.tokenize('').ids], [1]);
    const e = lm.tokenize('ï');  // no piece: its two UTF-8 bytes fall back to ids byte + 3
    assert.deepEqual([...e.ids].slice(-2), [0xc3 + 3, 0xaf + 3]);
    assert.deepEqual(lm.tokenize('é').tokens, ['<s>', ' ', 'é']);  // a piece of its own
    // run.c prints a lone byte only when printable ASCII or whitespace: the fallback bytes vanish.
    assert.equal(lm.decode(lm.tokenize('naïve').ids), 'nave');
    assert.equal(lm.decode(lm.tokenize('Lily saw a big dog.').ids), 'Lily saw a big dog.');
  });

  it('run() gives causal attention rows that sum to 1, logits and next-token probabilities', () => {
    const r = lm.run('Once upon a time, there was');
    const n = r.ids.length;
    assert.equal(r.layers.length, 5);
    for (const { heads, attention } of r.layers) {
      assert.equal(heads, 8);
      assert.equal(attention.length, 8 * n * n);
      for (let h = 0; h < heads; h++)
        for (let i = 0; i < n; i++) {
          let sum = 0;
          for (let j = 0; j < n; j++) {
            const w = attention[(h * n + i) * n + j];
            if (j > i) assert.equal(w, 0);
            sum += w;
          }
          assert.ok(Math.abs(sum - 1) < 1e-5);
        }
    }
    assert.equal(r.logits.length, 512);
    assert.ok(Math.abs(r.next.reduce((a, b) => a + b, 0) - 1) < 1e-5);
    let best = 0;
    for (let i = 1; i < 512; i++) if (r.logits[i] > r.logits[best]) best = i;
    assert.equal(lm.generate('Once upon a time, there was', { steps: 1, temperature: 0 }).ids[0], best);
  });

  it('the incremental (KV-cache) path equals full runs: attention rows, probabilities, ids', () => {
    const prompt = 'Tom and Sue went to the';
    const g = lm.generate(prompt, { steps: 24, temperature: 0 });
    const ids = [...g.prompt.ids];
    for (const step of g.steps) {
      assert.equal(step.position, ids.length - 1);
      const r = lm.run(ids);
      const n = ids.length;
      for (let l = 0; l < 5; l++) {
        const full = r.layers[l].attention;
        const row = new Float32Array(8 * n);
        for (let h = 0; h < 8; h++) row.set(full.subarray((h * n + n - 1) * n, (h * n + n) * n), h * n);
        assert.ok(maxAbs(step.attention[l], row) <= 1e-5, `layer ${l} at position ${step.position}`);
      }
      for (const c of step.candidates) assert.ok(Math.abs(c.p - r.next[c.id]) <= 1e-5);
      assert.equal(step.candidates[0].id, step.id);  // greedy: the most probable
      ids.push(step.id);
    }
  });

  it('seeded sampling is reproducible; candidates are the top 10, most probable first', () => {
    const a = lm.generate('The dog', { steps: 40, temperature: 0.9, topP: 0.9, seed: 1234 });
    const b = lm.generate('The dog', { steps: 40, temperature: 0.9, topP: 0.9, seed: 1234 });
    const c = lm.generate('The dog', { steps: 40, temperature: 0.9, topP: 0.9, seed: 99 });
    assert.deepEqual(a.ids, b.ids);
    assert.equal(a.text, b.text);
    assert.equal(a.seed, 1234);
    assert.notDeepEqual(a.ids, c.ids);
    for (const s of a.steps) {
      assert.equal(s.candidates.length, 10);
      for (let i = 1; i < 10; i++) assert.ok(s.candidates[i - 1].p >= s.candidates[i].p);
    }
    const random = lm.generate('The dog', { steps: 3 });
    assert.ok(Number.isSafeInteger(random.seed));
    assert.deepEqual(lm.generate('The dog', { steps: 3, seed: random.seed }).ids, random.ids);
  });

  it('onToken sees each step; returning false or a stop sequence stops', () => {
    const seen = [];
    const g = lm.generate('', { steps: 30, temperature: 0, onToken: (s) => { seen.push(s.id); } });
    assert.deepEqual(seen, [...g.ids]);
    const stopped = lm.generate('', { steps: 30, temperature: 0, onToken: (s) => s.position < 4 });
    assert.equal(stopped.stopped, 'stop');
    assert.equal(stopped.ids.length, 5);
    const sentence = lm.generate('', { steps: 100, temperature: 0, stop: '.' });
    assert.equal(sentence.stopped, 'stop');
    assert.ok(sentence.text.endsWith('.') && sentence.text.indexOf('.') === sentence.text.length - 1);
    assert.throws(() => lm.generate('', { onToken: () => { throw new Error('from the callback'); } }), /from the callback/);
    const inner = [];
    const outer = lm.generate('', { steps: 5, temperature: 0, onToken: () => {
      inner.push(lm.run('Hi').ids.length);  // run() inside a generation is fine
      assert.throws(() => lm.generate('x'), /onToken/);
    } });
    assert.deepEqual([...outer.ids], GREEDY_IDS.slice(0, 5));
    assert.deepEqual(inner, [3, 3, 3, 3, 3]);
    assert.equal(lm.generate('', { steps: 3, temperature: 0 }).ids.length, 3);  // still usable
  });

  it('stops at the context limit with stopped: "context"', () => {
    const prompt = new Int32Array(510).fill(261);
    prompt[0] = 1;
    const g = lm.generate(prompt, { steps: 10, temperature: 0 });
    assert.equal(g.stopped, 'context');
    assert.deepEqual(g.steps.map((s) => s.position), [509, 510, 511]);
    assert.equal(g.steps[2].attention[0].length, 8 * 512);
    const full = new Int32Array(512).fill(261);
    assert.equal(lm.generate(full, { steps: 5 }).ids.length, 1);
    assert.throws(() => lm.generate(new Int32Array(513).fill(261)), { name: 'RangeError', message: /context of 512/ });
    assert.throws(() => lm.run('Once upon a time '.repeat(200)), { name: 'RangeError', message: /context of 512/ });
  });

  it('rejects bad options and inputs with errors naming them', () => {
    const cases = [
      [() => lm.generate('', { steps: 0 }), RangeError, /options.steps/],
      [() => lm.generate('', { steps: 2.5 }), RangeError, /options.steps/],
      [() => lm.generate('', { steps: '3' }), TypeError, /options.steps/],
      [() => lm.generate('', { temperature: -1 }), RangeError, /options.temperature/],
      [() => lm.generate('', { temperature: NaN }), RangeError, /options.temperature/],
      [() => lm.generate('', { temperature: 'hot' }), TypeError, /options.temperature/],
      [() => lm.generate('', { topP: 0 }), RangeError, /options.topP/],
      [() => lm.generate('', { topP: 1.5 }), RangeError, /options.topP/],
      [() => lm.generate('', { seed: -1 }), RangeError, /options.seed/],
      [() => lm.generate('', { seed: 0.5 }), RangeError, /options.seed/],
      [() => lm.generate('', { seed: '1' }), TypeError, /options.seed/],
      [() => lm.generate('', { onToken: 3 }), TypeError, /options.onToken/],
      [() => lm.generate('', { stop: [''] }), RangeError, /options.stop/],
      [() => lm.generate('', { stop: 5 }), TypeError, /options.stop/],
      [() => lm.generate('', { tokens: 5 }), TypeError, /unknown option 'tokens'/],
      [() => lm.generate('', null), TypeError, /options/],
      [() => lm.run(42), TypeError, /input/],
      [() => lm.run([]), RangeError, /empty/],
      [() => lm.run([1, 512]), RangeError, /ids\[1\] is 512/],
      [() => lm.run([1, -1]), RangeError, /ids\[1\]/],
      [() => lm.run([1, 2.5]), RangeError, /ids\[1\]/],
      [() => lm.run(['a']), TypeError, /ids\[0\]/],
      [() => lm.tokenize(null), TypeError, /text/],
      [() => lm.tokenize('x'.repeat(1_000_001)), RangeError, /1000000/],
      [() => lm.decode('abc'), TypeError, /ids/],
    ];
    for (const [call, type, message] of cases) assert.throws(call, (e) => e instanceof type && message.test(e.message), String(call));
    assert.equal(lm.run('Hi').ids.length, 3);  // still usable
  });

  it('1,000 generate calls (and the errors) leave the heap where it started', () => {
    lm.generate('warm up', { steps: 4, seed: 1 });
    lm.run('warm up');
    const start = lm.memory();
    for (let i = 0; i < 1000; i++) {
      lm.generate(i % 2 ? 'Once' : '', { steps: 3, temperature: i % 3 ? 1 : 0, topP: 0.9, seed: i });
      if (i % 100 === 0) {
        lm.run('The end.');
        assert.throws(() => lm.generate('', { onToken: () => { throw new Error('x'); } }));
      }
    }
    assert.equal(lm.memory().inUse, start.inUse);
  });
});

describe('other sources and layouts', () => {
  const model = readLlama2c(BIN);

  it('llama2.c bytes with { tokenizer } load the same model', async () => {
    const other = await lens.loadModel(BIN.slice(), { tokenizer: TOKENIZER.slice() });
    assert.notEqual(other, lm);
    assert.equal(other.generate('', { steps: 200, temperature: 0 }).text, GREEDY_200);
    assert.ok(maxAbs(other.run('Once upon a time').logits, lm.run('Once upon a time').logits) === 0);
  });

  it('Hugging Face config + F32 safetensors reproduce the greedy texts', async (t) => {
    const stages = [];
    const hf = await lens.loadModel({ config: CONFIG, weights: writeSafetensors(model, 'F32'), tokenizer: TOKENIZER },
      { onProgress: (p) => stages.push(p.stage) });
    assert.equal(hf.info.rope, 'half');
    assert.deepEqual([stages[0], ...stages.slice(-2)], ['download', 'initialise', 'ready']);
    assert.equal(hf.generate('', { steps: 256, temperature: 0 }).text, GREEDY_256);
    assert.equal(hf.generate('', { steps: 200, temperature: 0 }).text, GREEDY_200);
    let worst = 0;
    for (const text of ['Once upon a time', 'A cat 😀 naïve', '']) {
      const err = maxAbs(hf.run(text).logits, lm.run(text).logits);
      worst = Math.max(worst, err);
      assert.ok(err <= F32_LOGIT_TOLERANCE, `${text}: ${err}`);
    }
    t.diagnostic(`F32 safetensors vs .bin: logits max abs difference ${worst.toExponential(2)}`);
  });

  for (const dtype of ['F16', 'BF16'])
    it(`${dtype} safetensors convert exactly: logits equal a float32 model holding the rounded weights`, async (t) => {
      const hf = await lens.loadModel({ config: JSON.stringify(CONFIG), weights: writeSafetensors(model, dtype), tokenizer: TOKENIZER });
      const rounded = await lens.loadModel(writeLlama2c(roundedModel(model, dtype)), { tokenizer: TOKENIZER });
      for (const text of ['Once upon a time', 'The little dog was happy.']) {
        const a = hf.run(text).logits, b = rounded.run(text).logits, exact = lm.run(text).logits;
        t.diagnostic(`${dtype} vs rounded f32 on ${JSON.stringify(text)}: ${maxAbs(a, b).toExponential(2)}`);
        assert.ok(maxAbs(a, b) <= F32_LOGIT_TOLERANCE, `${dtype} vs rounded f32: ${maxAbs(a, b)}`);
        const drift = maxAbs(a, exact);  // only the rounding of the weights
        assert.ok(drift > 0 && drift < (dtype === 'F16' ? 0.05 : 0.5), `${dtype} vs f32: ${drift}`);
      }
    });

  it('refuses truncated, corrupt and foreign files with ModelFormatError, before using them', async () => {
    const refuse = async (source, options, message) =>
      assert.rejects(lens.loadModel(source, options), (e) => e instanceof ModelFormatError && message.test(e.message));
    await refuse(BIN.slice(0, 1000), { tokenizer: TOKENIZER }, /truncated/);
    await refuse(BIN.slice(0, 20), { tokenizer: TOKENIZER }, /too short/);
    await refuse(BIN, { tokenizer: TOKENIZER.slice(0, 3000) }, /tokenizer file .*(truncated|cannot hold)/);
    await refuse(BIN, { tokenizer: TOKENIZER.slice(0, 6000) }, /tokenizer file is truncated/);
    await refuse(TOKENIZER, { tokenizer: TOKENIZER }, /llama2.c|truncated|field/);
    const bad = BIN.slice();
    new DataView(bad.buffer).setInt32(12, 7, true);  // 7 heads do not divide dim 64
    await refuse(bad, { tokenizer: TOKENIZER }, /n_heads|head size/);
    const huge = BIN.slice();
    new DataView(huge.buffer).setInt32(0, 16384, true);
    new DataView(huge.buffer).setInt32(8, 256, true);
    await refuse(huge, { tokenizer: TOKENIZER }, /truncated|needs/);
    // A consistent file whose full-context KV cache (80 layers × 131,072 positions, 5 GiB)
    // exceeds the model module's 4 GiB heap: refused before allocating, and the engine stays usable.
    const [layers, seqLen] = [80, 131072];
    const floats = 512 * 64 + layers * (2 * 64 + 4 * 64 * 64 + 3 * 64 * 172) + 64 + seqLen * 8;
    const tooBig = new Uint8Array(28 + 4 * floats);
    new Int32Array(tooBig.buffer, 0, 7).set([64, 172, layers, 8, 8, 512, seqLen]);
    await refuse(tooBig, { tokenizer: TOKENIZER }, /KV cache of 131072 positions .*more than the \d+ MiB/);
    assert.equal(lm.generate('', { steps: 2, temperature: 0 }).ids.length, 2);
    const st = writeSafetensors(model, 'F32');
    await refuse(st, { tokenizer: TOKENIZER }, /safetensors.*config/);
    await refuse({ config: { ...CONFIG, model_type: 't5' }, weights: st, tokenizer: TOKENIZER }, undefined, /model_type/);
    await refuse({ config: '{"hidden_size": 64', weights: st, tokenizer: TOKENIZER }, undefined, /JSON/);
    await refuse({ config: CONFIG, weights: st.slice(0, st.length - 10), tokenizer: TOKENIZER }, undefined, /data_offsets/);
    await assert.rejects(lens.loadModel(BIN), /ATNLMODL|model file/);  // no tokenizer: read as USE-lite's format
    await assert.rejects(lens.loadModel({ config: CONFIG, weights: st }), { name: 'TypeError', message: /source.tokenizer/ });
    await assert.rejects(lens.loadModel('stories260K', { tokenizer: TOKENIZER }), TypeError);
    await assert.rejects(lens.loadModel(42, { tokenizer: TOKENIZER }), { name: 'TypeError', message: /loadModel source/ });
  });
});
