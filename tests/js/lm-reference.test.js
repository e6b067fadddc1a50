// stories260K: the float64 reference (tests/js/llama-reference.js, no code shared with the
// engine) is first checked against the author's recorded greedy output, then used as the
// yardstick for the engine's tokenizer, attention, logits, generation and sampling.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, describe, it } from 'node:test';

import { ReferenceModel, ReferenceTokenizer, readLlama2c } from './llama-reference.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MODEL_DIR = path.join(ROOT, 'web/models/stories260K');        // the bundled, committed copy
const RECORDED = path.join(ROOT, 'tests/models/stories260K');       // upstream-recorded outputs
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
    // run.c's steps count forward passes: 200 steps write the first 200 ids.
    assert.deepEqual(model.greedy([1], 200), ids.slice(0, 200));
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
