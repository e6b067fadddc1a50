// Types for the transformer language models (web/model/language-model.js): GPT-2, BERT,
// DistilBERT, the Llama family (Llama, Mistral, Qwen2) from Hugging Face files, and llama2.c
// checkpoints (stories260K, bundled), reached through `lens.loadModel()`. Hand-written.
import type { LoadProgress } from './index.js';

/** Bytes, a URL, a path (Node) / relative URL (browsers), or a File / Blob. */
export type FileSource = URL | string | ArrayBuffer | ArrayBufferView | Blob;

/** A Hugging Face model folder: a path or URL ending '/', or the files of one (`<input type="file"
 *  multiple>`, a dropped folder). It holds config.json, model.safetensors (or
 *  model.safetensors.index.json and its shards) and tokenizer.json (+ tokenizer_config.json). */
export type ModelFolder = `${string}/` | FileList | readonly File[];

export type LanguageModelSource =
  /** The bundled model (web/models/stories260K/), offline. */
  | 'stories260K'
  | ModelFolder
  /** A llama2.c checkpoint (.bin: legacy or version-1 export); give `options.tokenizer`. */
  | FileSource
  | HuggingFaceFiles;

export interface HuggingFaceFiles {
  /** config.json: parsed, as JSON text, bytes, a URL or a path. Its model_type picks the
   *  architecture: gpt2, bert, distilbert, llama, mistral or qwen2. */
  config: object | FileSource;
  /** model.safetensors (F32, F16 or BF16 tensors), a list of its shards, or the URL/path of
   *  model.safetensors.index.json (its shards are read from beside it, one at a time). */
  weights: FileSource | readonly FileSource[];
  /** tokenizer.json (an object, JSON text, bytes, URL or path), or a llama2.c tokenizer file. */
  tokenizer: object | FileSource;
  /** tokenizer_config.json, optional. */
  tokenizerConfig?: object | FileSource | null;
}

export interface LoadLanguageModelOptions {
  onProgress?: (progress: LoadProgress) => void;
  /** The llama2.c tokenizer file for a checkpoint given as the source. */
  tokenizer?: FileSource;
  /** config.json, when the source is a model.safetensors file. */
  config?: object | FileSource;
  /** Positions to keep (caps the config's context, and so the KV cache a generation allocates). */
  context?: number;
}

export interface LanguageModelConfig {
  /** config.json's first architecture (GPT2LMHeadModel, BertForMaskedLM, …) or 'llama2.c'. */
  readonly architecture: string;
  /** config.json's model_type ('llama' for llama2.c checkpoints). */
  readonly modelType: string;
  readonly dim: number;
  readonly hiddenDim: number;
  readonly layers: number;
  /** Query heads. */
  readonly heads: number;
  /** Key/value heads: query head h reads key/value head floor(h / (heads / kvHeads)). */
  readonly kvHeads: number;
  readonly headDim: number;
  readonly vocabSize: number;
  /** The context: at most this many tokens (special tokens included) per run(). */
  readonly context: number;
  /** The same as context (the name llama2.c uses). */
  readonly seqLen: number;
  /** BERT's token types (0: none). */
  readonly typeVocab: number;
}

export interface LanguageModelInfo {
  readonly name: string;
  readonly description: string;
  /** True when the LM head is the token embedding. */
  readonly sharedClassifier: boolean;
  /** RoPE pairing of the file's q/k rows: 'interleaved' (llama2.c) or 'half' (Hugging Face);
   *  'none' for learned positions (GPT-2, BERT). */
  readonly rope: 'interleaved' | 'half' | 'none';
  /** The tokenizer: 'llama2.c' (its binary file) or a tokenizer.json's model ('bpe', 'wordpiece', 'unigram'). */
  readonly tokenizer: 'llama2.c' | 'bpe' | 'wordpiece' | 'unigram';
  /** The model module that runs it: 'relaxed' (fused multiply-add) when the engine runs the
   *  relaxed build, else 'simd' (SIMD128). */
  readonly build: 'relaxed' | 'simd';
  /** Threads its products run on, the caller included: the engine's (lens.threads), 1 where
   *  threads cannot run. */
  readonly threads: number;
}

export interface LmTokenization {
  /** Token ids, special tokens as the tokenizer adds them (llama2.c: BOS (1) first; BERT:
   *  [CLS] … [SEP]; GPT-2: none). */
  ids: Int32Array;
  /** Text of each token: BOS '<s>', EOS '</s>', a byte piece <0xHH> the byte it stands for
   *  (decoded as UTF-8: a lone non-ASCII byte shows as U+FFFD), other pieces as stored (with
   *  their leading space). */
  tokens: string[];
  /** BERT's token type ids (masked LMs and encoders with a tokenizer.json). */
  typeIds?: Int32Array;
}

export interface LmLayerAttention {
  heads: number;
  /** Causal weights [heads, n, n], row-major: row i of head h is where token i looks (0 after i). */
  attention: Float32Array;
}

export interface LmRunResult extends LmTokenization {
  /** One entry per layer, first layer first (causal models: 0 above the diagonal). */
  layers: LmLayerAttention[];
  /** Causal LMs: logits [vocabSize] for the position after the last token. Masked LMs: logits
   *  [n·vocabSize], every position. Encoders: absent. */
  logits?: Float32Array;
  /** Causal LMs: softmax(logits), next-token probabilities. */
  next?: Float32Array;
  /** Encoders: the last layer's hidden states [n·dim]. */
  hidden?: Float32Array;
}

