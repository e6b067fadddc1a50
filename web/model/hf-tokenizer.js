// A Hugging Face tokenizer.json (+ optional tokenizer_config.json) as a tokenizer: ids from
// Hugging Face's own JavaScript implementation, @huggingface/tokenizers (Apache-2.0), which the
// build copies to web/dist/hf-tokenizers.mjs (scripts/vendor-tokenizers.mjs) so that Node,
// bundlers and plain pages all import it by one relative URL. What this module adds: checked
// input with ModelFormatError naming the file, typed-array results, special-token ids, and
// readable tokens for figures (byte-level `Ġworld` → ` world`, SentencePiece `▁world` →
// ` world`, a byte sequence that is not whole UTF-8 → `<0xHH>`).
//   const tok = await loadHfTokenizer({ tokenizer: tokenizerJsonText });
//   tok.encode('Hello world').ids;   // Int32Array
import * as check from '../engine/validate.js';
import { ModelFormatError } from './pack.js';
import { byteLevelText } from './token-text.js';

/** The tokenizer.json model types this loader accepts (Hugging Face's names). */
export const SUPPORTED_MODELS = ['BPE', 'WordPiece', 'Unigram'];

const KIND = { BPE: 'bpe', WordPiece: 'wordpiece', Unigram: 'unigram' };
const SPECIAL_NAMES = ['bos', 'eos', 'pad', 'mask', 'cls', 'sep', 'unk'];
// Added special tokens whose text says what they are (used when neither tokenizer_config.json
// nor the post-processor says).
const NAMED_SPECIALS = {
  bos: ['<s>', '<|begin_of_text|>', '<|startoftext|>', '<bos>'],
  eos: ['</s>', '<|endoftext|>', '<|end_of_text|>', '<eos>'],
  pad: ['[PAD]', '<pad>', '<|pad|>'],
  mask: ['[MASK]', '<mask>'],
  cls: ['[CLS]', '<cls>'],
  sep: ['[SEP]', '<sep>'],
  unk: ['[UNK]', '<unk>', '<|unk|>'],
};
const MAX_ID = 2 ** 31 - 1;
const SPACE_MARK = '\u2581';  // SentencePiece's ▁

let library = null;
/** The vendored @huggingface/tokenizers module, imported once, on first use. */
function tokenizersLibrary() {
  library ??= import('../dist/hf-tokenizers.mjs').catch((error) => {
    library = null;
    throw new Error(
      'attnlens: the tokenizer library web/dist/hf-tokenizers.mjs could not be loaded ' +
      `(${error.message}); the build copies it from @huggingface/tokenizers (node scripts/vendor-tokenizers.mjs)`,
      { cause: error });
  });
  return library;
}

const isBytes = (v) => v instanceof ArrayBuffer || ArrayBuffer.isView(v);
const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !isBytes(v);

/** `value` (object, JSON text or UTF-8 bytes) as a parsed JSON object; `file` names it in errors. */
function jsonObject(value, argument, file, what) {
  let parsed = value;
  if (isBytes(value)) {
    const bytes = value instanceof ArrayBuffer ? new Uint8Array(value)
      : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    value = new TextDecoder().decode(bytes);  // drops a UTF-8 byte-order mark
  }
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value.charCodeAt(0) === 0xfeff ? value.slice(1) : value);
    } catch (e) {
      throw new ModelFormatError(`${file}: not valid JSON (${e.message})`);
    }
    if (!isPlainObject(parsed))
      throw new ModelFormatError(`${file}: not ${what}: the JSON is ${check.describe(parsed)}, not an object`);
    return parsed;
  }
  if (!isPlainObject(parsed))
    throw new TypeError(`${argument} must be ${what} as an object, JSON text or bytes (got ${check.describe(value)})`);
  return parsed;
}

