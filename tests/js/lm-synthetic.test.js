// lens.loadModel for checkpoints other than stories260K: small synthetic models (lm-synthetic.js,
// seeded random weights) of other shapes — 6 query heads sharing 2 KV heads, 4 heads of width 12
// with heads == kv heads and a separate classifier — written as llama2.c v0 and v1 files and as
// Hugging Face config.json + safetensors (F32, F16, BF16; tied or lm_head; RoPE theta, RMSNorm
// eps), loaded from bytes, paths, file: URLs and http://127.0.0.1, and checked against the
// float64 reference (tests/js/llama-reference.js): ids exact, attention ≤ 2e-5, logits ≤ 1e-4.
// Broken files are refused with a ModelFormatError naming the argument; the engine stays usable.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';

import { init } from 'attnlens';
import { ModelFormatError } from '../../web/model/pack.js';
import { ReferenceModel, ReferenceTokenizer, readLlama2c, readSafetensors } from './llama-reference.js';
import { readModelFile, writeLlama2c } from './lm-files.js';
import { syntheticModel, syntheticTokenizer, writeHuggingFace, writeLlama2cV1 } from './lm-synthetic.js';

const ATTENTION_TOLERANCE = 2e-5, LOGIT_TOLERANCE = 1e-4;
const TOKENIZER = syntheticTokenizer();
const SHAPES = {
  // Grouped-query attention with other sizes than stories260K; tied classifier.
  gqa: { dim: 48, hidden: 128, layers: 2, heads: 6, kvHeads: 2, seqLen: 96, shared: true, seed: 11 },
  // heads == kv heads (stories15M/42M/110M), head width 12, separate classifier (negative vocab_size).
  mha: { dim: 48, hidden: 96, layers: 3, heads: 4, kvHeads: 4, seqLen: 64, shared: false, seed: 12 },
  // Head width 64 (stories42M/110M, Llama 2), one KV head; two layouts are enough here.
  wide: { dim: 128, hidden: 96, layers: 1, heads: 2, kvHeads: 1, seqLen: 40, shared: true, seed: 13,
    layouts: ['llama2.c v0', 'Hugging Face BF16'] },
};
const models = Object.fromEntries(Object.entries(SHAPES).map(([name, { layouts, ...s }]) =>
  [name, syntheticModel({ ...s, vocab: TOKENIZER.vocabSize })]));
// config.json settings that differ from llama2.c's defaults, per shape.
const HF_EXTRA = { gqa: { rope_theta: 500000, rms_norm_eps: 1e-6 }, mha: {}, wide: { rope_theta: 1e6 } };

// Every layout of a shape: [name, loadModel arguments, reference weights].
function layouts(shape) {
  const model = models[shape];
  const out = [];
  const v0 = writeLlama2c(model), v1 = writeLlama2cV1(model);
  out.push(['llama2.c v0', [v0, { tokenizer: TOKENIZER.bytes }], readLlama2c(v0)]);
  out.push(['llama2.c v1', [v1, { tokenizer: TOKENIZER.bytes }], readLlama2c(v1)]);
  for (const dtype of ['F32', 'F16', 'BF16']) {
    const hf = writeHuggingFace(model, { dtype, extra: HF_EXTRA[shape] });
    out.push([`Hugging Face ${dtype}`, [{ config: hf.config, weights: hf.weights, tokenizer: TOKENIZER.bytes }],
      readSafetensors(hf.weights, hf.config)]);
  }
  return out.filter(([name]) => !SHAPES[shape].layouts || SHAPES[shape].layouts.includes(name));
}

const PROMPTS = [
  '', 'Once upon a time the cat played with the dog.', 'The Lyly was in the sand and the sea',
  'é 你 😀 Ω ß ĳ\n\ttabs', '“quotes” — dash… €', '<s> </s> <0x41>', 'a',
];

function maxAbsDiff(got, want) {
  assert.equal(got.length, want.length, 'lengths');
  let m = 0;
  for (let i = 0; i < want.length; i++) m = Math.max(m, Math.abs(got[i] - want[i]));
  return m;
}

let lens;
const reference = new ReferenceTokenizer(TOKENIZER.bytes, TOKENIZER.vocabSize);
before(async () => {
  lens = await init();
});

