// Llama-family causal language models (stories260K, llama2.c checkpoints, Hugging Face Llama in
// safetensors) run by our C++ engine in the opt-in model module. Reached through
// lens.loadModel('stories260K') (web/model/index.js routes here); see llama.d.ts.
//   const lm = await lens.loadModel('stories260K');
//   lm.run('Once upon a time');                          // ids, tokens, layers[l].attention, next
//   lm.generate('Once upon a time', { steps: 40, temperature: 0 });
import { CallBuffers, MAX_HEAP_BYTES, formatBytes } from '../engine/heap.js';
import { instantiate, simdSupported } from '../engine/load.js';
import * as check from '../engine/validate.js';
import { cachedLoad, copyLayers, loadOptions, moduleVariant, readTokens } from './loading.js';
import { ModelFormatError } from './pack.js';
import { readBytes, toUrl } from './source.js';

/** Longest text accepted by tokenize(), run() and generate(), in UTF-16 code units. */
export const MAX_LM_TEXT_LENGTH = 1_000_000;
/** Candidates reported per generated token. */
export const CANDIDATES = 10;

const BOS = 1;
const EOS = 2;
const utf8 = new TextEncoder();
const cache = new Map();

const SOURCE_HELP =
  "'stories260K', a llama2.c checkpoint (URL, path or bytes) with { tokenizer }, or " +
  '{ config, weights, tokenizer } (Hugging Face config.json + model.safetensors + a llama2.c tokenizer file)';

/** The bundled model's files (literal URLs, so that bundlers copy them). */
function bundledFiles() {
  return {
    model: new URL('../models/stories260K/stories260K.bin', import.meta.url),
    tokenizer: new URL('../models/stories260K/tok512.bin', import.meta.url),
  };
}

const isBytes = (v) => v instanceof ArrayBuffer || ArrayBuffer.isView(v);
const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !isBytes(v) && !(v instanceof URL);

/** True when loadModel(source, options) asks for a language model rather than USE-lite. */
export function isLanguageModelSource(source, options) {
  if (source === 'stories260K') return true;
  if (isPlainObject(options) && Object.hasOwn(options, 'tokenizer')) return true;
  return isPlainObject(source) && (Object.hasOwn(source, 'config') || Object.hasOwn(source, 'tokenizer'));
}

/**
 * Loads a language model. `options.onProgress({ stage, loaded, total, fraction })` reports
 * 'download' bytes, then 'initialise', then 'ready'. The bundled model and URL/path sources are
 * cached (per model module); `engine.build` (lens.build) picks the module.
 */
export function loadLanguageModel(source, options, engine) {
  const { o, report } = loadOptions(options, ['onProgress', 'tokenizer', 'config']);
  const parts = describeSource(source, o);
  const variant = moduleVariant(engine?.build);
  const key = parts.key === null ? null : `${variant}:${parts.key}`;
  return cachedLoad(cache, key, report, () => load(parts, report, variant));
}