/** The model's type, from "type" or (older files such as GPT-2's, which have none) its fields. */
function modelType(model, file) {
  if (typeof model.type === 'string') {
    if (SUPPORTED_MODELS.includes(model.type)) return model.type;
    throw new ModelFormatError(`${file}: the tokenizer model type "${model.type.slice(0, 40)}" is not supported ` +
      `(supported: ${SUPPORTED_MODELS.join(', ')})`);
  }
  if (model.type !== undefined) throw new ModelFormatError(`${file}: model.type must be a string`);
  if (Array.isArray(model.vocab)) return 'Unigram';
  if (Object.hasOwn(model, 'merges')) return 'BPE';
  if (Object.hasOwn(model, 'continuing_subword_prefix') || Object.hasOwn(model, 'max_input_chars_per_word')) return 'WordPiece';
  throw new ModelFormatError(`${file}: model has no "type" and its fields fit none of ${SUPPORTED_MODELS.join(', ')}`);
}

/** The model with the Rust code's defaults filled in where the library has none (a WordPiece
 *  model without continuing_subword_prefix would otherwise look pieces up as "undefinedx"). */
function modelDefaults(model, type, file) {
  if (type !== 'WordPiece') return model;
  const out = { ...model };
  for (const [key, fallback] of [['continuing_subword_prefix', '##'], ['unk_token', '[UNK]']]) {
    if (out[key] === undefined || out[key] === null) out[key] = fallback;
    else if (typeof out[key] !== 'string') throw new ModelFormatError(`${file}: model.${key} must be a string`);
  }
  return out;
}

/**
 * Every id's vocabulary string (index = id), from the model's vocabulary and the added tokens,
 * checked: ids are integers, unique within the model vocabulary and cover 0…n-1.
 */
function pieceTable(json, type, file) {
  const { model } = json;
  const pieces = [];
  if (type === 'Unigram') {
    if (!Array.isArray(model.vocab) || model.vocab.length === 0)
      throw new ModelFormatError(`${file}: model.vocab of a Unigram model must be a non-empty array of [piece, score]`);
    model.vocab.forEach((entry, id) => {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !Number.isFinite(entry[1]))
        throw new ModelFormatError(`${file}: model.vocab[${id}] is not [piece, finite score]`);
      pieces.push(entry[0]);
    });
  } else {
    if (!isPlainObject(model.vocab) || Object.keys(model.vocab).length === 0)
      throw new ModelFormatError(`${file}: model.vocab of a ${type} model must be a non-empty object of piece → id`);
    for (const [piece, id] of Object.entries(model.vocab)) {
      if (!Number.isInteger(id) || id < 0 || id > MAX_ID)
        throw new ModelFormatError(`${file}: model.vocab[${JSON.stringify(piece.slice(0, 40))}] is ${check.describe(id)}, not an id (an integer ≥ 0)`);
      if (pieces[id] !== undefined)
        throw new ModelFormatError(`${file}: model.vocab gives id ${id} to both ${JSON.stringify(pieces[id])} and ${JSON.stringify(piece)}`);
      pieces[id] = piece;
    }
  }
  if (type === 'BPE') {
    if (!Array.isArray(model.merges)) throw new ModelFormatError(`${file}: model.merges of a BPE model must be an array`);
    model.merges.forEach((m, i) => {
      const ok = typeof m === 'string' ? m.includes(' ')
        : Array.isArray(m) && m.length === 2 && typeof m[0] === 'string' && typeof m[1] === 'string';
      if (!ok) throw new ModelFormatError(`${file}: model.merges[${i}] is neither "a b" nor ["a", "b"]`);
    });
  }
  const added = json.added_tokens ?? [];
  if (!Array.isArray(added)) throw new ModelFormatError(`${file}: added_tokens must be an array`);
  added.forEach((t, i) => {
    if (!isPlainObject(t) || typeof t.content !== 'string' || t.content === '' || !Number.isInteger(t.id) || t.id < 0 || t.id > MAX_ID)
      throw new ModelFormatError(`${file}: added_tokens[${i}] must be { id: integer ≥ 0, content: non-empty string, … }`);
    pieces[t.id] = t.content;  // an added token's text wins over the model's piece for its id
  });
  for (let id = 0; id < pieces.length; id++)
    if (pieces[id] === undefined)
      throw new ModelFormatError(`${file}: no token has id ${id}, but ids go up to ${pieces.length - 1} (the vocabulary has a hole)`);
  return pieces;
}