describe('synthetic checkpoints of other shapes, every layout, against the float64 reference', () => {
  for (const shape of Object.keys(SHAPES))
    for (const [layout, args, weights] of layouts(shape))
      it(`${shape} (${SHAPES[shape].heads} heads, ${SHAPES[shape].kvHeads} KV heads), ${layout}`, async (t) => {
        const lm = await lens.loadModel(...args);
        const s = SHAPES[shape];
        const { architecture, modelType, context, typeVocab, ...sizes } = lm.config;
        assert.deepEqual(sizes, { dim: s.dim, hiddenDim: s.hidden, layers: s.layers, heads: s.heads,
          kvHeads: s.kvHeads, headDim: s.dim / s.heads, vocabSize: TOKENIZER.vocabSize, seqLen: s.seqLen });
        assert.deepEqual([architecture, modelType, context, typeVocab],
          [layout.startsWith('llama2.c') ? 'llama2.c' : 'LlamaForCausalLM', 'llama', s.seqLen, 0]);
        const ref = new ReferenceModel(weights);
        let attention = 0, logits = 0;
        for (const text of PROMPTS) {
          const ids = reference.encode(text), got = lm.run(text), want = ref.run(ids);
          assert.deepEqual([...got.ids], ids, `ids of ${JSON.stringify(text)}`);
          assert.equal(got.tokens.length, ids.length);
          for (let l = 0; l < s.layers; l++) {
            assert.equal(got.layers[l].heads, s.heads);
            attention = Math.max(attention, maxAbsDiff(got.layers[l].attention, want.attention[l]));
          }
          logits = Math.max(logits, maxAbsDiff(got.logits, want.logits));
        }
        // The whole context: run() of seqLen ids, and generation that stops at the context.
        const long = reference.encode('Once upon a time the cat played with the dog and the sea. '.repeat(12)).slice(0, s.seqLen);
        assert.equal(long.length, s.seqLen);
        const full = lm.run(long), fullWant = ref.run(long);
        for (let l = 0; l < s.layers; l++) attention = Math.max(attention, maxAbsDiff(full.layers[l].attention, fullWant.attention[l]));
        logits = Math.max(logits, maxAbsDiff(full.logits, fullWant.logits));
        t.diagnostic(`attention max abs error ${attention.toExponential(2)}, logits ${logits.toExponential(2)}`);
        assert.ok(attention <= ATTENTION_TOLERANCE, `attention ${attention}`);
        assert.ok(logits <= LOGIT_TOLERANCE, `logits ${logits}`);
        // Greedy ids equal the reference's, from a prompt and from BOS, up to the context limit.
        for (const prompt of ['The cat', '']) {
          const promptIds = reference.encode(prompt);
          // The reference decides how the run ends (16 steps, or EOS: not included).
          const g = lm.generate(prompt, { steps: 16, temperature: 0 });
          const want = ref.greedyOutcome(promptIds, 16);
          assert.deepEqual([...g.ids], want.ids, `greedy after ${JSON.stringify(prompt)}`);
          assert.equal(g.stopped, want.stopped, `greedy after ${JSON.stringify(prompt)}`);
        }
        const near = long.slice(0, s.seqLen - 4);
        const g = lm.generate(near, { steps: 100, temperature: 0 });
        const want = ref.greedyOutcome(near, 100);
        assert.equal(g.stopped, want.stopped);
        assert.deepEqual([...g.ids], want.ids);
        if (want.stopped === 'context') assert.deepEqual(g.steps.map((x) => x.position), [s.seqLen - 5, s.seqLen - 4, s.seqLen - 3, s.seqLen - 2, s.seqLen - 1]);
        t.diagnostic(`greedy near the context: ${want.stopped} after ${want.ids.length} tokens`);
        assert.throws(() => lm.run([...long, 5]), { name: 'RangeError', message: new RegExp(`context of ${s.seqLen} tokens`) });
        // Seeded sampling draws the same text twice.
        const a = lm.generate('The', { steps: 20, temperature: 0.9, topP: 0.8, seed: 3 });
        assert.deepEqual(lm.generate('The', { steps: 20, temperature: 0.9, topP: 0.8, seed: 3 }).ids, a.ids);
      });
});

