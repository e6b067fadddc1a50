// The model add-on, `loadModel()`: real pretrained models run by our C++ engine in the opt-in
// model module, offline. Imported on demand by lens.loadModel(), so that the default `attnlens`
// import stays small. It routes each source: the transformer language models (Hugging Face
// folders of GPT-2, BERT, DistilBERT and the Llama family; stories260K and other llama2.c
// checkpoints) go to language-model.js; the default source, Universal Sentence Encoder lite
// (Google, Apache-2.0), is loaded here (UseLiteModel).
//   const model = await lens.loadModel();            // USE-lite (Node: the installed model package)
//   const r = model.run('The cat sat on the mat.');  // tokens, ids, layers[l].attention, embedding
//   const lm = await lens.loadModel('stories260K');  // a causal LM: lm.run(), lm.generate()
import { CallBuffers, formatBytes } from '../engine/heap.js';
import { simdSupported } from '../engine/load.js';
import * as check from '../engine/validate.js';
import { cachedLoad, copyLayers, instantiateModel, loadOptions, moduleVariant, readTokens } from './loading.js';
import { ModelFormatError } from './pack.js';
import { cacheKey, modelBytes } from './source.js';
import { languageModelSourceKind, loadLanguageModel } from './language-model.js';

export { ModelFormatError };
export { LanguageModel, MAX_LM_TEXT_LENGTH } from './language-model.js';

/** Longest text accepted, in UTF-16 code units (the model reads at most 128 tokens anyway). */
export const MAX_TEXT_LENGTH = 1_000_000;

const cache = new Map();
const utf8 = new TextEncoder();

/**
 * Loads the model once per source (the default and URLs are cached; buffers are not).
 * `options.onProgress({ stage, loaded, total })` reports 'download' bytes, then 'initialise',
 * then 'ready'.
 */
export async function loadModel(source, options, engine) {
  // 'stories260K', a Hugging Face folder or files, { config, weights, tokenizer } or a llama2.c
  // checkpoint with { tokenizer }: a language model.
  const kind = await languageModelSourceKind(source, options);
  if (kind !== null) return loadLanguageModel(source, options, engine, kind);
  const { report } = loadOptions(options, ['onProgress']);
  const variant = moduleVariant(engine?.build);
  const key = cacheKey(source);
  return cachedLoad(cache, key === null ? null : `${variant}:${key}`, report, () => load(source, report, variant, engine));
}

async function load(source, report, variant, engine) {
  if (!simdSupported()) throw new Error('the model needs WebAssembly SIMD128, which this runtime lacks');
  const modulePromise = instantiateModel(variant, engine);
  modulePromise.catch(() => {});  // awaited below; avoid an unhandled rejection meanwhile
  const bytes = await modelBytes(source, (loaded, total) => report('download', loaded, total));
  report('initialise', 0, 1);
  const module = await modulePromise;
  const buffers = new CallBuffers(module, { file: bytes.byteLength }, `the ${formatBytes(bytes.byteLength)} model`);
  module.HEAPU8.set(bytes, buffers.address.file);
  const error = module.modelLoad(buffers.address.file, bytes.byteLength);
  if (error) {
    buffers.free();
    throw new ModelFormatError(error);
  }
  // The module now owns the file's bytes: the weights are read in place.
  const model = new UseLiteModel(module, variant === 'model-relaxed' ? 'relaxed' : 'simd');
  report('ready', 1, 1);
  return model;
}

export class UseLiteModel {
  #module;

  constructor(module, build) {
    this.#module = module;
    const info = module.modelInfo();
    /** What this model is: name, limits and sizes. */
    this.info = Object.freeze({
      name: 'use-lite',
      description: 'Universal Sentence Encoder lite (Google), a 2-layer transformer encoder; Apache-2.0',
      maxTokens: info.maxTokens,
      layers: info.layers,
      heads: info.heads,
      embeddingSize: info.embeddingSize,
      vocabSize: info.vocabSize,
      build,
    });
    Object.freeze(this);
  }

  /**
   * Tokenises and encodes `text`: { tokens, ids, layers: [{ heads, attention }], embedding,
   * clipped, totalTokens }. attention is [heads, n, n], row i = where token i looks.
   */
  run(text) {
    const call = this.#call('run', text, true);
    const m = this.#module;
    const { heads, embeddingSize, layers } = this.info;
    const n = call.tokens;
    const result = this.#tokens(call);
    result.layers = copyLayers(m, (l) => m.modelAttention(l), layers, heads, n);
    const at = (call.embedding >>> 0) / 4;
    result.embedding = m.HEAPF32.slice(at, at + embeddingSize);
    return result;
  }

  /** The tokenizer alone: { tokens, ids, clipped, totalTokens }. */
  tokenize(text) {
    return this.#tokens(this.#call('tokenize', text, false));
  }

  #call(method, text, forward) {
    if (typeof text !== 'string')
      throw new TypeError(`model.${method}(text): text must be a string (got ${check.describe(text)})`);
    if (text.length === 0)
      throw new RangeError(`model.${method}(text): text is empty; the model needs at least one token`);
    if (text.length > MAX_TEXT_LENGTH)
      throw new RangeError(
        `model.${method}(text): text has ${text.length} characters, more than the ` +
        `${MAX_TEXT_LENGTH} accepted (the model reads only its first ${this.info.maxTokens} tokens)`);
    const bytes = utf8.encode(text);
    // Scratch: the tokenizer's lattice (~48 bytes per byte of text) and one forward pass.
    const buffers = new CallBuffers(this.#module, { text: bytes.byteLength }, `model.${method}(text)`,
      48 * bytes.byteLength + (forward ? 8 << 20 : 0));
    try {
      buffers.write('text', bytes);
      const call = this.#module.modelCall(buffers.address.text, bytes.byteLength, forward);
      if (call.error) throw new RangeError(`model.${method}(text): ${call.error}`);
      return call;
    } finally {
      buffers.free();
    }
  }

  #tokens(call) {
    const { ids, tokens } = readTokens(this.#module, call, call.tokens);
    return { tokens, ids, clipped: call.clipped, totalTokens: call.total };
  }

}
