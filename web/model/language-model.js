// Transformer language models run by our C++ engine in the opt-in model module: GPT-2, BERT
// (masked LM or encoder), DistilBERT, the Llama family (Llama, Mistral, Qwen2) from their Hugging
// Face files, and llama2.c checkpoints (stories260K, bundled). Reached through lens.loadModel()
// (web/model/index.js routes here); see language-model.d.ts.
//   const lm = await lens.loadModel('stories260K');
//   const gpt2 = await lens.loadModel('models/gpt2/');            // a Hugging Face folder
//   gpt2.run('The cat sat');                 // ids, tokens, layers[l].attention, logits, next
//   gpt2.generate('The cat sat', { steps: 20, temperature: 0 });
//   bert.fillMask('Paris is the [MASK] of France.');
import { CallBuffers, formatBytes, heapLimit } from '../engine/heap.js';
import { simdSupported } from '../engine/load.js';
import * as check from '../engine/validate.js';
import { loadHfTokenizer } from './hf-tokenizer.js';
import { cachedLoad, copyLayers, instantiateModel, loadOptions, moduleVariant, readTokens } from './loading.js';
import { fileReader, folderParts, isBlob, isBytes, isFileSet, isModelFolder, isPlainObject, jsonReader } from './lm-files.js';
import { ModelFormatError } from './pack.js';
import { parseShardIndex } from './shards.js';

/** Longest text accepted by tokenize(), run() and generate(), in UTF-16 code units. */
export const MAX_LM_TEXT_LENGTH = 1_000_000;
/** Candidates reported per generated token. */
export const CANDIDATES = 10;

const BOS = 1;
const EOS = 2;
const utf8 = new TextEncoder();
const cache = new Map();

const SOURCE_HELP =
  "'stories260K', a Hugging Face model folder (a path in Node, a URL ending '/', a FileList or File[]), " +
  '{ config, weights, tokenizer, tokenizerConfig } (config.json, model.safetensors / its shards / ' +
  'model.safetensors.index.json, tokenizer.json), or a llama2.c checkpoint with { tokenizer }';

/** The bundled model's files (literal URLs, so that bundlers copy them). */
function bundledFiles() {
  return {
    model: new URL('../models/stories260K/stories260K.bin', import.meta.url),
    tokenizer: new URL('../models/stories260K/tok512.bin', import.meta.url),
  };
}

/**
 * What loadModel(source, options) asks for: 'folder' (a Hugging Face folder: files, a FileList, a
 * directory or a same-origin folder URL), 'other' (another language model source) or null (not a
 * language model: USE-lite). Probes a folder URL once (a HEAD request for its config.json).
 */
export async function languageModelSourceKind(source, options) {
  if (source === 'stories260K') return 'other';
  if (isPlainObject(options) && Object.hasOwn(options, 'tokenizer')) return 'other';
  if (isPlainObject(source)) return Object.hasOwn(source, 'config') || Object.hasOwn(source, 'tokenizer') ? 'other' : null;
  return isFileSet(source) || await isModelFolder(source) ? 'folder' : null;
}

/** True when loadModel(source, options) asks for a language model rather than USE-lite. */
export async function isLanguageModelSource(source, options) {
  return (await languageModelSourceKind(source, options)) !== null;
}

/**
 * Loads a language model. `options.onProgress({ stage, loaded, total, fraction })` reports
 * 'download' bytes, then 'initialise', then 'ready'. `kind`: languageModelSourceKind's answer
 * when the caller has it. The bundled model and URL/path sources are
 * cached (per model module); `engine.build` (lens.build) picks the module.
 */
export function loadLanguageModel(source, options, engine, kind) {
  const { o, report } = loadOptions(options, ['onProgress', 'tokenizer', 'config', 'context']);
  const context = o.context === undefined ? 0 : check.positiveInteger('options.context', o.context);
  const variant = moduleVariant(engine?.build);
  return describeSource(source, o, kind).then((parts) => {
    // One model per module: the threaded module follows the engine's thread count.
    const key = parts.key === null ? null : `${variant}:${engine?.threads ?? 0}:${context}:${parts.key}`;
    return cachedLoad(cache, key, report, () => load(parts, report, variant, context, engine));
  });
}

