// model.safetensors.index.json (web/model/shards.js): the shard list in shard order, every check
// with the message a user sees, and a fuzz test (mutated and truncated index files give a valid
// index or ModelFormatError, never another exception).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ModelFormatError } from '../../web/model/pack.js';
import { parseShardIndex } from '../../web/model/shards.js';
import * as ref from './reference.js';

// A hang guard, not a speed limit: the runs take seconds, and only a loop that never ends meets it.
const HANG_GUARD_MS = 600_000;

const NAME = 'models/llama/model.safetensors.index.json';

/** An index in the Hub's layout: keys sorted (as transformers writes them), `shards` files. */
function hubIndex(layers = 4, shards = 3) {
  const weightMap = {};
  const file = (i) => `model-${String(i).padStart(5, '0')}-of-${String(shards).padStart(5, '0')}.safetensors`;
  const names = ['model.embed_tokens.weight', 'model.norm.weight', 'lm_head.weight'];
  for (let l = 0; l < layers; l++)
    for (const t of ['input_layernorm', 'self_attn.q_proj', 'self_attn.k_proj', 'self_attn.v_proj', 'self_attn.o_proj', 'mlp.gate_proj'])
      names.push(`model.layers.${l}.${t}.weight`);
  names.sort();
  // Shard s holds a contiguous slice of the layers (as save_pretrained fills shards in order).
  names.forEach((n, i) => { weightMap[n] = file(1 + Math.floor((i * shards) / names.length)); });
  return { metadata: { total_size: 123456789 }, weight_map: weightMap };
}

const refuses = (input, pattern, options = { name: NAME }) =>
  assert.throws(() => parseShardIndex(input, options), (e) => {
    assert.ok(e instanceof ModelFormatError, `${e.name}: ${e.message}`);
    assert.match(e.message, pattern);
    assert.ok(e.message.startsWith(`${options.name ?? 'model.safetensors.index.json'}: `), e.message);
    return true;
  });