// What to read: { name, format: 'llama2c' | 'huggingface' | 'detect', model, config, tokenizer,
// key }, each part bytes, a URL, a path or (config) an object; key is null unless every part is
// a URL or path.
function describeSource(source, o) {
  if (source === 'stories260K') {
    if (o.tokenizer !== undefined || o.config !== undefined)
      throw new TypeError("loadModel('stories260K') takes no tokenizer or config: the bundled files are used");
    return { name: 'stories260K', format: 'llama2c', ...bundledFiles(), config: undefined, key: 'stories260K',
      names: { model: 'stories260K.bin', tokenizer: 'tok512.bin' } };
  }
  if (isPlainObject(source)) {
    for (const k of Object.keys(source))
      if (!['config', 'weights', 'tokenizer'].includes(k))
        throw new TypeError(`loadModel source has an unknown key '${k}' (known: config, weights, tokenizer)`);
    for (const k of ['config', 'weights', 'tokenizer'])
      if (source[k] === undefined || source[k] === null)
        throw new TypeError(`loadModel source.${k} is required (Hugging Face layout: config, weights, tokenizer)`);
    if (o.tokenizer !== undefined || o.config !== undefined)
      throw new TypeError('loadModel: give config and tokenizer in the source object or in the options, not both');
    part('source.weights', source.weights);
    part('source.tokenizer', source.tokenizer);
    configPart('source.config', source.config);
    return { name: 'huggingface', format: 'huggingface', model: source.weights, config: source.config,
      tokenizer: source.tokenizer, key: null, names: { model: 'source.weights', config: 'source.config', tokenizer: 'source.tokenizer' } };
  }
  if (o.tokenizer === undefined || o.tokenizer === null)
    throw new TypeError(`loadModel: a language model needs options.tokenizer (a llama2.c tokenizer file); source must be ${SOURCE_HELP}`);
  part('loadModel source', source);
  part('options.tokenizer', o.tokenizer);
  if (o.config !== undefined) configPart('options.config', o.config);
  const keyOf = (v) => (v instanceof URL ? v.href : typeof v === 'string' ? `string:${v}` : null);
  const keys = [keyOf(source), keyOf(o.tokenizer), o.config === undefined ? '' : keyOf(o.config)];
  return {
    name: 'llama2.c',
    format: o.config === undefined ? 'detect' : 'huggingface',
    model: source,
    config: o.config,
    tokenizer: o.tokenizer,
    key: keys.includes(null) ? null : `lm:${keys.join('|')}`,
    names: { model: 'source', config: 'options.config', tokenizer: 'options.tokenizer' },
  };
}

// A loader message prefixed with the argument it is about (and its URL or path), so that a
// user who passed three files knows which one is wrong.
function formatError(parts, message) {
  const which = /^(the tokenizer file|the vocabulary has)/.test(message) ? 'tokenizer'
    : /^config\.json(?! says)|\(from config\.json\)$/.test(message) ? 'config' : 'model';
  const value = parts[which];
  const where = value instanceof URL ? ` (${value.href})` : typeof value === 'string' && !value.trimStart().startsWith('{') ? ` (${value})` : '';
  return new ModelFormatError(`loadModel: ${parts.names[which]}${where}: ${message}`);
}

function part(name, v) {
  if (isBytes(v) || v instanceof URL || (typeof v === 'string' && v !== '')) return;
  throw new TypeError(`${name} must be a URL, a non-empty path string, an ArrayBuffer or a typed array (got ${check.describe(v)})`);
}

function configPart(name, v) {
  if (isPlainObject(v)) return;
  part(name, v);
}

async function readPart(v, progress, name) {
  if (isBytes(v)) {
    const bytes = v instanceof ArrayBuffer ? new Uint8Array(v) : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    progress(bytes.byteLength, bytes.byteLength);
    return bytes;
  }
  const url = await toUrl(v);
  try {
    return await readBytes(url, progress);
  } catch (e) {
    e.message = `loadModel: ${name}: ${e.message}`;  // which of the files could not be read
    throw e;
  }
}

async function readConfig(v, progress, name) {
  const text = isPlainObject(v) ? JSON.stringify(v) : typeof v === 'string' && v.trimStart().startsWith('{') ? v : null;
  if (text === null) return readPart(v, progress, name);  // bytes, a URL or a path
  const bytes = utf8.encode(text);  // an object or JSON text
  progress(bytes.byteLength, bytes.byteLength);
  return bytes;
}

// A safetensors file starts with a little-endian u64 header length and then '{'.
function looksLikeSafetensors(bytes) {
  if (bytes.byteLength < 10) return false;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  return n >= 2 && n <= bytes.byteLength - 8 && bytes[8] === 0x7b;
}