// What to read: { name, format: 'llama2c' | 'huggingface', model | weights (readers), config,
// tokenizer, tokenizerConfig, index, key }. `kind`, when languageModelSourceKind already told it,
// spares a folder URL a second probe.
async function describeSource(source, o, kind) {
  const noExtra = (what) => {
    if (o.tokenizer !== undefined || o.config !== undefined)
      throw new TypeError(`loadModel(${what}) takes no options.tokenizer or options.config: the ${what === "'stories260K'" ? 'bundled files are' : 'folder\'s files are'} used`);
  };
  if (source === 'stories260K') {
    noExtra("'stories260K'");
    const files = bundledFiles();
    return { name: 'stories260K', format: 'llama2c', model: fileReader(files.model, 'stories260K.bin'),
      tokenizer: fileReader(files.tokenizer, 'tok512.bin'), key: 'stories260K' };
  }
  if (kind === 'folder' || (kind === undefined && (isFileSet(source) || await isModelFolder(source)))) {
    noExtra('a folder');
    const f = await folderParts(source);
    return { name: 'huggingface', format: 'huggingface', ...f };
  }
  if (isPlainObject(source)) {
    for (const k of Object.keys(source))
      if (!['config', 'weights', 'tokenizer', 'tokenizerConfig'].includes(k))
        throw new TypeError(`loadModel source has an unknown key '${k}' (known: config, weights, tokenizer, tokenizerConfig)`);
    for (const k of ['config', 'weights', 'tokenizer'])
      if (source[k] === undefined || source[k] === null)
        throw new TypeError(`loadModel source.${k} is required (Hugging Face layout: config, weights, tokenizer)`);
    if (o.tokenizer !== undefined || o.config !== undefined)
      throw new TypeError('loadModel: give config and tokenizer in the source object or in the options, not both');
    const shards = Array.isArray(source.weights) ? source.weights : null;
    if (shards && shards.length === 0) throw new TypeError('loadModel source.weights is an empty list: give one or more safetensors shards');
    const weights = shards ? shards.map((w, i) => fileReader(w, `source.weights[${i}]`)) : fileReader(source.weights, 'source.weights');
    // Only a URL or a path can name an index (never String() the bytes: 500 MB of them would be a
    // string of two billion characters).
    const weightsName = source.weights instanceof URL ? source.weights.pathname : typeof source.weights === 'string' ? source.weights : '';
    const index = !shards && (isPlainObject(source.weights) || /\.index\.json$/i.test(weightsName));
    const parts = {
      name: 'huggingface', format: 'huggingface',
      config: jsonReader(source.config, 'source.config'),
      weights: index && isPlainObject(source.weights) ? jsonReader(source.weights, 'source.weights') : weights,
      index,
      tokenizer: jsonReader(source.tokenizer, 'source.tokenizer'),
      tokenizerConfig: source.tokenizerConfig === undefined || source.tokenizerConfig === null ? null
        : jsonReader(source.tokenizerConfig, 'source.tokenizerConfig'),
    };
    const all = [parts.config, ...(Array.isArray(parts.weights) ? parts.weights : [parts.weights]), parts.tokenizer, parts.tokenizerConfig].filter(Boolean);
    parts.key = all.every((r) => r.key !== null) ? `hf:${all.map((r) => r.key).join('|')}` : null;
    return parts;
  }
  if (o.tokenizer === undefined || o.tokenizer === null)
    throw new TypeError(`loadModel: a language model needs options.tokenizer (a llama2.c tokenizer file); source must be ${SOURCE_HELP}`);
  if (!(isBytes(source) || isBlob(source) || source instanceof URL || (typeof source === 'string' && source !== '')))
    throw new TypeError(`loadModel source must be ${SOURCE_HELP} (got ${check.describe(source)})`);
  const model = fileReader(source, 'source');
  const tokenizer = fileReader(o.tokenizer, 'options.tokenizer');
  if (o.config !== undefined) {
    const config = jsonReader(o.config, 'options.config');
    const key = model.key && tokenizer.key && config.key ? `hf:${config.key}|${model.key}|${tokenizer.key}` : null;
    return { name: 'huggingface', format: 'huggingface', config, weights: model, index: false, tokenizer, tokenizerConfig: null, key };
  }
  return { name: 'llama2.c', format: 'llama2c', model, tokenizer,
    key: model.key && tokenizer.key ? `lm:${model.key}|${tokenizer.key}` : null };
}