// Each component the library reads must be an object with a string "type" (or null).
function checkComponents(json, file) {
  for (const key of ['normalizer', 'pre_tokenizer', 'post_processor', 'decoder']) {
    const v = json[key];
    if (v === null || v === undefined) continue;
    if (!isPlainObject(v) || typeof v.type !== 'string')
      throw new ModelFormatError(`${file}: ${key} must be null or an object with a "type"`);
  }
}

/**
 * The post-processor's special tokens must be tokens of the vocabulary with the ids it gives
 * them (Hugging Face's Rust code refuses such a file; the JavaScript library would silently use
 * the unknown token's id).
 */
function checkPostProcessor(json, idOf, file) {
  const known = (token, id, where) => {
    if (typeof token !== 'string' || !idOf.has(token))
      throw new ModelFormatError(`${file}: post_processor: ${where} names the token ${JSON.stringify(String(token).slice(0, 40))}, which the vocabulary lacks`);
    if (id !== undefined && id !== idOf.get(token))
      throw new ModelFormatError(`${file}: post_processor: ${where} gives ${JSON.stringify(token)} id ${check.describe(id)}, the vocabulary ${idOf.get(token)}`);
  };
  for (const p of components({ post_processor: json.post_processor })) {
    if (p.type === 'TemplateProcessing') {
      for (const key of ['single', 'pair']) {
        if (!Array.isArray(p[key])) throw new ModelFormatError(`${file}: post_processor.${key} must be an array (the template)`);
        p[key].forEach((item, i) => {
          if (isPlainObject(item) && isPlainObject(item.SpecialToken)) known(item.SpecialToken.id, undefined, `${key}[${i}]`);
          else if (!isPlainObject(item) || !isPlainObject(item.Sequence) || !['A', 'B'].includes(item.Sequence.id))
            throw new ModelFormatError(`${file}: post_processor.${key}[${i}] is neither { SpecialToken } nor { Sequence: { id: 'A' | 'B' } }`);
        });
      }
      for (const [token, entry] of Object.entries(isPlainObject(p.special_tokens) ? p.special_tokens : {}))
        if (isPlainObject(entry) && Array.isArray(entry.ids) && entry.ids.length === 1) known(token, entry.ids[0], 'special_tokens');
    }
    if (p.type === 'BertProcessing' || p.type === 'RobertaProcessing')
      for (const key of ['cls', 'sep']) {
        if (!Array.isArray(p[key]) || p[key].length !== 2) throw new ModelFormatError(`${file}: post_processor.${key} must be [token, id]`);
        known(p[key][0], p[key][1], key);
      }
  }
}

/** Every component object of the pipeline, Sequences unrolled. */
function components(json) {
  const out = [];
  const visit = (c) => {
    if (!isPlainObject(c)) return;
    out.push(c);
    for (const key of ['normalizers', 'pretokenizers', 'processors', 'decoders'])
      if (Array.isArray(c[key])) c[key].forEach(visit);
  };
  ['normalizer', 'pre_tokenizer', 'post_processor', 'decoder'].forEach((k) => visit(json[k]));
  return out;
}

/** The id of `token` (a string, or an AddedToken-style { content }) in `idOf`, else null. */
function idOfToken(token, idOf) {
  const text = typeof token === 'string' ? token : isPlainObject(token) && typeof token.content === 'string' ? token.content : null;
  return text === null ? null : idOf.get(text) ?? null;
}

/** { bos, eos, pad, mask, cls, sep, unk }: tokenizer_config.json first (its null means none:
 *  Qwen2 has no BOS), then the post-processor, the model's unk_token and the names of added
 *  special tokens. */