// A classifier that is zero but for EOS's row: every other logit is exactly 0, so greedy picks
// id 0 (the first of equal logits) until EOS's logit turns positive, and EOS ends the run without
// being included (stories260K ends its stories with BOS instead; lm-reference.test.js).
describe('greedy generation: ties go to the first id, and EOS ends the run, not included', () => {
  it('ids equal the reference\'s outcome: a run of id 0, then EOS', async (t) => {
    const model = syntheticModel({ ...SHAPES.mha, vocab: TOKENIZER.vocabSize, seed: 21 });
    const { dim } = model.config;
    model.arrays.classifier.fill(0);
    for (let i = 0; i < dim; i++) model.arrays.classifier[2 * dim + i] = model.arrays.embedding[7 * dim + i];
    const file = writeLlama2c(model);
    const lm = await lens.loadModel(file, { tokenizer: TOKENIZER.bytes });
    const ref = new ReferenceModel(readLlama2c(file));
    let found = null;
    for (const prompt of ['', 'a', 'The cat', 'Once upon a time', 'the sea', 'dog']) {
      const promptIds = reference.encode(prompt);
      const want = ref.greedyOutcome(promptIds, 40);
      const g = lm.generate(prompt, { steps: 40, temperature: 0 });
      assert.deepEqual([g.stopped, [...g.ids]], [want.stopped, want.ids], JSON.stringify(prompt));
      assert.ok(want.ids.every((id) => id === 0), 'ties of logit 0 go to id 0');
      assert.ok(!g.ids.includes(2) && g.steps.length === g.ids.length && g.tokens.length === g.ids.length);
      if (want.stopped === 'eos' && want.ids.length > 0) found ??= { prompt, g, want };
    }
    assert.ok(found, 'some prompt runs into EOS after a few tokens');
    // The reference's next token after the ids is EOS (2), with a clear margin over the zeros.
    const s = ref.session();
    let logits;
    for (const id of [...reference.encode(found.prompt), ...found.want.ids]) logits = s.step(id).logits;
    assert.ok(logits[2] > 1e-3 && logits.every((x, i) => i === 2 || x === 0), `EOS logit ${logits[2]}`);
    t.diagnostic(`${JSON.stringify(found.prompt)}: ${found.want.ids.length} × id 0, then EOS (logit ${logits[2].toExponential(2)})`);
  });
});