// A safetensors file starts with a little-endian u64 header length and then '{'.
function looksLikeSafetensors(bytes) {
  if (bytes.byteLength < 10) return false;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  return n >= 2 && n <= bytes.byteLength - 8 && bytes[8] === 0x7b;
}

// The tensor names of a safetensors header (looksLikeSafetensors(bytes) holds).
function headerNames(bytes, reader) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  let header;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  } catch (e) {
    throw formatError(reader, `the safetensors header is not valid JSON: ${e.message}`);
  }
  return Object.keys(header ?? {}).filter((k) => k !== '__metadata__');
}

const firstByte = (bytes) => {
  for (const b of bytes) if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09 && b !== 0xef && b !== 0xbb && b !== 0xbf) return b;
  return -1;
};

// Progress over every file: bytes so far, out of the sum of the sizes once every expected
// file's size is known (0 until then); loaded never decreases and ends equal to total.
function downloadProgress(report) {
  const loaded = new Map(), totals = new Map();
  const sum = (m) => [...m.values()].reduce((x, y) => x + (y ?? 0), 0);
  const tell = () => report('download', sum(loaded), [...totals.values()].includes(null) ? 0 : Math.max(sum(totals), sum(loaded)));
  return {
    expect(name) {
      if (!totals.has(name)) totals.set(name, null), loaded.set(name, 0);
    },
    skip(name) {  // an optional file that is not there
      totals.set(name, 0), loaded.set(name, 0);
    },
    of: (name) => (l, t) => {
      loaded.set(name, l);
      totals.set(name, t || null);
      tell();
    },
  };
}

const formatError = (reader, message) => new ModelFormatError(`loadModel: ${reader.name}: ${message}`);

// Copies `bytes` to the heap, calls `call(address, size)` and frees them again.
function withHeapBytes(module, bytes, what, call) {
  const buffers = new CallBuffers(module, { bytes: bytes.byteLength }, what);
  try {
    module.HEAPU8.set(bytes, buffers.address.bytes >>> 0);
    return call(buffers.address.bytes >>> 0, bytes.byteLength);
  } finally {
    buffers.free();
  }
}

const available = (module) => heapLimit(module) - module.heapInUse();

async function load(parts, report, variant, context, engine) {
  if (!simdSupported()) throw new Error('the model needs WebAssembly SIMD128, which this runtime lacks');
  const modulePromise = instantiateModel(variant, engine);
  modulePromise.catch(() => {});  // awaited below
  const progress = downloadProgress(report);
  const read = (reader) => (progress.expect(reader.name), reader.read(progress.of(reader.name)));
  for (const r of [parts.model, parts.config, parts.tokenizer, parts.tokenizerConfig,
    ...(Array.isArray(parts.weights) ? parts.weights : [parts.weights])]) if (r) progress.expect(r.name);
  let module, tokenizer = null;
  if (parts.format === 'llama2c') {
    const [model, tok] = await Promise.all([read(parts.model), read(parts.tokenizer)]);
    if (looksLikeSafetensors(model))
      throw formatError(parts.model, 'the model file is a safetensors file: pass its config.json too, as options.config');
    report('initialise', 0, 1);
    module = await modulePromise;
    const error = withHeapBytes(module, model, `the ${formatBytes(model.byteLength)} model file`,
      (at, size) => module.lmLoadLlama2c(at, size, available(module)));
    if (error) throw formatError(parts.model, error);
    const tokError = withHeapBytes(module, tok, 'the tokenizer file', (at, size) => module.lmSetTokenizer(at, size));
    if (tokError) throw formatError(parts.tokenizer, tokError);
  } else {
    const [config, tok, tokConfig] = await Promise.all([
      read(parts.config), read(parts.tokenizer),
      parts.tokenizerConfig ? read(parts.tokenizerConfig).catch((e) => {
        if (!parts.optionalTokenizerConfig) throw e;
        progress.skip(parts.tokenizerConfig.name);
        return null;
      }) : null,
    ]);
    const configText = new TextDecoder().decode(config);
    module = await modulePromise;
    let error = module.lmBeginHf(configText, context);
    if (error) throw formatError(parts.config, error);
    try {
      await loadShards(module, parts, read, progress);
    } catch (e) {
      module.lmAbortHf();
      throw e;
    }
    report('initialise', 0, 1);
    error = module.lmFinishHf();
    if (error) throw formatError(Array.isArray(parts.weights) ? { name: 'source.weights' } : parts.weights, error);
    const vocab = module.lmInfo().vocabSize;
    if (firstByte(tok) === 0x7b) {  // '{': a tokenizer.json
      tokenizer = await loadHfTokenizer({ tokenizer: tok, tokenizerConfig: tokConfig,
        names: { tokenizer: parts.tokenizer.name, tokenizerConfig: parts.tokenizerConfig?.name } });
      if (tokenizer.vocabSize > vocab)
        throw formatError(parts.tokenizer, `the tokenizer has ${tokenizer.vocabSize} token ids, more than the model's ` +
          `vocabulary of ${vocab} (config.json's vocab_size): they belong to different models`);
    } else {
      const tokError = withHeapBytes(module, tok, 'the tokenizer file', (at, size) => module.lmSetTokenizer(at, size));
      if (tokError) throw formatError(parts.tokenizer, tokError);
    }
  }
  const lm = new LanguageModel(module, parts.name, variant === 'model-relaxed' ? 'relaxed' : 'simd', tokenizer);
  report('ready', 1, 1);
  return lm;
}