function specialIds(json, config, idOf) {
  const special = Object.fromEntries(SPECIAL_NAMES.map((k) => [k, null]));
  const settled = new Set();  // tokenizer_config.json says which token, or (null) that there is none
  const set = (name, id) => { if (!settled.has(name) && special[name] === null && Number.isInteger(id)) special[name] = id; };
  for (const name of SPECIAL_NAMES) {
    const key = `${name}_token`;
    if (!Object.hasOwn(config, key)) continue;
    set(name, idOfToken(config[key], idOf));
    if (config[key] === null || special[name] !== null) settled.add(name);
  }
  for (const p of components({ post_processor: json.post_processor })) {
    if ((p.type === 'BertProcessing' || p.type === 'RobertaProcessing')) {
      set('cls', idOfToken(Array.isArray(p.cls) ? p.cls[0] : null, idOf));
      set('sep', idOfToken(Array.isArray(p.sep) ? p.sep[0] : null, idOf));
    }
    if (p.type === 'TemplateProcessing' && Array.isArray(p.single)) {
      const at = p.single.findIndex((item) => isPlainObject(item) && Object.hasOwn(item, 'Sequence'));
      const token = (item) => (isPlainObject(item) && isPlainObject(item.SpecialToken) ? idOfToken(item.SpecialToken.id, idOf) : null);
      const first = at > 0 ? token(p.single[0]) : null;
      const last = at >= 0 && at < p.single.length - 1 ? token(p.single[p.single.length - 1]) : null;
      // [CLS] $A [SEP] marks an encoder's input; a lone leading token is a BOS, a lone trailing one an EOS.
      if (first !== null && last !== null) {
        set('cls', first);
        set('sep', last);
      } else {
        set('bos', first);
        set('eos', last);
      }
    }
  }
  set('unk', idOfToken(json.model.unk_token, idOf));
  for (const t of json.added_tokens ?? [])
    if (t.special) for (const [name, texts] of Object.entries(NAMED_SPECIALS)) if (texts.includes(t.content)) set(name, t.id);
  return special;
}

function integerIds(name, ids, vocabSize) {
  if (!(ids instanceof Int32Array || Array.isArray(ids) || ids instanceof Uint32Array || ids instanceof Uint16Array))
    throw new TypeError(`${name} must be an Int32Array or an array of ids (got ${check.describe(ids)})`);
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (typeof id !== 'number') throw new TypeError(`${name}[${i}] must be a number (got ${check.describe(id)})`);
    if (!Number.isInteger(id) || id < 0 || id >= vocabSize)
      throw new RangeError(`${name}[${i}] is ${id}: ids are integers in [0, ${vocabSize})`);
  }
  return ids;
}

/** A loaded tokenizer.json. Construct with loadHfTokenizer(). */
export class HfTokenizer {
  #tokenizer;
  #file;
  #pieces;
  #readable;
  #idOf;
  #dropsPair;
  #style;
  #addedIds;

  constructor(tokenizer, { file, kind, pieces, idOf, special, style, addedIds, dropsPair }) {
    this.#tokenizer = tokenizer;
    this.#dropsPair = dropsPair;
    this.#file = file;
    this.#pieces = pieces;
    this.#idOf = idOf;
    this.#style = style;
    this.#addedIds = addedIds;
    this.#readable = new Array(pieces.length);  // filled on first use: most ids never show
    /** 'bpe' | 'wordpiece' | 'unigram': the tokenizer.json model. */
    this.kind = kind;
    /** Ids 0 … vocabSize - 1, the added tokens included. */
    this.vocabSize = pieces.length;
    /** The special tokens' ids (null: the tokenizer has none). */
    this.special = Object.freeze(special);
    Object.freeze(this);
  }

