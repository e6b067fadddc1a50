// loadHfTokenizer() fuzzed: thousands of mutated tokenizer.json files (values swapped for other
// types, keys deleted, text truncated or corrupted), seeded so that a failure replays. Each must
// load as a working tokenizer (encode, decode and token() answer, or throw ModelFormatError) or
// be refused with ModelFormatError; never another exception, never a hang (each test has a time
// limit).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { loadHfTokenizer } from '../../web/model/hf-tokenizer.js';
import { ModelFormatError } from '../../web/model/pack.js';
import * as fx from './hf-fixtures.js';
import * as ref from './reference.js';

// A hang guard, not a speed limit: the runs take seconds, and only a loop that never ends meets it.
const HANG_GUARD_MS = 600_000;

const SEED = 20261201;
const TEXTS = ['Hello world', "it's 42 naïve 日本 😀", '  a\tb\n', '', '[CLS] <s> </s> <unk>', 'x'.repeat(120)];

/** Small tokenizer.json files of every supported family and pipeline (fast to load). */
function seeds() {
  const chars = [...'abcdefghijklmnopqrstuvwxyz'];
  const byteLevelVocab = {};
  // GPT-2's byte alphabet (as its encoder.json starts) plus a few merges.
  const gpt2 = fx.gpt2TokenizerJson();
  for (const [piece, id] of Object.entries(gpt2.model.vocab)) if (id < 256) byteLevelVocab[piece] = id;
  const merges = ['Ġ t', 'h e', 'Ġt he', 'i n', 'e r'];
  merges.forEach((m, i) => { byteLevelVocab[m.replace(' ', '')] = 256 + i; });
  const wordPieceVocab = Object.fromEntries(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...chars, ...chars.map((c) => `##${c}`), 'hello', 'world']
    .map((p, i) => [p, i]));
  const bert = fx.bertTokenizerJson();
  return [
    { ...gpt2, added_tokens: [{ ...gpt2.added_tokens[0], id: 261 }], model: { ...gpt2.model, vocab: { ...byteLevelVocab, '<|endoftext|>': 261 }, merges } },
    { ...bert, added_tokens: bert.added_tokens.map((t, i) => ({ ...t, id: i })), model: { ...bert.model, vocab: wordPieceVocab },
      post_processor: { ...bert.post_processor, special_tokens: { '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] } } } },
    fx.llamaTokenizerJson(),
    fx.llamaTokenizerJson({ metaspace: true }),
    { version: '1.0', added_tokens: [{ id: 0, content: '<unk>', special: true }], normalizer: { type: 'NFKC' },
      pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true }, post_processor: null,
      decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
      model: { type: 'Unigram', unk_id: 0, vocab: [['<unk>', 0], ['▁', -2], ...chars.map((c) => [c, -3]), ['▁he', -2], ['llo', -2]] } },
  ];
}

// Replacement values: other types, edge numbers, long and odd strings, nested junk.
const VALUES = [null, undefined, 0, -1, 1.5, 2 ** 31, 2 ** 53, NaN, '', 'BPE', 'WordPiece', 'Unigram', 'Sequence', 'ByteLevel',
  '▁', ' ', '(', '[', '\\', 'a'.repeat(1000), true, false, [], [null], [[]], {}, { type: 'Sequence' }, { type: null },
  { type: 'Split', pattern: { Regex: '(' }, behavior: 'Isolated' }, { type: 'Replace', pattern: { Regex: '[' }, content: '' },
  { SpecialToken: { id: '[CLS]' } }, { Sequence: { id: 'A' } }];

function mutate(value, next) {
  const pick = (list) => list[Math.floor(next() * list.length)];
  // Walk to a random node, collecting [parent, key] pairs on the way.
  const path = [];
  let node = value;
  while (node !== null && typeof node === 'object' && next() < 0.85) {
    const keys = Object.keys(node);
    if (keys.length === 0) break;
    // Large vocabularies: pick among the first entries and a few random ones.
    const key = keys.length > 64 && next() < 0.5 ? keys[Math.floor(next() * 64)] : pick(keys);
    path.push([node, key]);
    node = node[key];
  }
  if (path.length === 0) return;
  const [parent, key] = path.at(-1);
  const r = next();
  if (r < 0.3) delete parent[key];
  else if (r < 0.8) parent[key] = structuredClone(pick(VALUES));
  else if (typeof parent[key] === 'string') parent[key] = parent[key].slice(0, Math.floor(next() * parent[key].length)) + pick(['', ' ', '\u0000', '\uffff', '▁', 'Ġ']);
  else if (typeof parent[key] === 'number') parent[key] = parent[key] + pick([1, -1, 1000, -1000]);
  else parent[key] = structuredClone(pick(VALUES));
}

/** Loads `input`; returns 'refused' or 'loaded', failing the test on anything but ModelFormatError. */
async function tryLoad(input, what) {
  let tokenizer;
  try {
    tokenizer = await loadHfTokenizer({ tokenizer: input });
  } catch (e) {
    if (e instanceof ModelFormatError) return 'refused';
    assert.fail(`${what}: loading threw ${e?.name}: ${e?.message}\n${e?.stack}`);
  }
  for (const text of TEXTS) {
    try {
      const e = tokenizer.encode(text, { pair: 'b' });
      assert.ok(e.ids instanceof Int32Array && e.tokens.length === e.ids.length && e.typeIds.length === e.ids.length);
      for (const id of e.ids) assert.equal(typeof tokenizer.token(id), 'string');
      assert.equal(typeof tokenizer.decode(e.ids), 'string');
    } catch (e) {
      if (e instanceof ModelFormatError) continue;
      assert.fail(`${what}: a loaded tokenizer threw ${e?.name} on ${JSON.stringify(text)}: ${e?.message}\n${e?.stack}`);
    }
  }
  return 'loaded';
}

describe('text fuzzing on the real vocabularies', () => {
  it('any string (lone surrogates, unassigned and private-use code points, controls) encodes, decodes and shows', { timeout: HANG_GUARD_MS }, async () => {
    const tokenizers = {
      gpt2: await loadHfTokenizer({ tokenizer: fx.gpt2TokenizerJson() }),
      bert: await loadHfTokenizer({ tokenizer: fx.bertTokenizerJson() }),
      llama: await loadHfTokenizer({ tokenizer: fx.llamaTokenizerJson() }),
      unigram: await loadHfTokenizer({ tokenizer: fx.useLiteUnigramTokenizerJson() }),
    };
    const next = ref.random(SEED + 2);
    for (let i = 0; i < 1000; i++) {
      let text = '';
      for (let k = 0, n = 1 + Math.floor(next() * 12); k < n; k++) {
        const r = next();
        text += r < 0.3 ? String.fromCharCode(Math.floor(next() * 0x10000))  // lone surrogates too
          : r < 0.5 ? String.fromCodePoint(Math.floor(next() * 0x110000))
            : r < 0.8 ? String.fromCharCode(32 + Math.floor(next() * 95)) : ' ';
      }
      for (const [name, t] of Object.entries(tokenizers)) {
        const e = t.encode(text, { pair: text });
        assert.equal(e.tokens.length, e.ids.length);
        for (const token of e.tokens) assert.ok(token.isWellFormed(), `${name}: ${JSON.stringify(token)} from ${JSON.stringify(text)}`);
        assert.equal(typeof t.decode(e.ids), 'string');
      }
    }
  });
});

describe('tokenizer.json fuzzing', () => {
  const bases = seeds();

  it('mutated files (one to three edits each) load or are refused with ModelFormatError', { timeout: HANG_GUARD_MS }, async (t) => {
    const next = ref.random(SEED);
    const counts = { loaded: 0, refused: 0 };
    for (let i = 0; i < 1500; i++) {
      const base = i % bases.length;
      const file = structuredClone(bases[base]);
      const edits = 1 + Math.floor(next() * 3);
      for (let k = 0; k < edits; k++) mutate(file, next);
      counts[await tryLoad(file, `mutation ${i} (seed ${SEED}, base ${base})`)]++;
    }
    t.diagnostic(`1500 mutated files: ${counts.loaded} loaded, ${counts.refused} refused with ModelFormatError`);
    assert.ok(counts.loaded > 100 && counts.refused > 100, JSON.stringify(counts));
  });

  it('truncated and byte-corrupted JSON text is refused or loads, never throws anything else', { timeout: HANG_GUARD_MS }, async (t) => {
    const next = ref.random(SEED + 1);
    const counts = { loaded: 0, refused: 0 };
    const texts = bases.map((b) => new TextEncoder().encode(JSON.stringify(b)));
    for (let i = 0; i < 600; i++) {
      const base = texts[i % texts.length];
      let bytes;
      if (i % 2 === 0) bytes = base.subarray(0, Math.floor(next() * base.length));
      else {
        bytes = base.slice();
        for (let k = 0; k < 1 + Math.floor(next() * 4); k++) bytes[Math.floor(next() * bytes.length)] = Math.floor(next() * 256);
      }
      counts[await tryLoad(bytes, `text ${i} (seed ${SEED + 1})`)]++;
    }
    t.diagnostic(`600 truncated or corrupted texts: ${counts.loaded} loaded, ${counts.refused} refused with ModelFormatError`);
    assert.ok(counts.refused > 300, JSON.stringify(counts));
  });
});