describe('parseShardIndex()', () => {
  it('lists the shards in shard order and maps every tensor, from an object, text or bytes', () => {
    const json = hubIndex();
    const text = JSON.stringify(json, null, 2);
    for (const input of [json, text, new TextEncoder().encode(text), new TextEncoder().encode(text).buffer, `\ufeff${text}`]) {
      const index = parseShardIndex(input, { name: NAME });
      assert.deepEqual(index.files, ['model-00001-of-00003.safetensors', 'model-00002-of-00003.safetensors', 'model-00003-of-00003.safetensors']);
      assert.equal(index.weightMap.size, Object.keys(json.weight_map).length);
      assert.equal(index.totalSize, 123456789);
      for (const [tensor, file] of Object.entries(json.weight_map)) assert.equal(index.weightMap.get(tensor), file);
      const all = index.files.flatMap((f) => index.tensorsIn(f));
      assert.deepEqual(all.sort(), Object.keys(json.weight_map).sort(), 'every tensor in exactly one shard');
    }
    // Names that are not numbered: in name order.
    const plain = parseShardIndex({ weight_map: { b: 'second.safetensors', a: 'first.safetensors', c: 'second.safetensors' } });
    assert.deepEqual(plain.files, ['first.safetensors', 'second.safetensors']);
    assert.equal(plain.totalSize, null);
  });

  it('checkShard() accepts a shard whose header has exactly its tensors, and names what is extra or missing', () => {
    const index = parseShardIndex(hubIndex(), { name: NAME });
    const [first, second] = index.files;
    index.checkShard(first, [...index.tensorsIn(first)].reverse());
    const stray = index.tensorsIn(second)[0];
    const shardError = (names, pattern) => assert.throws(() => index.checkShard(first, names), (e) => {
      assert.ok(e instanceof ModelFormatError);
      assert.match(e.message, pattern);
      return e.message.startsWith(`${NAME}: `);
    });
    shardError([...index.tensorsIn(first), stray],
      new RegExp(`the shard model-00001-of-00003\\.safetensors holds "${stray.replaceAll('.', '\\.')}", which weight_map puts in model-00002-of-00003\\.safetensors`));
    shardError([...index.tensorsIn(first), 'not.a.tensor'], /holds "not\.a\.tensor", which weight_map does not name/);
    shardError(index.tensorsIn(first).slice(1), /lacks 1 tensor\(s\) weight_map puts there, e\.g\. "/);
    assert.throws(() => index.checkShard('other.safetensors', []), { name: 'ModelFormatError', message: /no tensor is mapped to "other\.safetensors"/ });
  });

  it('refuses what would make a wrong or unsafe file list, naming the index', () => {
    const map = (weight_map, extra = {}) => ({ ...extra, weight_map });
    refuses('{"weight_map": {', /not valid JSON/);
    refuses('[1]', /not a model\.safetensors\.index\.json: the JSON is an Array/);
    refuses({ model_type: 'llama' }, /it has no "weight_map" object \(this looks like a config\.json\)/);
    refuses(map({}), /weight_map is empty/);
    refuses('{"weight_map": {"a": "x.safetensors", "b": "x.safetensors", "a": "y.safetensors"}}', /weight_map names the tensor "a" twice/);
    refuses(map({ a: 3 }), /weight_map\["a"\] is number 3, not a file name/);
    for (const bad of ['../model.safetensors', 'sub/model.safetensors', 'sub\\model.safetensors', '/etc/model.safetensors', '..safetensors', '', 'a\u0000.safetensors'])
      refuses(map({ a: bad }), /a shard must be a plain file name beside the index \(no folder, no "\.\."\)/);
    refuses(map({ a: 'pytorch_model-00001-of-00002.bin' }), /only \.safetensors shards are read/);
    refuses(map({ a: 'model-00001-of-00003.safetensors', b: 'model-00003-of-00003.safetensors' }),
      /the shards are numbered 1 to 3, but weight_map names 2 \(no tensor is in shard 2\)/);
    refuses(map({ a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00003.safetensors' }), /the shards disagree on how many there are/);
    refuses(map({ a: 'model-00000-of-00001.safetensors' }), /numbered 1 to 1, but weight_map names 1 \(no tensor is in shard 1\)/);
    refuses(map({ a: 'x.safetensors' }, { metadata: { total_size: -1 } }), /metadata\.total_size is number -1, not a byte count/);
    refuses(map({ a: 'x.safetensors' }, { metadata: [] }), /metadata must be an object/);
    refuses(map({ '': 'x.safetensors' }), /a tensor with an empty name/);
    const index = hubIndex();
    refuses(index, /the shard model-00003-of-00003\.safetensors is not there \(beside the index: config\.json, model-00001/,
      { name: NAME, available: ['config.json', 'model-00001-of-00003.safetensors', 'model-00002-of-00003.safetensors'] });
    parseShardIndex(index, { name: NAME, available: ['config.json', 'model-00001-of-00003.safetensors', 'model-00002-of-00003.safetensors', 'model-00003-of-00003.safetensors'] });
  });

  it('throws TypeError for arguments of the wrong type', () => {
    assert.throws(() => parseShardIndex(42), { name: 'TypeError', message: /index must be model\.safetensors\.index\.json as an object, JSON text or bytes \(got number 42\)/ });
    assert.throws(() => parseShardIndex([]), { name: 'TypeError' });
    assert.throws(() => parseShardIndex(hubIndex(), { name: '' }), { name: 'TypeError', message: /name must be a non-empty string/ });
    assert.throws(() => parseShardIndex(hubIndex(), { available: 'x' }), { name: 'TypeError', message: /available must be an array/ });
    assert.throws(() => parseShardIndex(hubIndex()).checkShard('x'), { name: 'TypeError' });
  });
});

describe('model.safetensors.index.json fuzzing', () => {
  const SEED = 20261202;
  const VALUES = [null, 0, -1, 1.5, 2 ** 60, '', '..', '/', 'a/b.safetensors', 'model-00002-of-00003.safetensors',
    'model-00009-of-00003.safetensors', 'x.safetensors', 'x.bin', true, [], {}, { total_size: 5 }, '\u0000'];

  it('mutated and truncated index files give an index whose files are safe, or ModelFormatError', { timeout: HANG_GUARD_MS }, (t) => {
    const next = ref.random(SEED);
    const pick = (list) => list[Math.floor(next() * list.length)];
    const counts = { parsed: 0, refused: 0 };
    for (let i = 0; i < 3000; i++) {
      const json = hubIndex(1 + Math.floor(next() * 4), 1 + Math.floor(next() * 4));
      let input;
      if (i % 3 === 2) {
        const text = JSON.stringify(json);
        input = i % 2 ? text.slice(0, Math.floor(next() * text.length))
          : text.replace(/"[^"]*"/, (s) => `${s}${pick(['', ',"x":1', ':'])}`);
      } else {
        for (let k = 0, edits = 1 + Math.floor(next() * 3); k < edits; k++) {
          const map = json.weight_map;
          const target = next() < 0.7 && map !== null && typeof map === 'object' && !Array.isArray(map) ? map : json;
          const keys = Object.keys(target);
          const key = keys.length && next() < 0.8 ? pick(keys) : pick(['weight_map', 'metadata', 'extra', '']);
          if (next() < 0.3) delete target[key];
          else target[key] = structuredClone(pick(VALUES));
        }
        // Text keeps the duplicate-key check in play: repeat a tensor name now and then.
        input = JSON.stringify(json);
        if (next() < 0.2) input = input.replace(/"weight_map":\{("[^"]*":"[^"]*")/, (m, first) => `${m},${first}`);
      }
      try {
        const index = parseShardIndex(input, { name: NAME });
        counts.parsed++;
        for (const f of index.files) assert.ok(/^[^/\\\0]+\.safetensors$/.test(f) && !f.includes('..'), f);
        assert.equal(new Set(index.files).size, index.files.length);
        for (const file of index.weightMap.values()) assert.ok(index.files.includes(file));
        for (const f of index.files) index.checkShard(f, index.tensorsIn(f));
      } catch (e) {
        if (!(e instanceof ModelFormatError)) assert.fail(`case ${i} (seed ${SEED}): ${e.name}: ${e.message}\n${String(input).slice(0, 300)}`);
        assert.ok(e.message.startsWith(`${NAME}: `), e.message);
        counts.refused++;
      }
    }
    t.diagnostic(`3000 index files: ${counts.parsed} parsed, ${counts.refused} refused with ModelFormatError`);
    assert.ok(counts.parsed > 300 && counts.refused > 300, JSON.stringify(counts));
  });
});