// Each shard handed to the module tensor by tensor: the heap holds the weights and one tensor,
// never a whole shard. A File or a Node path is read by ranges and a URL streamed (nothing but
// one tensor in memory); bytes given are the caller's.
async function loadShards(module, parts, read, progress) {
  let shards = Array.isArray(parts.weights) ? parts.weights : [parts.weights];
  let index = null;
  if (parts.index) {
    index = parseShardIndex(await read(parts.weights), { name: parts.weights.name, available: parts.available });
    for (const n of index.files) progress.expect(n);
    shards = index.files.map((n) => {
      const r = parts.weights.sibling(n);
      if (!r) throw new TypeError(`loadModel: ${parts.weights.name} names the shard ${n}, which is not among the files ` +
        'given (an index given as bytes or an object cannot find its shards: give source.weights as a list of shards, or the folder)');
      return r;
    });
  }
  for (let i = 0; i < shards.length; i++) {
    const reader = shards[i];
    let file;
    try {
      file = await openShard(reader, read, progress);
    } catch (e) {
      // In a page a folder cannot be listed: without model.safetensors, try the shard index.
      if (i === 0 && !parts.index && parts.fallbackIndex) {
        progress.skip(reader.name);
        return loadShards(module, { ...parts, weights: parts.fallbackIndex, index: true, fallbackIndex: null }, read, progress);
      }
      throw e;
    }
    try {
      await addShard(module, reader, file, index?.checkShard.bind(index, index.files[i]));
    } finally {
      await file.close();
    }
  }
}

// A shard's bytes: { size, range(begin, end) → Promise<Uint8Array>, close() }.
async function openShard(reader, read, progress) {
  const ranges = await reader.open?.();
  if (!ranges) {
    const bytes = await read(reader);
    return { size: bytes.byteLength, range: async (begin, end) => bytes.subarray(begin, end), close() {} };
  }
  const report = progress.of(reader.name);
  let loaded = 0;
  report(0, ranges.size);
  return {
    size: ranges.size,
    async range(begin, end) {
      const bytes = await ranges.read(begin, end);
      report(Math.min((loaded += bytes.byteLength), ranges.size), ranges.size);  // the header is read twice
      return bytes;
    },
    close: () => ranges.close(),
  };
}