describe('sources: paths, file: URLs, http://127.0.0.1, buffers; progress events', () => {
  let dir, server, base, bytesModel;
  const model = models.gqa;
  const v0 = writeLlama2c(model);
  const hf = writeHuggingFace(model, { dtype: 'BF16' });
  const file = (name) => path.join(dir, name);
  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'attnlens-lm-'));
    writeFileSync(file('model.bin'), v0);
    writeFileSync(file('tok.bin'), TOKENIZER.bytes);
    writeFileSync(file('config.json'), JSON.stringify(hf.config));
    writeFileSync(file('model.safetensors'), hf.weights);
    // ?chunked: no Content-Length, the body in 8 KiB pieces (sizes unknown until the end).
    server = http.createServer((request, response) => {
      const url = new URL(request.url, 'http://127.0.0.1');
      let data;
      try {
        data = readFileSync(file(path.basename(url.pathname)));
      } catch {
        response.writeHead(404).end();
        return;
      }
      if (url.searchParams.has('chunked')) {
        response.writeHead(200);
        for (let i = 0; i < data.length; i += 8192) response.write(data.subarray(i, i + 8192));
        response.end();
      } else response.writeHead(200, { 'Content-Length': data.length }).end(data);
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${server.address().port}/`;
    bytesModel = await lens.loadModel(v0, { tokenizer: TOKENIZER.bytes });
  });
  after(() => {
    server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // The stages in order, download bytes never decreasing and ending at the files' total, then
  // initialise and ready (1 of 1: 100 %).
  function checkProgress(events, bytes) {
    const stages = events.map((e) => e.stage);
    const downloads = events.filter((e) => e.stage === 'download');
    assert.deepEqual(stages, [...downloads.map(() => 'download'), 'initialise', 'ready']);
    assert.ok(downloads.length >= 1);
    for (let i = 1; i < downloads.length; i++) {
      assert.ok(downloads[i].loaded >= downloads[i - 1].loaded, 'loaded never decreases');
      if (downloads[i - 1].total) assert.equal(downloads[i].total, downloads[i - 1].total, 'a known total stays');
    }
    for (const e of downloads) if (e.total) assert.ok(e.loaded <= e.total);
    assert.deepEqual(downloads.at(-1), { stage: 'download', loaded: bytes, total: bytes, fraction: 0.95 });
    assert.deepEqual(events.slice(-2), [{ stage: 'initialise', loaded: 0, total: 1, fraction: 0.95 }, { stage: 'ready', loaded: 1, total: 1, fraction: 1 }]);
    // The whole load's fraction never decreases and ends at 1 (100 %).
    for (let i = 1; i < events.length; i++) assert.ok(events[i].fraction >= events[i - 1].fraction, 'fraction never decreases');
    for (const e of downloads) if (e.total) assert.ok(Math.abs(e.fraction - 0.95 * e.loaded / e.total) < 1e-12);
  }

  const same = (lm) => {
    const text = 'Once upon a time the cat';
    assert.deepEqual(lm.run(text).logits, bytesModel.run(text).logits);
  };

  it('a llama2.c checkpoint from a path, file: URLs, http URLs and buffers of every kind', async () => {
    const size = v0.byteLength + TOKENIZER.bytes.byteLength;
    const sources = [
      [file('model.bin'), file('tok.bin')],
      [path.relative(process.cwd(), file('model.bin')), pathToFileURL(file('tok.bin'))],
      [pathToFileURL(file('model.bin')).href, pathToFileURL(file('tok.bin')).href],
      [`${base}model.bin`, `${base}tok.bin`],
      [new URL(`${base}model.bin?chunked`), `${base}tok.bin?chunked`],
      [v0.buffer.slice(0), Buffer.from(TOKENIZER.bytes)],
      [new DataView(v0.buffer.slice(0)), new Int8Array(TOKENIZER.bytes.buffer.slice(0))],
    ];
    for (const [source, tokenizer] of sources) {
      const events = [];
      const lm = await lens.loadModel(source, { tokenizer, onProgress: (e) => events.push(e) });
      same(lm);
      checkProgress(events, size);
    }
    // URL and path sources are cached: a second load is the same object, reported ready at once.
    const events = [];
    const a = await lens.loadModel(file('model.bin'), { tokenizer: file('tok.bin') });
    assert.equal(await lens.loadModel(file('model.bin'), { tokenizer: file('tok.bin'), onProgress: (e) => events.push(e) }), a);
    assert.deepEqual(events, [{ stage: 'ready', loaded: 1, total: 1, fraction: 1 }]);
  });

  it('the Hugging Face layout from paths, URLs, JSON text and bytes, in either call form', async () => {
    const reference = await lens.loadModel({ config: hf.config, weights: hf.weights, tokenizer: TOKENIZER.bytes });
    const configText = JSON.stringify(hf.config);
    const forms = [
      [{ config: file('config.json'), weights: file('model.safetensors'), tokenizer: file('tok.bin') }, {}],
      [{ config: `${base}config.json?chunked`, weights: new URL(`${base}model.safetensors`), tokenizer: pathToFileURL(file('tok.bin')) }, {}],
      [{ config: configText, weights: hf.weights.buffer.slice(0), tokenizer: `${base}tok.bin` }, {}],
      [hf.weights, { config: new TextEncoder().encode(configText), tokenizer: TOKENIZER.bytes }],
      [file('model.safetensors'), { config: hf.config, tokenizer: file('tok.bin') }],
    ];
    for (const [source, options] of forms) {
      const events = [];
      const lm = await lens.loadModel(source, { ...options, onProgress: (e) => events.push(e) });
      assert.deepEqual(lm.run('The sea').logits, reference.run('The sea').logits);
      checkProgress(events, hf.weights.byteLength + TOKENIZER.bytes.byteLength + new TextEncoder().encode(configText).byteLength);
    }
  });

  it('missing files reject with an Error naming the argument and the file', async () => {
    await assert.rejects(lens.loadModel(`${base}nothing.bin`, { tokenizer: TOKENIZER.bytes }),
      (e) => /loadModel: source: .*nothing\.bin.*404/.test(e.message));
    await assert.rejects(lens.loadModel(v0, { tokenizer: file('missing-tok.bin') }),
      (e) => /loadModel: options\.tokenizer: .*missing-tok\.bin.*ENOENT/.test(e.message));
    await assert.rejects(lens.loadModel({ config: `${base}none.json`, weights: hf.weights, tokenizer: TOKENIZER.bytes }),
      (e) => /loadModel: source\.config: .*none\.json/.test(e.message));
    same(bytesModel);
  });
});

describe('broken files of the synthetic models: ModelFormatError naming the argument and the fault', () => {
  const model = models.mha;  // separate classifier: a v0 file ends with it
  const v0 = writeLlama2c(model);
  const hf = writeHuggingFace(model, { dtype: 'F16' });
  const tok = TOKENIZER.bytes;
  const refuse = async (args, message) => {
    await assert.rejects(lens.loadModel(...args), (e) => {
      assert.ok(e instanceof ModelFormatError, `${e.name}: ${e.message}`);
      assert.match(e.message, message);
      return true;
    });
  };
  const edited = (bytes, edit) => {
    const copy = bytes.slice();
    edit(new DataView(copy.buffer));
    return copy;
  };

  it('llama2.c files: truncated anywhere, padded, corrupt headers, foreign bytes, giant headers', async () => {
    const lm = await lens.loadModel(v0, { tokenizer: tok });
    const before = lm.run('The dog').logits;
    // Cut anywhere, including inside the classifier that follows freq_cis.
    for (const cut of [0, 27, 28, 1000, v0.length >> 1, v0.length - 4 * TOKENIZER.vocabSize * 48, v0.length - 1])
      await refuse([v0.slice(0, cut), { tokenizer: tok }], /^loadModel: source: the model file .*(too short|truncated)/);
    await refuse([new Uint8Array([...v0, 0, 0, 0, 0]), { tokenizer: tok }], /^loadModel: source: .*longer than its header says/);
    // vocab_size positive (tied) for a file that holds a classifier: 4·vocab·dim bytes too many.
    await refuse([edited(v0, (d) => d.setInt32(20, TOKENIZER.vocabSize, true)), { tokenizer: tok }], /^loadModel: source: .*longer/);
    await refuse([edited(v0, (d) => d.setInt32(12, 5, true)), { tokenizer: tok }], /^loadModel: source: .*n_heads \(5\)/);
    await refuse([edited(v0, (d) => d.setInt32(16, 3, true)), { tokenizer: tok }], /^loadModel: source: .*(kv|KV|key)/);
    await refuse([edited(v0, (d) => d.setInt32(8, -2, true)), { tokenizer: tok }], /^loadModel: source: .*field 2/);
    // A NaN weight.
    await refuse([edited(v0, (d) => d.setFloat32(28 + 400, NaN, true)), { tokenizer: tok }], /^loadModel: source: .*non-finite/);
    // A Llama-2-7B header (dim 4096, 32 layers, vocab 32000, 2048 positions) on a small file.
    const llama7b = new Uint8Array(4096);
    new Int32Array(llama7b.buffer, 0, 7).set([4096, 11008, 32, 32, 32, 32000, 2048]);
    await refuse([llama7b, { tokenizer: tok }], /^loadModel: source: the model file is truncated: .* needs \d+ bytes/);
    // Foreign files: a PNG, JSON, a safetensors without its config, the tokenizer as the model.
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...new Uint8Array(200)]);
    await refuse([png, { tokenizer: tok }], /^loadModel: source: /);
    await refuse([new TextEncoder().encode(JSON.stringify(hf.config)), { tokenizer: tok }], /^loadModel: source: /);
    await refuse([hf.weights, { tokenizer: tok }], /^loadModel: source: .*safetensors.*options\.config/);
    await refuse([tok, { tokenizer: tok }], /^loadModel: source: /);
    // Tokenizer files: truncated, of another model (stories260K's 512 pieces), not a tokenizer.
    for (const cut of [0, 3, 100, tok.length - 1])
      await refuse([v0, { tokenizer: tok.slice(0, cut) }], /^loadModel: options\.tokenizer: the tokenizer file .*(too short|truncated|cannot hold|max_token_length)/);
    await refuse([v0, { tokenizer: readModelFile('tok512.bin') }], /^loadModel: options\.tokenizer: .*larger vocabulary/);
    await refuse([readModelFile('stories260K.bin'), { tokenizer: tok }], /^loadModel: options\.tokenizer: .*holds 359 pieces, the model's vocabulary has 512/);
    await refuse([v0, { tokenizer: v0 }], /^loadModel: options\.tokenizer: /);
    const tokenizerJson = new TextEncoder().encode('{"version": "1.0", "model": {"type": "BPE"}}');
    await refuse([v0, { tokenizer: tokenizerJson }], /^loadModel: options\.tokenizer: .*not a llama2\.c tokenizer file .*tokenizer\.json must be exported/);
    // The engine and the model loaded before are untouched.
    assert.deepEqual(lm.run('The dog').logits, before);
    assert.equal(lm.generate('The dog', { steps: 3, temperature: 0 }).ids.length, 3);
  });

  it('Hugging Face files: bad config fields, missing or misshapen tensors, truncation, dtypes', async () => {
    const { config, weights } = hf;
    const with_ = (extra) => ({ config: { ...config, ...extra }, weights, tokenizer: tok });
    await refuse([with_({ model_type: 't5' })], /^loadModel: source\.config: config\.json: model_type "t5" is not supported; supported: /);
    await refuse([with_({ hidden_size: 50 })], /^loadModel: source\.config: .*head size.*config\.json/);
    await refuse([with_({ num_key_value_heads: 3 })], /^loadModel: source\.config: /);
    await refuse([with_({ rope_scaling: { rope_type: 'llama3', factor: 8 } })], /^loadModel: source\.config: .*rope_scaling/);
    await refuse([with_({ hidden_act: 'gelu' })], /^loadModel: source\.config: .*hidden_act/);
    await refuse([with_({ vocab_size: 512 })], /^loadModel: source\.(config|weights|tokenizer): /);
    await refuse([with_({ tie_word_embeddings: true, num_hidden_layers: 4 })], /^loadModel: source\.weights: .*(never|missing|not set|lacks)/);
    await refuse([{ config: '{"hidden_size": 48', weights, tokenizer: tok }], /^loadModel: source\.config: config\.json is not valid JSON/);
    // A 7B-sized config with a small file: refused by size before anything is allocated.
    await refuse([with_({ hidden_size: 8192, intermediate_size: 28672, num_hidden_layers: 80, num_attention_heads: 64,
      num_key_value_heads: 8, vocab_size: 32000, max_position_embeddings: 4096 })], /^loadModel: source\.config|^loadModel: source\.weights: .*(MiB|GiB|memory|heap)/);
    for (const cut of [7, 100, weights.length - 1])
      await refuse([{ config, weights: weights.slice(0, cut), tokenizer: tok }], /^loadModel: source\.weights: /);
    // A dtype the loader does not read, and an lm_head missing from an untied model.
    const header = new TextDecoder().decode(weights.subarray(8, 8 + new DataView(weights.buffer).getUint32(0, true)));
    const swap = (from, to) => {
      assert.equal(from.length, to.length);
      const copy = weights.slice();
      copy.set(new TextEncoder().encode(header.replace(from, to)), 8);
      return copy;
    };
    await refuse([{ config, weights: swap('"F16"', '"I16"'), tokenizer: tok }], /^loadModel: source\.weights: .*dtype I16/);
    await refuse([{ config, weights: swap('lm_head.weight', 'lm_tail.weight'), tokenizer: tok }], /^loadModel: source\.weights: .*lm_head/);
    // Still usable.
    const lm = await lens.loadModel({ config, weights, tokenizer: tok });
    assert.equal(lm.generate('', { steps: 2, temperature: 0 }).ids.length, 2);
  });
});
