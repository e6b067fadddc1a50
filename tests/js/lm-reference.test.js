// stories260K: the float64 reference (tests/js/llama-reference.js, no code shared with the
// engine) is first checked against the author's recorded greedy output, then used as the
// yardstick for the engine's tokenizer, attention, logits, generation and sampling.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, describe, it } from 'node:test';

import { init } from 'attnlens';
import { ReferenceModel, ReferenceRng, ReferenceTokenizer, readLlama2c, sampleReference, softmax } from './llama-reference.js';
import { random } from './reference.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MODEL_DIR = path.join(ROOT, 'web/models/stories260K');        // the bundled, committed copy
const RECORDED = path.join(ROOT, 'tests/fixtures/stories260K');     // upstream-recorded outputs
const recorded = (file) => readFileSync(path.join(RECORDED, file), 'utf8');

let model, tokenizer;

before(() => {
  const checkpoint = readLlama2c(readFileSync(path.join(MODEL_DIR, 'stories260K.bin')));
  model = new ReferenceModel(checkpoint);
  tokenizer = new ReferenceTokenizer(readFileSync(path.join(MODEL_DIR, 'tok512.bin')), checkpoint.config.vocabSize);
});

describe('float64 reference against the recorded output', () => {
  it('reads the checkpoint header', () => {
    assert.deepEqual(model.config,
      { dim: 64, hiddenDim: 172, layers: 5, heads: 8, kvHeads: 4, headDim: 8, vocabSize: 512, seqLen: 512 });
  });

  it('greedy ids from BOS equal greedy_token_ids.json, and decode to the recorded texts byte for byte', () => {
    const ids = model.greedy([1], 256);
    assert.deepEqual(ids, JSON.parse(recorded('greedy_token_ids.json')).ids_256);
    assert.equal(tokenizer.decode(ids.slice(0, 200), { printable: true }), recorded('expected_greedy_200.txt'));
    assert.equal(tokenizer.decode(ids, { printable: true }), recorded('expected_greedy_256.txt'));
  });

  it('encodes with the dummy prefix, merges by score and falls back to bytes', () => {
    assert.deepEqual(tokenizer.encode(''), [1]);
    const ids = tokenizer.encode('Once upon a time');
    assert.equal(ids[0], 1);
    assert.equal(tokenizer.decode(ids.slice(1)), 'Once upon a time');
    // '你' has no piece: three byte ids (byte + 3), which decode back to the character.
    const cjk = tokenizer.encode('你');
    assert.deepEqual(cjk.slice(-3), [...new TextEncoder().encode('你')].map((b) => b + 3));
    assert.equal(tokenizer.decode(cjk.slice(1)), '你');
    // Every string round-trips (the dummy-prefix space is dropped after BOS).
    for (const text of ['café 😀  \n\n end', ' a', '\t<0x41> <s>', 'x'.repeat(50)])
      assert.equal(tokenizer.decode(tokenizer.encode(text).slice(1)), text);
  });

  it('a causal run: rows sum to 1, nothing above the diagonal, the last logits equal a greedy step', () => {
    const ids = tokenizer.encode('Lily and Ben went to the park.');
    const n = ids.length, r = model.run(ids);
    assert.equal(r.attention.length, 5);
    for (const a of r.attention) {
      assert.equal(a.length, 8 * n * n);
      for (let h = 0; h < 8; h++)
        for (let i = 0; i < n; i++) {
          let sum = 0;
          for (let j = 0; j < n; j++) {
            const w = a[(h * n + i) * n + j];
            if (j > i) assert.equal(w, 0);
            sum += w;
          }
          assert.ok(Math.abs(sum - 1) < 1e-12);
        }
    }
    let argmax = 0;
    for (let i = 1; i < r.logits.length; i++) if (r.logits[i] > r.logits[argmax]) argmax = i;
    assert.equal(model.greedy(ids, n + 1)[0], argmax);
  });
});

// ——— the engine against the reference ———

const ATTENTION_TOLERANCE = 2e-5, LOGIT_TOLERANCE = 1e-4;

const STORY = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine. ' +
  'One day, she saw a big, red ball in the park. "Can I play with you?" she asked a boy named Tom. ';