async function load(parts, report, variant) {
  if (!simdSupported()) throw new Error('the model needs WebAssembly SIMD128, which this runtime lacks');
  const modulePromise = instantiate(variant);
  modulePromise.catch(() => {});  // awaited below
  // Download progress over all parts: bytes so far, out of the sum of the sizes once every
  // part's is known (0 until then); loaded never decreases and ends equal to total.
  const count = parts.config === undefined ? 2 : 3;
  const loaded = new Array(count).fill(0);
  const totals = new Array(count).fill(null);
  const progressOf = (i) => (l, t) => {
    loaded[i] = l;
    totals[i] = t || null;
    const sum = (a) => a.reduce((x, y) => x + y, 0);
    report('download', sum(loaded), totals.includes(null) ? 0 : Math.max(sum(totals), sum(loaded)));
  };
  const [model, tokenizer, config] = await Promise.all([
    readPart(parts.model, progressOf(0), parts.names.model),
    readPart(parts.tokenizer, progressOf(1), parts.names.tokenizer),
    parts.config === undefined ? null : readConfig(parts.config, progressOf(2), parts.names.config),
  ]);
  let format = parts.format;
  if (format === 'detect') {
    if (looksLikeSafetensors(model))
      throw formatError(parts, 'the model file is a safetensors file: pass its config.json too, as options.config');
    format = 'llama2c';
  }
  report('initialise', 0, 1);
  const module = await modulePromise;
  const sizes = { model: model.byteLength, config: config?.byteLength ?? 0, tokenizer: tokenizer.byteLength };
  const buffers = new CallBuffers(module, sizes, `the ${formatBytes(model.byteLength)} model file`);
  try {
    module.HEAPU8.set(model, buffers.address.model);
    module.HEAPU8.set(tokenizer, buffers.address.tokenizer);
    if (config) module.HEAPU8.set(config, buffers.address.config);
    // The weights are copied as float32: they must fit beside the file's bytes.
    const available = MAX_HEAP_BYTES - module.heapInUse();
    const error = module.lmLoad(format === 'llama2c' ? 0 : 1, buffers.address.model, sizes.model,
      buffers.address.config, sizes.config, buffers.address.tokenizer, sizes.tokenizer, available);
    if (error) throw formatError(parts, error);
  } finally {
    buffers.free();
  }
  const lm = new LanguageModel(module, parts.name, variant === 'model-relaxed' ? 'relaxed' : 'simd');
  report('ready', 1, 1);
  return lm;
}

export class LanguageModel {
  #module;
  #decoder = new TextDecoder();
  #pieces = new Map();
  #generating = false;

  constructor(module, name, build) {
    this.#module = module;
    const info = module.lmInfo();
    /** What kind of model this is: a decoder-only causal LM. */
    this.kind = 'causal-lm';
    /** Sizes of the model. */
    this.config = Object.freeze({
      dim: info.dim, hiddenDim: info.hiddenDim, layers: info.layers, heads: info.heads,
      kvHeads: info.kvHeads, headDim: info.headDim, vocabSize: info.vocabSize, seqLen: info.seqLen,
    });
    /** Where it came from and how its weights are laid out. */
    this.info = Object.freeze({
      name,
      description: name === 'stories260K'
        ? 'stories260K by Andrej Karpathy (llama2.c / tinyllamas), MIT: a 260K-parameter Llama-2-style model trained on TinyStories'
        : 'a Llama-2-style causal language model',
      sharedClassifier: info.sharedClassifier,
      rope: info.rope,
      build,
    });
    Object.freeze(this);
  }