async function addShard(module, reader, file, checkNames) {
  let head = await file.range(0, Math.min(file.size, 16));
  if (firstByte(head) === 0x7b && !(head.byteLength >= 9 && head[8] === 0x7b))
    throw formatError(reader, 'this is a JSON file, not a safetensors file (a shard index goes in a folder beside its shards, or name it *.index.json)');
  if (head.byteLength >= 8) {
    const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
    const headerLength = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
    // Past the file or the module's cap (100 MiB) the module says what is wrong from the 16 bytes.
    if (headerLength <= Math.min(file.size - 8, MAX_SAFETENSORS_HEADER)) head = await file.range(0, 8 + headerLength);
  }
  // The shard holds exactly the tensors the index puts there (the module checks every size again).
  if (checkNames && looksLikeSafetensors(head)) checkNames(headerNames(head, reader));
  let error = withHeapBytes(module, head, 'the safetensors header',
    (at, size) => module.lmShardBegin(at, size, file.size, reader.name, available(module)));
  if (error) throw formatError(reader, error);
  for (let i = 0, count = module.lmShardTensors(); i < count; i++) {
    const bytes = await file.range(module.lmShardTensorBegin(i), module.lmShardTensorEnd(i));
    const at = module.lmShardTensorBuffer(i) >>> 0;
    if (!at) throw new RangeError(`loadModel: ${reader.name}: the module could not allocate ${formatBytes(bytes.byteLength)} for a tensor`);
    module.HEAPU8.set(bytes, at);  // HEAPU8 read after the call: the heap may have grown
    if ((error = module.lmShardAddTensor(i))) throw formatError(reader, error);
  }
}
const MAX_SAFETENSORS_HEADER = 100 * 2 ** 20;  // cpp/src/model/loader.cpp's kMaxSafetensorsHeader

export class LanguageModel {
  #module;
  #tokenizer;  // an HfTokenizer (tokenizer.json), or null: the module's llama2.c tokenizer
  #decoder = new TextDecoder('utf-8', { ignoreBOM: true });  // U+FEFF in text is content, not a BOM
  #pieces = new Map();
  #generating = false;

  constructor(module, name, build, tokenizer) {
    this.#module = module;
    this.#tokenizer = tokenizer;
    const info = module.lmInfo();
    /** 'causal-lm' (GPT-2, the Llama family), 'masked-lm' (BertForMaskedLM) or 'encoder' (BertModel). */
    this.kind = info.kind;
    /** Sizes of the model, whatever its config.json called them. */
    this.config = Object.freeze({
      architecture: info.architecture, modelType: info.modelType,
      dim: info.dim, hiddenDim: info.hiddenDim, layers: info.layers, heads: info.heads,
      kvHeads: info.kvHeads, headDim: info.headDim, vocabSize: info.vocabSize,
      context: info.seqLen, seqLen: info.seqLen, typeVocab: info.typeVocab,
    });
    /** Where it came from and how its weights are laid out. */
    this.info = Object.freeze({
      name,
      description: name === 'stories260K'
        ? 'stories260K by Andrej Karpathy (llama2.c / tinyllamas), MIT: a 260K-parameter Llama-2-style model trained on TinyStories'
        : `a ${info.architecture} model (${info.modelType})`,
      sharedClassifier: info.sharedClassifier,
      rope: info.rope,
      tokenizer: tokenizer ? tokenizer.kind : 'llama2.c',
      build,
      threads: module.threads(),
    });
    Object.freeze(this);
  }