const PROMPTS = [
  '', 'Once upon a time', ' ', 'a', 'Lily and Ben went to the park. They saw a big dog.',
  'Café, naïve résumé, señor Zoë, “quotes” — dash… ™ €',            // accents and pieces with bytes ≥ 0x80
  '你好，世界。日本語のテキスト、한국어', '😀👍🏽 👨‍👩‍👧 🇯🇵 ❤️',           // no pieces: byte fallback
  'ĳ Ω ∑ ∞ \u0007 \u007f \u00a0 \u200b', 'tabs\tand\r\nwindows\r\nlines',
  '   leading spaces and    runs      of spaces   ', '\n\n\nOne\n\n\ntwo\n', '<s> </s> <0x41> <unk>',
  'e\u0301 vs \u00e9', 'MiXeD CaSe 1234567890 3.14 -42 +7 50% #1 @user',
  'lone \ud800 surrogate, NUL \u0000 inside',                       // U+FFFD bytes; NUL is byte id 3
];
// 491 tokens (BOS included): near the 512-token context, with room for a few generated ones.
const NEAR_CONTEXT = `${STORY.repeat(6)}Once upon a time, there was a little girl named Lily. ` +
  'She loved to play outside in the sunshine. One day, she saw a big, red ball in the park.';

function maxAbsDiff(got, want) {
  assert.equal(got.length, want.length, 'lengths');
  let m = 0;
  for (let i = 0; i < want.length; i++) m = Math.max(m, Math.abs(got[i] - want[i]));
  return m;
}

// Seeded random strings over letters, spaces, newlines, accents, CJK, emoji and combining marks.
function randomStrings(count, seed) {
  const next = random(seed);
  const alphabet = [...'abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ .,!?\'"-\n\t éàüñçøßæ 你好世界 😀🎉👍🏽 \u0301\u00a0<>0x123'];
  return Array.from({ length: count }, () => {
    const length = Math.floor(next() * 40);
    return Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
  });
}