  #readableToken(id) {
    let text = this.#readable[id];
    if (text === undefined) {
      const piece = this.#pieces[id];
      text = this.#addedIds.has(id) ? piece  // added tokens are stored as text, not byte-level
        : this.#style.byteLevel ? byteLevelText(piece) ?? piece
          : this.#style.metaspace ? piece.replaceAll(SPACE_MARK, ' ') : piece;
      this.#readable[id] = text;
    }
    return text;
  }

  /**
   * `{ ids, tokens, typeIds }` of `text` (and `options.pair`, the second text, whose tokens get
   * type id 1 where the post-processor says so); special tokens as the post-processor adds them
   * unless `addSpecialTokens` is false. `tokens` are readable (see token()).
   */
  encode(text, options) {
    if (typeof text !== 'string') throw new TypeError(`tokenizer.encode(text): text must be a string (got ${check.describe(text)})`);
    const o = check.options('tokenizer.encode options', options, ['pair', 'addSpecialTokens']);
    if (o.pair !== undefined && o.pair !== null && typeof o.pair !== 'string')
      throw new TypeError(`tokenizer.encode options.pair must be a string (got ${check.describe(o.pair)})`);
    const addSpecialTokens = check.boolean('tokenizer.encode options.addSpecialTokens', o.addSpecialTokens, true);
    const pair = typeof o.pair === 'string' ? o.pair : null;
    let result;
    try {
      result = this.#tokenizer.encode(text, { text_pair: pair, add_special_tokens: addSpecialTokens, return_token_type_ids: true });
      if (pair !== null && this.#dropsPair) {
        // The library's ByteLevel post-processor (GPT-2's) drops the second text; Hugging Face's
        // Rust code appends it, type id 0 throughout.
        const second = this.#tokenizer.encode(pair, { add_special_tokens: addSpecialTokens });
        result = { ids: [...result.ids, ...second.ids], tokens: [...result.tokens, ...second.tokens] };
      }
    } catch (e) {
      throw new ModelFormatError(`${this.#file}: the tokenizer failed on this text (${e.message})`);
    }
    const ids = new Int32Array(result.ids.length);
    result.ids.forEach((id, i) => {
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize)
        throw new ModelFormatError(`${this.#file}: the token ${JSON.stringify(String(result.tokens[i]).slice(0, 40))} has no id ` +
          '(it is not in the vocabulary, and the model has no usable unk_token)');
      ids[i] = id;
    });
    const typeIds = result.token_type_ids;
    return {
      ids,
      tokens: Array.from(ids, (id) => this.#readableToken(id)),
      typeIds: typeIds?.length === ids.length ? Int32Array.from(typeIds) : new Int32Array(ids.length),
    };
  }

  /** The text of `ids` as the tokenizer.json decoder gives it (special tokens skipped on request). */
  decode(ids, options) {
    integerIds('tokenizer.decode(ids)', ids, this.vocabSize);
    const o = check.options('tokenizer.decode options', options, ['skipSpecialTokens']);
    const skip = check.boolean('tokenizer.decode options.skipSpecialTokens', o.skipSpecialTokens, false);
    if (ids.length === 0) return '';
    try {
      return this.#tokenizer.decode(Array.from(ids), { skip_special_tokens: skip });
    } catch (e) {
      throw new ModelFormatError(`${this.#file}: the decoder failed on these ids (${e.message})`);
    }
  }

  /** The readable text of one token: ` world` for byte-level `Ġworld` and SentencePiece `▁world`,
   *  `<0xHH>` for each byte that is not part of a whole UTF-8 character, `##ing` kept. */
  token(id) {
    integerIds('tokenizer.token(id)', [id], this.vocabSize);
    return this.#readableToken(id);
  }

  /** The vocabulary's own string for `id` (`Ġworld`, `▁world`, `##ing`, `<0x0A>`). */
  piece(id) {
    integerIds('tokenizer.piece(id)', [id], this.vocabSize);
    return this.#pieces[id];
  }

  /** The id whose vocabulary string is `piece`, or null. */
  id(piece) {
    if (typeof piece !== 'string') throw new TypeError(`tokenizer.id(piece): piece must be a string (got ${check.describe(piece)})`);
    return this.#idOf.get(piece) ?? null;
  }
}