  /** { ids: Int32Array (BOS first), tokens: string[] } of `text` (run.c's encode()). */
  tokenize(text) {
    const m = this.#module;
    const bytes = this.#textBytes('tokenize', text);
    return this.#withBuffers({ text: bytes.byteLength }, 'lm.tokenize(text)', (b) => {
      b.write('text', bytes);
      return this.#tokens(this.#check('tokenize', m.lmTokenize(b.address.text, bytes.byteLength)));
    });
  }

  /** The text of `ids` by run.c's rules (the first id is read as following BOS). */
  decode(ids) {
    const array = this.#ids('decode', ids, { allowEmpty: true });
    if (array.length === 0) return '';
    return this.#decode(array, BOS).text;
  }

  /**
   * The whole sequence in one causal pass: { ids, tokens, layers: [{ heads, attention }],
   * logits, next } for `input` (text, tokenised with BOS first, or ids).
   */
  run(input) {
    const ids = this.#input('run', input);
    const m = this.#module;
    const { heads, layers, vocabSize } = this.config;
    const n = ids.length;
    return this.#withBuffers({ ids: 4 * n }, 'lm.run()', (b) => {
      m.HEAP32.set(ids, b.address.ids / 4);
      const call = m.lmRun(b.address.ids, n, this.#available(), true);
      try {
        if (call.error) throw new RangeError(`lm.run(): ${call.error}`);
        const result = this.#tokens(call);
        result.layers = copyLayers(m, (l) => m.lmAttention(l), layers, heads, n);
        result.logits = m.HEAPF32.slice(call.logits / 4, call.logits / 4 + vocabSize);
        result.next = softmax(result.logits);
        return result;
      } finally {
        m.lmRelease();
      }
    });
  }

  /**
   * Writes up to `steps` new tokens after `prompt` (text or ids); see llama.d.ts for options and
   * the result. The KV cache is freed when the call returns or throws.
   */
  generate(prompt, options) {
    const o = check.options('options', options, ['steps', 'temperature', 'topP', 'seed', 'onToken', 'stop']);
    const steps = check.positiveInteger('options.steps', o.steps, 32);
    const temperature = numberOption('options.temperature', o.temperature, 1, (t) => t >= 0, 'a finite number ≥ 0');
    // A temperature below float32's range would become 0 (greedy with temperature-1 candidates):
    // the smallest normal float keeps it a sampling temperature, whose limit is the argmax.
    const wasmTemperature = temperature > 0 ? Math.max(temperature, 2 ** -126) : 0;
    const topP = numberOption('options.topP', o.topP, 1, (p) => p > 0 && p <= 1, 'a number in (0, 1]');
    const seed = seedOption(o.seed);
    if (o.onToken !== undefined && typeof o.onToken !== 'function')
      throw new TypeError(`options.onToken must be a function (got ${check.describe(o.onToken)})`);
    const stops = stopOption(o.stop);
    if (this.#generating)
      throw new Error('lm.generate() was called from its own onToken callback: one generation at a time per model');
    const promptIds = this.#input('generate', prompt);
    const m = this.#module;
    const { heads, layers, seqLen } = this.config;
    const p = promptIds.length;
    const result = { ids: null, tokens: [], text: '', prompt: null, stopped: 'steps', seed, steps: [] };
    const ids = [];
    const textDecoder = new TextDecoder();
    return this.#withBuffers({ prompt: 4 * p }, 'lm.generate()', (b) => {
      m.HEAP32.set(promptIds, b.address.prompt / 4);
      this.#generating = true;
      const [low, high] = typeof seed === 'bigint'
        ? [Number(seed & 0xffffffffn), Number(seed >> 32n)] : [seed % 2 ** 32, Math.floor(seed / 2 ** 32)];
      const begin = m.lmBegin(b.address.prompt, p, low, high, this.#available(), true);
      try {
        if (begin) throw new RangeError(`lm.generate(): ${begin}`);
        const { ids: shownIds, tokens: shown } = this.#decode(promptIds, -1, true);
        result.prompt = { ids: shownIds, tokens: shown };
        let previous = promptIds[p - 1];
        for (let s = 0; ; s++) {
          const draw = m.lmSample(wasmTemperature, topP, CANDIDATES);
          if (draw.error) throw new Error(`lm.generate(): ${draw.error}`);
          const { id, position } = draw;
          const candidateIds = m.HEAP32.slice(draw.candidates / 4, draw.candidates / 4 + draw.count);
          const candidateP = m.HEAPF32.slice(draw.probabilities / 4, draw.probabilities / 4 + draw.count);
          const attention = [];
          for (let l = 0; l < layers; l++) {
            const at = m.lmStepAttention(l) / 4;
            attention.push(m.HEAPF32.slice(at, at + heads * (position + 1)));
          }
          if (id === BOS || id === EOS) {
            result.stopped = 'eos';
            break;
          }
          const piece = this.#piece(id, previous);
          const candidates = Array.from(candidateIds, (cid, i) => ({ id: cid, token: this.#piece(cid, previous).token, p: candidateP[i] }));
          const step = { id, token: piece.token, position, attention, candidates };
          ids.push(id);
          result.tokens.push(step.token);
          result.steps.push(step);
          const before = result.text.length;
          result.text += textDecoder.decode(piece.bytes, { stream: true });
          previous = id;
          const wanted = o.onToken?.(step);
          // A stop string may end inside this token's text (' wanted' completes 'She w').
          const stopped = stops.some((t) => result.text.includes(t, Math.max(0, before - t.length + 1)));
          if (wanted === false || stopped) {
            result.stopped = 'stop';
            break;
          }
          if (s + 1 >= steps) break;
          if (position + 1 >= seqLen) {
            result.stopped = 'context';
            break;
          }
          const fed = m.lmFeed(id, true);
          if (fed) throw new Error(`lm.generate(): ${fed}`);
        }
        result.text += textDecoder.decode();
        result.ids = Int32Array.from(ids);
        return result;
      } finally {
        m.lmEnd();
        this.#generating = false;
      }
    });
  }

  // { token, bytes } of one id decoded after `previous`, cached: decoding depends only on the id
  // and on whether the previous token is BOS.
  #piece(id, previous) {
    const key = 2 * id + (previous === BOS ? 1 : 0);
    let piece = this.#pieces.get(key);
    if (!piece) {
      const { tokens, bytes } = this.#decode(new Int32Array([id]), previous);
      piece = { token: tokens[0], bytes };
      this.#pieces.set(key, piece);
    }
    return piece;
  }

  /** Bytes of this model's wasm heap in use and reserved: for leak checks. */
  memory() {
    return { inUse: this.#module.heapInUse(), heapSize: this.#module.HEAPU8.length };
  }

  #available() {
    return MAX_HEAP_BYTES - this.#module.heapInUse();
  }

  #withBuffers(sizes, what, body) {
    const b = new CallBuffers(this.#module, sizes, what);
    try {
      return body(b);
    } finally {
      b.free();
    }
  }

  #textBytes(method, text) {
    if (typeof text !== 'string')
      throw new TypeError(`lm.${method}(text): text must be a string (got ${check.describe(text)})`);
    if (text.length > MAX_LM_TEXT_LENGTH)
      throw new RangeError(`lm.${method}(text): text has ${text.length} characters, more than the ${MAX_LM_TEXT_LENGTH} accepted`);
    return utf8.encode(text);
  }

  // Text → ids (BOS first), or ids checked and copied into an Int32Array.
  #input(method, input) {
    if (typeof input === 'string') {
      const { ids } = this.tokenize(input);
      if (ids.length > this.config.seqLen)
        throw new RangeError(
          `lm.${method}(text): the text is ${ids.length} tokens long (BOS included), more than the ` +
          `model's context of ${this.config.seqLen} tokens`);
      return ids;
    }
    if (!Array.isArray(input) && !ArrayBuffer.isView(input))
      throw new TypeError(`lm.${method}(input): input must be a string or an array of token ids (got ${check.describe(input)})`);
    return this.#ids(method, input);
  }

  #ids(method, ids, { allowEmpty = false } = {}) {
    if (!Array.isArray(ids) && !(ArrayBuffer.isView(ids) && !(ids instanceof DataView)))
      throw new TypeError(`lm.${method}(ids): ids must be an array or typed array of token ids (got ${check.describe(ids)})`);
    const { vocabSize, seqLen } = this.config;
    if (ids.length === 0 && !allowEmpty) throw new RangeError(`lm.${method}(ids): ids is empty; the model needs at least one token`);
    if (method !== 'decode' && ids.length > seqLen)
      throw new RangeError(`lm.${method}(ids): ${ids.length} ids, more than the model's context of ${seqLen} tokens`);
    const out = new Int32Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (typeof id !== 'number' && typeof id !== 'bigint')
        throw new TypeError(`lm.${method}(ids): ids[${i}] must be a number (got ${check.describe(id)})`);
      if (!Number.isInteger(Number(id)) || id < 0 || id >= vocabSize)
        throw new RangeError(`lm.${method}(ids): ids[${i}] is ${id}; token ids are integers from 0 to ${vocabSize - 1}`);
      out[i] = Number(id);
    }
    return out;
  }

  // { ids, tokens, bytes, text } of `ids` decoded after `previous`.
  #decode(ids, previous, keepIds = false) {
    const m = this.#module;
    return this.#withBuffers({ ids: 4 * ids.length }, 'lm.decode()', (b) => {
      m.HEAP32.set(ids, b.address.ids / 4);
      const call = this.#check('decode', m.lmDecode(b.address.ids, ids.length, previous));
      const result = this.#tokens(call);
      if (!keepIds) delete result.ids;
      result.bytes = m.HEAPU8.slice(call.bytes, call.bytes + call.bytesSize);
      result.text = this.#decoder.decode(result.bytes);
      m.lmRelease();
      return result;
    });
  }

  #check(method, call) {
    if (call.error) throw new RangeError(`lm.${method}(): ${call.error}`);
    return call;
  }

  #tokens(call) {
    return readTokens(this.#module, call, call.count);
  }

}

