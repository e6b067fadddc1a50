// GPT-2, BERT and the Llama family from Hugging Face folders: random-weight checkpoints in the
// Hub's exact layout (tests/js/hf-checkpoints.js) with the real GPT-2 and bert-base-uncased
// vocabularies, loaded through lens.loadModel and held against the float64 reference of
// tests/js/transformer-reference.js: attention ≤ 1e-4, logits ≤ 2e-3 max abs.
import assert from 'node:assert/strict';
import http from 'node:http';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { init } from 'attnlens';
import { ModelFormatError } from '../../web/model/index.js';
import { bertCheckpoint, distilbertCheckpoint, gpt2Checkpoint, llamaCheckpoint, roundedTensors, safetensorsBytes, writeModelFolder } from './hf-checkpoints.js';
import { gpt2TokenizerJson } from './hf-fixtures.js';
import { maxAbsDiff, reference } from './transformer-reference.js';

const ATTENTION_TOLERANCE = 1e-4;
const LOGIT_TOLERANCE = 2e-3;
const folders = [];
const folder = (ckpt, options) => {
  const dir = writeModelFolder(ckpt, options);
  folders.push(dir);
  return dir;
};

let lens;
before(async () => {
  lens = await init();
});
after(() => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

// The engine's run against the reference on the same (rounded) weights.
function checkRun(lm, ckpt, dtype, input, { typeIds } = {}) {
  const r = lm.run(input);
  const want = reference(ckpt.config, roundedTensors(ckpt, dtype), r.ids, typeIds);
  let attention = 0;
  r.layers.forEach((layer, l) => (attention = Math.max(attention, maxAbsDiff(layer.attention, want.attention[l]))));
  assert.ok(attention <= ATTENTION_TOLERANCE, `attention differs by ${attention}`);
  if (want.logits && r.logits) {
    const logits = maxAbsDiff(r.logits, want.logits);
    assert.ok(logits <= LOGIT_TOLERANCE, `logits differ by ${logits}`);
  }
  return { r, want, attention };
}

describe('GPT-2 (GPT2LMHeadModel) with the real GPT-2 vocabulary', () => {
  const ckpt = gpt2Checkpoint({ seed: 11 });
  const prefixed = gpt2Checkpoint({ seed: 11, prefix: 'transformer.' });
  const TEXT = "Hello world, it's GPT-2: 3 apples cost $4.50 — naïve café 😀";

  for (const [label, c, options] of [
    ['F32, names without a prefix', ckpt, { dtype: 'F32' }],
    ['F16, names with the transformer. prefix', prefixed, { dtype: 'F16' }],
    ['BF16, three shards and model.safetensors.index.json', ckpt, { dtype: 'BF16', shards: 3 }],
  ])
    it(`a folder in ${label}: attention and logits match the float64 reference`, async () => {
      const lm = await lens.loadModel(folder(c, { ...options, tokenizer: 'gpt2' }));
      assert.equal(lm.kind, 'causal-lm');
      assert.equal(lm.config.architecture, 'GPT2LMHeadModel');
      assert.deepEqual([lm.config.layers, lm.config.heads, lm.config.dim, lm.config.vocabSize, lm.config.context], [2, 4, 32, 50257, 64]);
      const { r } = checkRun(lm, c, options.dtype, TEXT);
      // Readable tokens: ' world' for 'Ġworld'; the emoji's four bytes, split over tokens, as <0xHH>.
      assert.equal(r.tokens.join(''), TEXT.replace('😀', '<0xF0><0x9F><0x98><0x80>'));
      assert.equal(lm.decode(r.ids), TEXT);
      const memory = lm.memory();
      const element = options.dtype === 'F32' ? 4 : 2;
      // Weights at the file's precision: matrices 16-bit in F16/BF16 files (norms, biases float32).
      assert.ok(memory.weights < 50257 * 32 * element * 1.3 && memory.weights > 50257 * 32 * element, `weights ${memory.weights}`);
      assert.equal(memory.kvCache, 0);
    });

  it('generates greedily as the reference does, stops at <|endoftext|>, and reports every step', async () => {
    const lm = await lens.loadModel(folder(ckpt, { tokenizer: 'gpt2' }));
    const tensors = roundedTensors(ckpt);
    const g = lm.generate('The cat', { steps: 6, temperature: 0 });
    assert.equal(g.prompt.tokens.join(''), 'The cat');
    const ids = Array.from(g.prompt.ids);
    for (const step of g.steps) {
      const want = reference(ckpt.config, tensors, ids).logits;
      const sorted = Array.from(want).map((v, i) => [v, i]).sort((a, b) => b[0] - a[0]);
      if (sorted[0][0] - sorted[1][0] > 1e-2) assert.equal(step.id, sorted[0][1]);
      assert.equal(step.attention.length, 2);
      assert.equal(step.attention[0].length, 4 * (step.position + 1));
      ids.push(step.id);
    }
    assert.equal(g.text, lm.decode(g.ids));
    assert.equal(lm.memory().kvCache, 0, 'the KV cache is freed after generate()');
  });

  it('a vocabulary that disagrees with the tokenizer is a ModelFormatError naming tokenizer.json', async () => {
    const small = gpt2Checkpoint({ seed: 12, vocab: 1000 });
    await assert.rejects(lens.loadModel(folder(small, { tokenizer: 'gpt2' })),
      (e) => e instanceof ModelFormatError && /tokenizer\.json.*50257 token ids, more than the model's vocabulary of 1000/.test(e.message));
  });
});

describe('sentence pairs need token types', () => {
  it('GPT-2 refuses options.pair and options.typeIds with a TypeError naming the option', async () => {
    const lm = await lens.loadModel(folder(gpt2Checkpoint({ seed: 12 }), { tokenizer: 'gpt2' }));
    assert.throws(() => lm.run('a', { pair: 'b' }), { name: 'TypeError', message: /options\.pair needs a model with token types/ });
    assert.throws(() => lm.run([1, 2], { typeIds: [0, 0] }), { name: 'TypeError', message: /options\.typeIds needs a model with token types/ });
    assert.throws(() => lm.tokenize('a', { pairs: 'b' }), { name: 'TypeError', message: /unknown option 'pairs'/ });
  });
});

describe('BERT with the real bert-base-uncased vocabulary', () => {
  const mlm = bertCheckpoint({ seed: 21 });
  it('BertForMaskedLM (bert. prefix, F32): attention and every position\'s logits match; fillMask ranks them', async () => {
    const lm = await lens.loadModel(folder(mlm, { tokenizer: 'bert' }));
    assert.equal(lm.kind, 'masked-lm');
    const { r, want } = checkRun(lm, mlm, 'F32', 'The capital of France is [MASK].');
    assert.equal(r.tokens[0], '[CLS]');
    assert.equal(r.tokens.at(-1), '[SEP]');
    assert.equal(r.logits.length, r.ids.length * 30522);
    const [fill] = lm.fillMask('The capital of France is [MASK].', { top: 5 });
    assert.equal(r.tokens[fill.position], '[MASK]');
    assert.equal(fill.candidates.length, 5);
    const V = 30522, row = Array.from(want.logits.subarray(fill.position * V, (fill.position + 1) * V));
    const best = row.indexOf(Math.max(...row));
    assert.equal(fill.candidates[0].id, best);
    assert.ok(fill.candidates.every((c, i) => i === 0 || c.p <= fill.candidates[i - 1].p));
    assert.throws(() => lm.generate('x'), TypeError);
    assert.throws(() => lm.fillMask('no mask here'), RangeError);
  });

  it('a sentence pair: [CLS] A [SEP] B [SEP] with token types 0 then 1, as text or as ids', async () => {
    const lm = await lens.loadModel(folder(mlm, { tokenizer: 'bert' }));
    const r = lm.run('The cat sat.', { pair: 'It was [MASK].' });
    const sep = r.tokens.indexOf('[SEP]');
    assert.deepEqual(r.tokens, ['[CLS]', 'the', 'cat', 'sat', '.', '[SEP]', 'it', 'was', '[MASK]', '.', '[SEP]']);
    assert.deepEqual(Array.from(r.typeIds), r.tokens.map((_, i) => (i <= sep ? 0 : 1)));
    const want = reference(mlm.config, roundedTensors(mlm, 'F32'), r.ids, r.typeIds);
    r.layers.forEach((layer, l) => assert.ok(maxAbsDiff(layer.attention, want.attention[l]) <= ATTENTION_TOLERANCE));
    assert.ok(maxAbsDiff(r.logits, want.logits) <= LOGIT_TOLERANCE);
    // Type 1 is not type 0: the same ids with every type 0 give other numbers.
    const zeros = reference(mlm.config, roundedTensors(mlm, 'F32'), r.ids, new Int32Array(r.ids.length));
    assert.ok(maxAbsDiff(zeros.logits, want.logits) > 10 * LOGIT_TOLERANCE, 'token type 1 changes the logits');
    const fromIds = lm.run(r.ids, { typeIds: r.typeIds });
    assert.deepEqual(fromIds.logits, r.logits);
    assert.deepEqual(lm.tokenize('The cat sat.', { pair: 'It was [MASK].' }).typeIds, r.typeIds);
    const [fill] = lm.fillMask('The cat sat.', { pair: 'It was [MASK].', top: 3 });
    assert.equal(fill.position, 8);
    assert.throws(() => lm.run(r.ids, { typeIds: r.typeIds.subarray(1) }), { name: 'RangeError', message: /options\.typeIds has 10 entries; it needs one per id \(11\)/ });
    assert.throws(() => lm.run(r.ids, { typeIds: r.typeIds.map(() => 2) }), { name: 'RangeError', message: /options\.typeIds\[0\] is 2: token types are integers from 0 to 1/ });
    assert.throws(() => lm.run('a', { pair: 7 }), { name: 'TypeError', message: /options\.pair must be a string/ });
    assert.throws(() => lm.run('a', { typeIds: [0] }), { name: 'TypeError', message: /options\.typeIds goes with ids/ });
    assert.throws(() => lm.run([101], { pair: 'b' }), { name: 'TypeError', message: /options\.pair goes with text/ });
    assert.equal(lm.run('still usable').tokens[0], '[CLS]');
  });

  it('old checkpoints (LayerNorm gamma/beta, no bert. prefix) in F16 load the same', async () => {
    const old = bertCheckpoint({ seed: 22, prefix: '', gammaBeta: true });
    const lm = await lens.loadModel(folder(old, { tokenizer: 'bert', dtype: 'F16' }));
    checkRun(lm, old, 'F16', 'Hello, world! 東京 café');
  });

  it('BertModel is an encoder: attention and hidden states [n·dim]', async () => {
    const enc = bertCheckpoint({ seed: 23, mlm: false });
    const lm = await lens.loadModel(folder(enc, { tokenizer: 'bert' }));
    assert.equal(lm.kind, 'encoder');
    const { r, want } = checkRun(lm, enc, 'F32', 'attention is all you need');
    assert.equal(r.hidden.length, r.ids.length * 32);
    assert.ok(maxAbsDiff(r.hidden, want.hidden) <= LOGIT_TOLERANCE);
    assert.throws(() => lm.fillMask('a [MASK]'), TypeError);
  });
});

describe('DistilBERT', () => {
  for (const mlm of [true, false])
    it(`${mlm ? 'DistilBertForMaskedLM' : 'DistilBertModel'} (BF16): attention and ${mlm ? 'logits' : 'hidden states'} match the reference`, async () => {
      const ckpt = distilbertCheckpoint({ seed: 25, mlm });
      const lm = await lens.loadModel(folder(ckpt, { tokenizer: 'bert', dtype: 'BF16' }));
      assert.equal(lm.kind, mlm ? 'masked-lm' : 'encoder');
      const { r, want } = checkRun(lm, ckpt, 'BF16', 'DistilBERT is smaller [MASK] faster.');
      if (!mlm) assert.ok(maxAbsDiff(r.hidden, want.hidden) <= LOGIT_TOLERANCE);
      else assert.equal(lm.fillMask('DistilBERT is smaller [MASK] faster.')[0].candidates.length, 10);
    });
});

describe('the Llama family with a tokenizer.json', () => {
  for (const [type, dtype, tied] of [['llama', 'BF16', false], ['mistral', 'F16', true], ['qwen2', 'F32', false]])
    it(`${type} (${dtype}, ${tied ? 'tied head' : 'lm_head'}): attention and logits match the reference`, async () => {
      const ckpt = llamaCheckpoint({ seed: 31, type, tied });
      const lm = await lens.loadModel(folder(ckpt, { tokenizer: 'llama', dtype }));
      assert.equal(lm.kind, 'causal-lm');
      assert.equal(lm.config.kvHeads, 2);
      const { r } = checkRun(lm, ckpt, dtype, 'Once upon a time, a girl named Lily');
      assert.equal(r.tokens[0], '<s>');
      const g = lm.generate('Once upon a time', { steps: 4, temperature: 0 });
      assert.ok(g.steps.length >= 1);
    });
});

describe('bad folders and files are ModelFormatErrors naming the file; the engine stays usable', () => {
  const ckpt = gpt2Checkpoint({ seed: 41, vocab: 50257 });
  const refuse = async (dir, file, message) =>
    assert.rejects(lens.loadModel(dir), (e) => {
      assert.ok(e instanceof ModelFormatError, `${e.name}: ${e.message}`);
      assert.match(e.message, new RegExp(file.replaceAll('.', '\\.')));
      assert.match(e.message, message);
      return true;
    });

  it('unknown model_type, missing tensor, wrong shape, truncated or foreign weights, bad shard index', async () => {
    let dir = folder(ckpt, { tokenizer: 'gpt2' });
    writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...ckpt.config, model_type: 't5' }));
    await refuse(dir, 'config.json', /model_type "t5" is not supported; supported: gpt2, bert/);

    dir = folder({ ...ckpt, tensors: ckpt.tensors.filter(([n]) => n !== 'h.1.mlp.c_fc.weight') }, { tokenizer: 'gpt2' });
    await refuse(dir, 'model.safetensors', /lacks the feed-forward up of layer 1 \('h\.1\.mlp\.c_fc\.weight'\)/);

    dir = folder({ ...ckpt, tensors: ckpt.tensors.map(([n, s, v]) => (n === 'h.0.attn.c_proj.weight' ? [n, [16, 64], v] : [n, s, v])) }, { tokenizer: 'gpt2' });
    await refuse(dir, 'model.safetensors', /'h\.0\.attn\.c_proj\.weight' has shape \[16, 64\], expected \[32, 32\]/);

    dir = folder(ckpt, { tokenizer: 'gpt2' });
    const st = readFileSync(path.join(dir, 'model.safetensors'));
    writeFileSync(path.join(dir, 'model.safetensors'), st.subarray(0, st.length - 100));
    await refuse(dir, 'model.safetensors', /truncated/);
    writeFileSync(path.join(dir, 'model.safetensors'), Buffer.from('\x89PNG\r\n\x1a\n not weights at all'));
    await refuse(dir, 'model.safetensors', /header length|not a safetensors/);

    dir = folder(ckpt, { tokenizer: 'gpt2', shards: 2 });
    writeFileSync(path.join(dir, 'model.safetensors.index.json'), JSON.stringify({ weight_map: { 'wte.weight': '../etc/passwd' } }));
    await refuse(dir, 'model.safetensors.index.json', /plain file name beside the index/);
    writeFileSync(path.join(dir, 'model.safetensors.index.json'), '{"weight_map": 3}');
    await refuse(dir, 'model.safetensors.index.json', /no "weight_map" object/);

    dir = folder(ckpt, { tokenizer: 'gpt2' });
    writeFileSync(path.join(dir, 'tokenizer.json'), '{"version": "1.0"}');
    await assert.rejects(lens.loadModel(dir), (e) => e instanceof ModelFormatError && /tokenizer\.json/.test(e.message));

    // Still usable: a good folder loads and runs.
    const lm = await lens.loadModel(folder(ckpt, { tokenizer: 'gpt2' }));
    checkRun(lm, ckpt, 'F32', 'still fine');
  });

  it('a folder URL ending "/" (as a page gives it): files tried in turn, the shard index after model.safetensors', async () => {
    const dir = folder(ckpt, { tokenizer: 'gpt2', shards: 2 });
    const asked = [];
    const server = http.createServer((request, response) => {
      asked.push(`${request.method} ${request.url}`);
      try {
        const body = readFileSync(path.join(dir, decodeURIComponent(new URL(request.url, 'http://x').pathname).replace(/^\/gpt2\//, '')));
        response.writeHead(200, { 'Content-Length': body.length });
        response.end(request.method === 'HEAD' ? undefined : body);
      } catch {
        response.writeHead(404).end();
      }
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = new URL(`http://127.0.0.1:${server.address().port}/gpt2/`);
      const lm = await lens.loadModel(url);
      checkRun(lm, ckpt, 'F32', 'Served over HTTP.');
      assert.ok(asked.includes('HEAD /gpt2/config.json'));
      assert.ok(asked.includes('GET /gpt2/model.safetensors'), 'model.safetensors is tried first');
      assert.ok(asked.includes('GET /gpt2/model-00002-of-00002.safetensors'));
      assert.ok(asked.every((a) => a.startsWith('HEAD /gpt2/') || a.startsWith('GET /gpt2/')), 'nothing outside the folder is asked for');
    } finally {
      server.close();
    }
  });

  it('a File[] (what <input type="file" multiple> gives), sharded with its index, loads like the folder', async () => {
    const dir = folder(ckpt, { tokenizer: 'gpt2', shards: 2, dtype: 'F16' });
    const files = readdirSync(dir).map((name) => new File([readFileSync(path.join(dir, name))], name));
    const lm = await lens.loadModel(files);
    checkRun(lm, ckpt, 'F16', 'From files, as a page picks them.');
    await assert.rejects(lens.loadModel(files.filter((f) => f.name !== 'config.json')), (e) => e instanceof TypeError && /config\.json/.test(e.message));
    await assert.rejects(lens.loadModel(files.filter((f) => !f.name.startsWith('model-00002'))),
      (e) => e instanceof ModelFormatError && /model-00002-of-00002\.safetensors is not there/.test(e.message));
    // A shard whose tensors are not the ones the index puts there.
    const swapped = files.map((f) => (f.name.startsWith('model-0000') ? new File([f], f.name.replace(/0000(1|2)-of/, (m, d) => `0000${3 - d}-of`)) : f));
    await assert.rejects(lens.loadModel(swapped), (e) => e instanceof ModelFormatError && /the shard model-0000\d-of-00002\.safetensors holds/.test(e.message));
  });

  it('{ config, weights: [shards], tokenizer } objects and bytes load like the folder', async () => {
    const half = Math.ceil(ckpt.tensors.length / 2);
    const lm = await lens.loadModel({
      config: ckpt.config,
      weights: [safetensorsBytes(ckpt.tensors.slice(0, half)), safetensorsBytes(ckpt.tensors.slice(half))],
      tokenizer: JSON.stringify(gpt2TokenizerJson()),
    });
    checkRun(lm, ckpt, 'F32', 'Two shards, in memory.');
    await assert.rejects(lens.loadModel({ config: ckpt.config, weights: [], tokenizer: gpt2TokenizerJson() }), TypeError);
  });
});