export interface FillMaskResult {
  /** The mask token's position in the tokenised text. */
  position: number;
  /** The most probable tokens there, most probable first. */
  candidates: Candidate[];
}

export interface GenerateOptions {
  /** New tokens to write, a positive integer (default 32). With the bare prompt (BOS), run.c's
   *  `-n steps` gives the same text. */
  steps?: number;
  /** 0 = greedy (argmax); else softmax(logits / temperature) is sampled (default 1). */
  temperature?: number;
  /** Nucleus sampling mass in (0, 1] (default 1 = off), as run.c's -p. */
  topP?: number;
  /** PRNG seed, an integer 0 … 2^53 − 1 (or a bigint 0 … 2^64 − 1, the generator's whole state):
   *  the same seed, prompt and options give the same text. The PRNG is run.c's xorshift64*
   *  (seed 0 is replaced by a fixed constant). Without a seed a random one is drawn and returned
   *  as `seed`. */
  seed?: number | bigint;
  /** Called once per new token, in order; returning false stops generation ('stop'). */
  onToken?: (step: GenerateStep) => boolean | void;
  /** Stop sequences: generation stops ('stop') at the token whose text completes one of them
   *  (the new text only, not the prompt); that token is kept whole, so `text` ends with the
   *  stop string or runs past it by the rest of that token. */
  stop?: string | string[];
}

export interface Candidate {
  id: number;
  token: string;
  /** Probability under the distribution the token was drawn from (softmax at the temperature,
   *  before top-p truncation; at temperature 0, softmax at temperature 1). */
  p: number;
}

export interface GenerateStep {
  id: number;
  token: string;
  /** The position whose forward pass produced this token (the token itself sits at position + 1). */
  position: number;
  /** Per layer, that position's attention row [heads, position + 1]. */
  attention: Float32Array[];
  /** The 10 most probable next tokens, most probable first. */
  candidates: Candidate[];
}

export interface GenerateResult {
  /** New ids only (no prompt, no final BOS/EOS). */
  ids: Int32Array;
  tokens: string[];
  /** The new text, decoded by run.c's rules. */
  text: string;
  prompt: LmTokenization;
  /** 'steps': all steps written; 'eos': the model produced EOS or BOS; 'context': the context
   *  (seqLen positions) is full; 'stop': a stop sequence or onToken returned false. */
  stopped: 'steps' | 'eos' | 'context' | 'stop';
  /** The seed used (as given: a number or a bigint). */
  seed: number | bigint;
  steps: GenerateStep[];
}

export interface LanguageModelMemory {
  /** Bytes of the weights, at the file's precision (16-bit matrices stay 16-bit). */
  weights: number;
  /** Bytes of the KV cache of a generation in progress (0 between calls). */
  kvCache: number;
  /** Working memory of the last run(). */
  scratch: number;
  /** The model module's heap: bytes in use and reserved. */
  inUse: number;
  heapSize: number;
}

export declare class LanguageModel {
  private constructor();
  /** 'causal-lm' (GPT-2, the Llama family, llama2.c), 'masked-lm' (BertForMaskedLM,
   *  DistilBertForMaskedLM) or 'encoder' (BertModel, DistilBertModel). */
  readonly kind: 'causal-lm' | 'masked-lm' | 'encoder';
  readonly config: LanguageModelConfig;
  readonly info: LanguageModelInfo;
  /** The tokenizer's ids and readable tokens (llama2.c: run.c's encode(), BOS first). */
  tokenize(text: string, options?: { pair?: string }): LmTokenization;
  /** The tokenizer's decoder (llama2.c: run.c's rules, the first id read as following BOS). */
  decode(ids: ArrayLike<number>): string;
  /** One pass over text (tokenised, ≤ context tokens) or ids: causal for causal LMs. Models with
   *  token types (BERT): `pair` is a second text (`[CLS] A [SEP] B [SEP]`, types 0 then 1), or
   *  `typeIds` one type per id. */
  run(input: string | ArrayLike<number>, options?: { pair?: string; typeIds?: ArrayLike<number> }): LmRunResult;
  /** Masked LMs: the candidates for every mask token ([MASK]) of `text` (and of `pair`). TypeError for other kinds. */
  fillMask(text: string, options?: { top?: number; pair?: string }): FillMaskResult[];
  /** Causal LMs only (TypeError otherwise). Stops at the tokenizer's EOS (llama2.c: BOS or EOS). */
  generate(prompt: string | ArrayLike<number>, options?: GenerateOptions): GenerateResult;
  memory(): LanguageModelMemory;
}

export declare const MAX_LM_TEXT_LENGTH: number;
export declare const CANDIDATES: number;
export declare function isLanguageModelSource(source: unknown, options?: unknown): Promise<boolean>;
/** 'folder' (a Hugging Face folder, its files or a folder URL), 'other' (another language-model
 *  source) or null (not a language model); a folder URL is probed with one HEAD request. */
export declare function languageModelSourceKind(source: unknown, options?: unknown): Promise<'folder' | 'other' | null>;
/** `engine.build` (lens.build) picks the model module, `engine.threads` (lens.threads) its threads;
 *  without them, the runtime's best build and its default threads. `kind`: languageModelSourceKind's
 *  answer, when the caller has it (a folder URL is then not probed again). */
export declare function loadLanguageModel(source: LanguageModelSource, options?: LoadLanguageModelOptions,
  engine?: { build?: 'relaxed' | 'simd' | 'scalar'; threads?: number }, kind?: 'folder' | 'other' | null): Promise<LanguageModel>;