/** softmax(logits) in float64, as a Float32Array of probabilities. */
function softmax(logits) {
  let max = -Infinity;
  for (const x of logits) max = Math.max(max, x);
  const out = new Float32Array(logits.length);
  let sum = 0;
  const e = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) sum += e[i] = Math.exp(logits[i] - max);
  for (let i = 0; i < logits.length; i++) out[i] = e[i] / sum;
  return out;
}

function numberOption(name, value, fallback, ok, what) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number (got ${check.describe(value)})`);
  if (!Number.isFinite(value) || !ok(value)) throw new RangeError(`${name} must be ${what} (got ${value})`);
  return value;
}

// A seed reproduces a sampled text; without one a random seed is drawn (and reported).
function seedOption(value) {
  if (value === undefined) {
    const words = new Uint32Array(2);
    if (globalThis.crypto?.getRandomValues) globalThis.crypto.getRandomValues(words);
    else words[0] = Math.floor(Math.random() * 2 ** 32);
    return words[0] + (words[1] & 0x1fffff) * 2 ** 32;
  }
  if (typeof value === 'bigint') {  // the generator's whole 64-bit state
    if (value < 0n || value >= 2n ** 64n)
      throw new RangeError(`options.seed must be from 0 to 2^64 − 1 as a bigint (got ${value})`);
    return value;
  }
  if (typeof value !== 'number') throw new TypeError(`options.seed must be a number or a bigint (got ${check.describe(value)})`);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`options.seed must be an integer from 0 to 2^53 − 1 (got ${value})`);
  return value;
}

function stopOption(value) {
  if (value === undefined) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((s) => typeof s !== 'string'))
    throw new TypeError(`options.stop must be a string or an array of strings (got ${check.describe(value)})`);
  if (list.some((s) => s === '')) throw new RangeError('options.stop must not contain an empty string');
  return list;
}