  /**
   * { ids: Int32Array, tokens: string[] } of `text`, special tokens as the tokenizer adds them;
   * `options.pair`, a second text (BERT: `[CLS] text [SEP] pair [SEP]`, token types 0 then 1).
   */
  tokenize(text, options) {
    const bytes = this.#textBytes('tokenize', text);
    const pair = this.#pair('tokenize', options);
    if (this.#tokenizer) {
      const { ids, tokens, typeIds } = this.#encode('tokenize', text, pair);
      return this.kind === 'causal-lm' ? { ids, tokens } : { ids, tokens, typeIds };
    }
    const m = this.#module;
    return this.#withBuffers({ text: bytes.byteLength }, 'lm.tokenize(text)', (b) => {
      b.write('text', bytes);
      return this.#tokens(this.#check('tokenize', m.lmTokenize(b.address.text >>> 0, bytes.byteLength)));
    });
  }

  /** The text of `ids` (llama2.c: the first id is read as following BOS). */
  decode(ids) {
    const array = this.#ids('decode', ids, { allowEmpty: true });
    if (array.length === 0) return '';
    if (this.#tokenizer) return this.#tokenizer.decode(array);
    return this.#decode(array, BOS).text;
  }

  /**
   * The whole sequence in one pass: { ids, tokens, layers: [{ heads, attention }], logits, … }
   * for `input` (text, tokenised with the special tokens, or ids). Causal LMs: logits [vocab]
   * after the last token and next = softmax; masked LMs: logits [n·vocab]; encoders: hidden
   * [n·dim]. `options.pair`: a second text (token type 1); `options.typeIds` with ids.
   */
  run(input, options) {
    const { ids, typeIds } = this.#input('run', input, options);
    const m = this.#module;
    const { heads, layers, vocabSize, dim } = this.config;
    const n = ids.length;
    return this.#withBuffers({ ids: 4 * n, types: typeIds ? 4 * n : 0 }, 'lm.run()', (b) => {
      m.HEAP32.set(ids, (b.address.ids >>> 0) / 4);
      if (typeIds) m.HEAP32.set(typeIds, (b.address.types >>> 0) / 4);
      const call = m.lmRun(b.address.ids >>> 0, n, b.address.types >>> 0, this.#available(), true);
      try {
        if (call.error) throw new RangeError(`lm.run(): ${call.error}`);
        const result = this.#tokens(call);
        if (typeIds && this.kind !== 'causal-lm') result.typeIds = typeIds;
        result.layers = copyLayers(m, (l) => m.lmAttention(l), layers, heads, n);
        const at = (call.logits >>> 0) / 4;
        if (this.kind === 'causal-lm') {
          result.logits = m.HEAPF32.slice(at, at + vocabSize);
          result.next = softmax(result.logits);
        } else if (this.kind === 'masked-lm') {
          result.logits = m.HEAPF32.slice(at, at + n * vocabSize);
        } else {
          const h = (call.hidden >>> 0) / 4;
          result.hidden = m.HEAPF32.slice(h, h + n * dim);
        }
        return result;
      } finally {
        m.lmRelease();
      }
    });
  }

  /**
   * A masked LM's guesses for each mask token in `text`: [{ position, candidates: [{ id, token,
   * p }] }], the `top` (default 10) most probable first.
   */
  fillMask(text, options) {
    if (this.kind !== 'masked-lm')
      throw new TypeError(`lm.fillMask(): this model is a ${this.kind}, not a masked LM (BertForMaskedLM)`);
    const o = check.options('options', options, ['top', 'pair']);
    const top = Math.min(check.positiveInteger('options.top', o.top, 10), this.config.vocabSize);
    if (typeof text !== 'string') throw new TypeError(`lm.fillMask(text): text must be a string (got ${check.describe(text)})`);
    const mask = this.#tokenizer?.special.mask ?? null;
    if (mask === null) throw new TypeError('lm.fillMask(): the tokenizer has no mask token');
    const run = this.run(text, o.pair === undefined ? undefined : { pair: o.pair });
    const positions = [];
    run.ids.forEach((id, i) => id === mask && positions.push(i));
    if (positions.length === 0)
      throw new RangeError(`lm.fillMask(text): text has no mask token (${this.#tokenizer.token(mask)})`);
    const V = this.config.vocabSize;
    return positions.map((position) => {
      const p = softmax(run.logits.subarray(position * V, (position + 1) * V));
      const order = topK(p, top);
      return { position, candidates: order.map((id) => ({ id, token: this.#tokenizer.token(id), p: p[id] })) };
    });
  }

  /**
   * Writes up to `steps` new tokens after `prompt` (text or ids); see language-model.d.ts for
   * options and the result. The KV cache is freed when the call returns or throws.
   */
  generate(prompt, options) {
    if (this.kind !== 'causal-lm')
      throw new TypeError(`lm.generate(): this model is a ${this.kind}; only causal LMs (GPT-2, the Llama family) generate`);
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
    const { ids: promptIds } = this.#input('generate', prompt);
    const m = this.#module;
    const { heads, layers, seqLen } = this.config;
    const p = promptIds.length;
    const hf = this.#tokenizer;
    const stopIds = hf ? new Set([hf.special.eos].filter((id) => id !== null)) : new Set([BOS, EOS]);
    const result = { ids: null, tokens: [], text: '', prompt: null, stopped: 'steps', seed, steps: [] };
    const ids = [];
    const textDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
    return this.#withBuffers({ prompt: 4 * p }, 'lm.generate()', (b) => {
      m.HEAP32.set(promptIds, (b.address.prompt >>> 0) / 4);
      this.#generating = true;
      const [low, high] = typeof seed === 'bigint'
        ? [Number(seed & 0xffffffffn), Number(seed >> 32n)] : [seed % 2 ** 32, Math.floor(seed / 2 ** 32)];
      const begin = m.lmBegin(b.address.prompt >>> 0, p, low, high, this.#available(), true);
      try {
        if (begin) throw new RangeError(`lm.generate(): ${begin}`);
        if (hf) {
          result.prompt = { ids: promptIds, tokens: Array.from(promptIds, (id) => hf.token(id)) };
        } else {
          const { ids: shownIds, tokens: shown } = this.#decode(promptIds, -1, true);
          result.prompt = { ids: shownIds, tokens: shown };
        }
        let previous = promptIds[p - 1];
        for (let s = 0; ; s++) {
          const draw = m.lmSample(wasmTemperature, topP, CANDIDATES);
          if (draw.error) throw new Error(`lm.generate(): ${draw.error}`);
          const { id, position } = draw;
          const candidateIds = m.HEAP32.slice((draw.candidates >>> 0) / 4, (draw.candidates >>> 0) / 4 + draw.count);
          const candidateP = m.HEAPF32.slice((draw.probabilities >>> 0) / 4, (draw.probabilities >>> 0) / 4 + draw.count);
          const attention = [];
          for (let l = 0; l < layers; l++) {
            const at = (m.lmStepAttention(l) >>> 0) / 4;
            attention.push(m.HEAPF32.slice(at, at + heads * (position + 1)));
          }
          if (stopIds.has(id)) {
            result.stopped = 'eos';
            break;
          }
          const tokenOf = (cid) => (hf ? hf.token(cid) : this.#piece(cid, previous).token);
          const candidates = Array.from(candidateIds, (cid, i) => ({ id: cid, token: tokenOf(cid), p: candidateP[i] }));
          const step = { id, token: tokenOf(id), position, attention, candidates };
          ids.push(id);
          result.tokens.push(step.token);
          result.steps.push(step);
          const before = result.text.length;
          if (hf) result.text = hf.decode(ids);  // the decoder joins tokens (byte-level, Metaspace)
          else result.text += textDecoder.decode(this.#piece(id, previous).bytes, { stream: true });
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
        if (!hf) result.text += textDecoder.decode();
        result.ids = Int32Array.from(ids);
        return result;
      } finally {
        m.lmEnd();
        this.#generating = false;
      }
    });
  }

  // { token, bytes } of one id decoded after `previous` (llama2.c tokenizer), cached: decoding
  // depends only on the id and on whether the previous token is BOS.
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

  /**
   * Bytes the model holds: weights (at the file's precision), the KV cache of a generation in
   * progress, the working memory of the last run; and the module's heap in use and reserved.
   */
  memory() {
    const m = this.#module.lmMemory();
    return { weights: m.weights, kvCache: m.kvCache, scratch: m.scratch, inUse: this.#module.heapInUse(),
      heapSize: this.#module.HEAPU8.length };
  }

  #available() {
    return heapLimit(this.#module) - this.#module.heapInUse();
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

  #encode(method, text, pair) {
    const e = this.#tokenizer.encode(text, pair === undefined ? undefined : { pair });
    for (const id of e.ids)
      if (id >= this.config.vocabSize)
        throw new RangeError(`lm.${method}(text): the tokenizer gave id ${id}, outside the model's vocabulary of ${this.config.vocabSize}`);
    return e;
  }

  // Text → ids (special tokens as the tokenizer adds them) and type ids, or ids checked and
  // copied into an Int32Array.
  #input(method, input, options) {
    const o = check.options('options', options, ['pair', 'typeIds']);
    if (typeof input === 'string') {
      if (o.typeIds !== undefined)
        throw new TypeError(`lm.${method}(text, options): options.typeIds goes with ids; with text give options.pair`);
      this.#textBytes(method, input);
      const pair = this.#pair(method, o);
      const { ids, typeIds } = this.#tokenizer ? this.#encode(method, input, pair) : this.tokenize(input);
      if (ids.length > this.config.seqLen)
        throw new RangeError(
          `lm.${method}(text): the text is ${ids.length} tokens long (special tokens included), more than the ` +
          `model's context of ${this.config.seqLen} tokens`);
      if (ids.length === 0) throw new RangeError(`lm.${method}(text): the text gives no tokens; the model needs at least one`);
      return { ids, typeIds: this.config.typeVocab > 0 ? typeIds : null };
    }
    if (!Array.isArray(input) && !ArrayBuffer.isView(input))
      throw new TypeError(`lm.${method}(input): input must be a string or an array of token ids (got ${check.describe(input)})`);
    if (o.pair !== undefined)
      throw new TypeError(`lm.${method}(ids, options): options.pair goes with text; with ids give options.typeIds`);
    const ids = this.#ids(method, input);
    return { ids, typeIds: o.typeIds === undefined ? null : this.#typeIds(method, o.typeIds, ids.length) };
  }

  // options.pair: a second text, for models with token types (BERT); undefined when not given.
  #pair(method, options) {
    const o = check.options('options', options, method === 'tokenize' ? ['pair'] : ['pair', 'typeIds']);
    if (o.pair === undefined) return undefined;
    if (typeof o.pair !== 'string') throw new TypeError(`options.pair must be a string (got ${check.describe(o.pair)})`);
    if (!this.#tokenizer || this.config.typeVocab === 0)
      throw new TypeError(`lm.${method}(): options.pair needs a model with token types and a tokenizer.json (BERT); this is a ${this.config.architecture}`);
    this.#textBytes(method, o.pair);
    return o.pair;
  }

  // options.typeIds: one token type per id, each below the model's type vocabulary.
  #typeIds(method, typeIds, n) {
    if (this.config.typeVocab === 0)
      throw new TypeError(`lm.${method}(): options.typeIds needs a model with token types (BERT); this is a ${this.config.architecture}`);
    if (!Array.isArray(typeIds) && !(ArrayBuffer.isView(typeIds) && !(typeIds instanceof DataView)))
      throw new TypeError(`options.typeIds must be an array or typed array of token types (got ${check.describe(typeIds)})`);
    if (typeIds.length !== n)
      throw new RangeError(`options.typeIds has ${typeIds.length} entries; it needs one per id (${n})`);
    const out = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const t = typeIds[i];
      if (!Number.isInteger(t) || t < 0 || t >= this.config.typeVocab)
        throw new RangeError(`options.typeIds[${i}] is ${typeof t === 'number' ? t : check.describe(t)}: token types are integers from 0 to ${this.config.typeVocab - 1}`);
      out[i] = t;
    }
    return out;
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

  // { ids, tokens, bytes, text } of `ids` decoded after `previous` (llama2.c tokenizer).
  #decode(ids, previous, keepIds = false) {
    const m = this.#module;
    return this.#withBuffers({ ids: 4 * ids.length }, 'lm.decode()', (b) => {
      m.HEAP32.set(ids, (b.address.ids >>> 0) / 4);
      const call = this.#check('decode', m.lmDecode(b.address.ids >>> 0, ids.length, previous));
      const result = this.#tokens(call);
      if (!keepIds) delete result.ids;
      const at = call.bytes >>> 0;
      result.bytes = m.HEAPU8.slice(at, at + call.bytesSize);
      result.text = this.#decoder.decode(result.bytes);
      m.lmRelease();
      return result;
    });
  }

  #check(method, call) {
    if (call.error) throw new RangeError(`lm.${method}(): ${call.error}`);
    return call;
  }

  // ids and display tokens of a call: the llama2.c tokenizer's texts, or the tokenizer.json's.
  #tokens(call) {
    const result = readTokens(this.#module, call, call.count);
    if (this.#tokenizer) result.tokens = Array.from(result.ids, (id) => this.#tokenizer.token(id));
    return result;
  }
}

/** The `k` ids of the largest values, largest first (ties: lower id first). */
function topK(values, k) {
  const ids = Array.from(values.keys());
  ids.sort((a, b) => values[b] - values[a] || a - b);
  return ids.slice(0, k);
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