describe('the engine (lens.loadModel("stories260K")) against the float64 reference', () => {
  let lm, lens;
  before(async () => {
    lens = await init();
    lm = await lens.loadModel('stories260K');
  });

  it('describes the model', () => {
    // scripts/test.sh runs this file again under Node's relaxed-SIMD flag: the fused
    // multiply-add module must then be the one checked.
    assert.equal(lm.info.build, lens.build === 'relaxed' ? 'relaxed' : 'simd');
    assert.equal(lm.kind, 'causal-lm');
    assert.deepEqual({ ...lm.config }, { architecture: 'llama2.c', modelType: 'llama', dim: 64, hiddenDim: 172, layers: 5,
      heads: 8, kvHeads: 4, headDim: 8, vocabSize: 512, context: 512, seqLen: 512, typeVocab: 0 });
  });

  it('tokenize(): the same ids as run.c\'s encoding, on the prompts and 300 seeded random strings', () => {
    for (const text of [...PROMPTS, NEAR_CONTEXT, ...randomStrings(300, 260)]) {
      const got = lm.tokenize(text);
      assert.ok(got.ids instanceof Int32Array);
      assert.deepEqual([...got.ids], tokenizer.encode(text), `ids of ${JSON.stringify(text)}`);
      assert.equal(got.tokens.length, got.ids.length);
    }
  });

  it('run(): ids exact, attention ≤ 2e-5 and logits ≤ 1e-4 on every prompt', (t) => {
    let worstAttention = 0, worstLogits = 0;
    for (const text of PROMPTS) {
      const got = lm.run(text), ids = tokenizer.encode(text), want = model.run(ids);
      assert.deepEqual([...got.ids], ids, JSON.stringify(text));
      assert.equal(got.layers.length, 5);
      for (let l = 0; l < 5; l++) {
        assert.equal(got.layers[l].heads, 8);
        worstAttention = Math.max(worstAttention, maxAbsDiff(got.layers[l].attention, want.attention[l]));
      }
      worstLogits = Math.max(worstLogits, maxAbsDiff(got.logits, want.logits));
      assert.ok(maxAbsDiff(got.next, want.next) <= 1e-5, `next-token probabilities of ${JSON.stringify(text)}`);
    }
    t.diagnostic(`${PROMPTS.length} prompts: attention max abs error ${worstAttention.toExponential(2)}, logits ${worstLogits.toExponential(2)}`);
    assert.ok(worstAttention <= ATTENTION_TOLERANCE, `attention max abs error ${worstAttention}`);
    assert.ok(worstLogits <= LOGIT_TOLERANCE, `logits max abs error ${worstLogits}`);
  });

  it('run() near the context length (491 tokens), and generation stops at the context', (t) => {
    const ids = tokenizer.encode(NEAR_CONTEXT);
    assert.equal(ids.length, 491);
    const got = lm.run(NEAR_CONTEXT), want = model.run(ids);
    assert.deepEqual([...got.ids], ids);
    let worst = 0;
    for (let l = 0; l < 5; l++) worst = Math.max(worst, maxAbsDiff(got.layers[l].attention, want.attention[l]));
    const logits = maxAbsDiff(got.logits, want.logits);
    t.diagnostic(`491 tokens: attention max abs error ${worst.toExponential(2)}, logits ${logits.toExponential(2)}`);
    assert.ok(worst <= ATTENTION_TOLERANCE, `attention max abs error ${worst}`);
    assert.ok(logits <= LOGIT_TOLERANCE, `logits max abs error ${logits}`);
    // 512 positions in all: the prompt's 491 leave room for 22 new tokens (the last is never read).
    const g = lm.generate(NEAR_CONTEXT, { steps: 100, temperature: 0 });
    assert.equal(g.stopped, 'context');
    assert.equal(g.ids.length, 512 - 491 + 1);
    assert.equal(g.steps.at(-1).position, 511);
  });

  it('greedy generation from the empty prompt reproduces the recorded 200 and 256 steps byte for byte', () => {
    const g = lm.generate('', { steps: 256, temperature: 0 });
    assert.deepEqual([...g.ids], JSON.parse(recorded('greedy_token_ids.json')).ids_256);
    assert.equal(g.text, recorded('expected_greedy_256.txt'));
    assert.equal(lm.generate('', { steps: 200, temperature: 0 }).text, recorded('expected_greedy_200.txt'));
    assert.equal(lm.decode(g.ids), recorded('expected_greedy_256.txt'));
  });

  it('the incremental path (KV cache) equals the full sequence: ids, per-step attention rows, candidates', () => {
    let sameTokens = 0;
    for (const prompt of ['Once upon a time', 'Tom had a red kite.', 'Café 😀']) {
      const g = lm.generate(prompt, { steps: 24, temperature: 0 });
      const promptIds = tokenizer.encode(prompt), all = [...promptIds, ...g.ids];
      assert.deepEqual([...g.prompt.ids], promptIds);
      assert.deepEqual([...g.ids], model.greedy(promptIds, promptIds.length + 24 - 1).slice(0, g.ids.length), 'greedy ids');
      const want = model.run(all.slice(0, -1));   // the last token is written, never read
      const n = all.length - 1;
      g.steps.forEach((step, k) => {
        const i = promptIds.length - 1 + k;
        assert.equal(step.position, i);
        assert.equal(step.id, g.ids[k]);
        for (let l = 0; l < 5; l++) {
          const rows = new Float64Array(8 * (i + 1));
          for (let h = 0; h < 8; h++) rows.set(want.attention[l].subarray((h * n + i) * n, (h * n + i) * n + i + 1), h * (i + 1));
          assert.ok(maxAbsDiff(step.attention[l], rows) <= ATTENTION_TOLERANCE, `step ${k} layer ${l}`);
        }
        assert.equal(step.candidates.length, 10);
        assert.equal(step.candidates[0].id, step.id, 'greedy takes the top candidate');
      });
      // The engine's own full run of the same text reads the same tokens and agrees with each step.
      const text = prompt + g.text, full = lm.run(text);
      if (full.ids.length === all.length && full.ids.every((id, i) => id === all[i])) {
        sameTokens++;
        const step = g.steps.at(-1), m = full.ids.length, i = step.position;
        for (let l = 0; l < 5; l++)
          for (let h = 0; h < 8; h++)
            assert.ok(maxAbsDiff(step.attention[l].subarray(h * (i + 1), (h + 1) * (i + 1)),
              full.layers[l].attention.subarray((h * m + i) * m, (h * m + i) * m + i + 1)) <= 1e-5, `run vs generate, layer ${l} head ${h}`);
      }
    }
    assert.ok(sameTokens >= 2, 'most texts re-tokenise to the ids generated');
  });

  it('seeded sampling is reproducible and draws from the model\'s distribution', () => {
    const options = { steps: 40, temperature: 0.8, topP: 0.9, seed: 5 };
    const a = lm.generate('Lily saw a bird', options), b = lm.generate('Lily saw a bird', options);
    assert.deepEqual([...a.ids], [...b.ids]);
    assert.equal(a.text, b.text);
    const c = lm.generate('Lily saw a bird', { ...options, seed: 6 });
    assert.notEqual(c.text, a.text);
    // Every sampled token lies in the reference's top-p nucleus at that step.
    const s = model.session(), promptIds = tokenizer.encode('Lily saw a bird');
    for (const id of promptIds.slice(0, -1)) s.step(id);
    let token = promptIds.at(-1);
    for (const [k, id] of [...a.ids].entries()) {
      const p = softmax(s.step(token).logits, options.temperature);
      const order = [...p.keys()].sort((x, y) => p[y] - p[x]);
      // The candidates shown are the top 10 of that distribution, with its probabilities.
      const candidates = a.steps[k].candidates;
      assert.deepEqual(candidates.map((c) => c.id), order.slice(0, 10), `step ${k} candidates`);
      assert.ok(maxAbsDiff(candidates.map((c) => c.p), order.slice(0, 10).map((i) => p[i])) <= 1e-5, `step ${k} probabilities`);
      // run.c's nucleus: the most probable tokens up to the first whose running sum exceeds topP.
      let mass = 0, kept = 0;
      while (mass <= options.topP) mass += p[order[kept++]];
      assert.ok(mass - options.topP > 1e-5, `step ${k}: the nucleus's edge is within float32 rounding of topP`);
      assert.ok(order.slice(0, kept).includes(id), `sampled id ${id} outside the nucleus of ${kept}`);
      token = id;
    }
  });

  // Each coin from the reference xorshift64* and the reference's probabilities, sampled as run.c
  // does: the same ids, for seeds 0 (replaced by the generator's constant, not stuck at 0), 5 and a
  // full 64-bit state.
  it('sampled ids equal the reference sampler\'s for seeds 0, 5 and 2^64 − 1; seed 0 is its constant', () => {
    const prompt = 'Lily saw a bird';
    const promptIds = tokenizer.encode(prompt);
    for (const seed of [0, 5, 2n ** 64n - 1n])
      for (const options of [{ temperature: 0.8, topP: 0.9 }, { temperature: 1, topP: 1 }]) {
        const g = lm.generate(prompt, { steps: 30, ...options, seed });
        const rng = new ReferenceRng(seed), s = model.session(), want = [];
        let token = promptIds.at(-1), margin = Infinity;
        for (const id of promptIds.slice(0, -1)) s.step(id);
        for (let k = 0; k < g.ids.length; k++) {
          const p = softmax(s.step(token).logits, options.temperature);
          const coin = rng.f32();
          want.push(sampleReference(p, options.topP, coin));
          // How far the coin is from drawing another id (float32 against float64 probabilities).
          for (const nudge of [-1e-5, 1e-5]) if (sampleReference(p, options.topP, coin + nudge) !== want[k]) margin = 0;
          token = g.ids[k];
        }
        assert.ok(margin > 0, `seed ${seed}: a coin lies within 1e-5 of another id; the comparison is ill-posed, choose another seed`);
        assert.deepEqual([...g.ids], want, `seed ${seed}, ${JSON.stringify(options)}`);
        assert.equal(g.stopped, 'steps');
      }
    const zero = lm.generate(prompt, { steps: 30, temperature: 1, seed: 0 });
    assert.deepEqual(zero.ids, lm.generate(prompt, { steps: 30, temperature: 1, seed: ReferenceRng.ZERO_SEED }).ids);
  });

  // At temperature 1e30 every probability is exactly 1/512: the order of equal probabilities
  // decides every draw. Ties keep id order, so with topP 0.5 the nucleus is ids 0…256 and the coin
  // picks id ⌊coin · 257⌋ (in reverse order it would be 511 − that); without topP ⌊coin · 512⌋.
  it('ties in probability keep id order, in the nucleus and without it', () => {
    for (const [topP, seed] of [[0.5, 3], [1, 4]]) {
      const g = lm.generate('Once', { steps: 12, temperature: 1e30, topP, seed });
      const rng = new ReferenceRng(seed), flat = new Float64Array(512).fill(1 / 512);
      const want = g.steps.map(() => sampleReference(flat, topP, rng.f32()));
      assert.deepEqual([...g.ids], want, `topP ${topP}`);
      const span = topP < 1 ? 257 : 512;
      assert.ok(want.every((id) => id < span));
      for (const step of g.steps) {
        assert.deepEqual(step.candidates.map((c) => c.id), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'candidates of equal p in id order');
        assert.ok(step.candidates.every((c) => c.p === 1 / 512));
      }
    }
  });

  it('generation ends at EOS or BOS, which is not included: ids, tokens, steps and text stop before it', () => {
    const want = model.greedyOutcome([1], 1000);
    assert.equal(want.stopped, 'eos');
    // The reference's next token after those ids is BOS (1), which ends a story as EOS does.
    const s = model.session();
    let logits;
    for (const id of [1, ...want.ids]) logits = s.step(id).logits;
    assert.equal(logits.indexOf(Math.max(...logits)), 1, 'the reference emits BOS right after the ids');
    const g = lm.generate('', { steps: 1000, temperature: 0 });
    assert.equal(g.stopped, 'eos');
    assert.deepEqual([...g.ids], want.ids);
    assert.equal(g.tokens.length, want.ids.length);
    assert.equal(g.steps.length, want.ids.length);
    assert.ok(!g.ids.includes(1) && !g.ids.includes(2) && !g.tokens.includes('<s>') && !g.tokens.includes('</s>'));
    assert.equal(g.text, tokenizer.decode(want.ids, { printable: true }));
    // With steps to spare exactly up to EOS, the run ends at 'steps' with the same ids.
    const exact = lm.generate('', { steps: want.ids.length, temperature: 0 });
    assert.deepEqual([exact.stopped, [...exact.ids]], ['steps', want.ids]);
  });
});