/**
 * Loads a tokenizer.json: `tokenizer` and `tokenizerConfig` (tokenizer_config.json, optional)
 * each an object, JSON text or UTF-8 bytes; `names` the file names or URLs that error messages
 * give. Rejects with ModelFormatError (naming the file and what is wrong), TypeError for an
 * argument of the wrong type.
 */
export async function loadHfTokenizer(args) {
  if (!isPlainObject(args))
    throw new TypeError(`loadHfTokenizer() takes { tokenizer, tokenizerConfig, names } (got ${check.describe(args)})`);
  const o = check.options('loadHfTokenizer() argument', args, ['tokenizer', 'tokenizerConfig', 'names']);
  const names = check.options('loadHfTokenizer() names', o.names, ['tokenizer', 'tokenizerConfig']);
  for (const key of ['tokenizer', 'tokenizerConfig'])
    if (names[key] !== undefined && (typeof names[key] !== 'string' || names[key] === ''))
      throw new TypeError(`loadHfTokenizer() names.${key} must be a non-empty string (got ${check.describe(names[key])})`);
  const file = names.tokenizer ?? 'tokenizer.json';
  const configFile = names.tokenizerConfig ?? 'tokenizer_config.json';
  if (o.tokenizer === undefined || o.tokenizer === null)
    throw new TypeError('loadHfTokenizer() needs tokenizer: the tokenizer.json as an object, JSON text or bytes');

  const json = jsonObject(o.tokenizer, 'loadHfTokenizer() tokenizer', file, 'a tokenizer.json');
  const config = o.tokenizerConfig === undefined || o.tokenizerConfig === null ? {}
    : jsonObject(o.tokenizerConfig, 'loadHfTokenizer() tokenizerConfig', configFile, 'a tokenizer_config.json');
  if (!isPlainObject(json.model))
    throw new ModelFormatError(`${file}: not a tokenizer.json (it has no "model" object${
      Object.hasOwn(json, 'model_type') ? '; this looks like a config.json' : ''})`);
  const type = modelType(json.model, file);
  const pieces = pieceTable(json, type, file);
  checkComponents(json, file);

  const idOf = new Map(pieces.map((p, id) => [p, id]).reverse());  // the first id wins for a repeated text
  checkPostProcessor(json, idOf, file);

  const { Tokenizer } = await tokenizersLibrary();
  // The library wants every pipeline key present (null when absent) and added_tokens an array.
  const normalised = { normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null, ...json,
    added_tokens: json.added_tokens ?? [], model: { ...modelDefaults(json.model, type, file), type } };
  let tokenizer, dropsPair;
  try {
    tokenizer = new Tokenizer(normalised, config);
    // Running it once surfaces what the library checks only when it runs, and shows whether its
    // post-processor loses a pair's second text (its ByteLevel one does).
    const count = (text, pair) => tokenizer.encode(text, { text_pair: pair, add_special_tokens: false }).ids.length;
    dropsPair = count('a b', 'c') === count('a b') && count('c') > 0;
    tokenizer.decode([0]);
  } catch (e) {
    throw new ModelFormatError(`${file}: ${e.message}`);
  }
  const all = components(json);
  const has = (t) => all.some((c) => c.type === t);
  const style = {
    byteLevel: has('ByteLevel'),
    metaspace: has('Metaspace') || all.some((c) => c.type === 'Replace' && JSON.stringify(c).includes(SPACE_MARK)),
  };
  const addedIds = new Set(normalised.added_tokens.map((t) => t.id));
  const loaded = new HfTokenizer(tokenizer, {
    file, kind: KIND[type], pieces, idOf, special: specialIds(normalised, config, idOf), style, addedIds, dropsPair,
  });
  loaded.encode('a b', { pair: 'c' });  // every id the post-processor adds must exist
  return loaded;
}
