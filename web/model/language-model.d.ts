// Types for the Llama-family causal language models (web/model/llama.js), reached through
// `lens.loadModel('stories260K')`. Hand-written.
import type { LoadProgress } from './index.js';

/** Bytes, a URL, or a path (Node) / relative URL (browsers). */
export type FileSource = URL | string | ArrayBuffer | ArrayBufferView;

export type LanguageModelSource =
  /** The bundled model (web/models/stories260K/), offline. */
  | 'stories260K'
  /** A llama2.c checkpoint (.bin: legacy or version-1 export); give `options.tokenizer`. */
  | FileSource
  /** Hugging Face layout (LlamaForCausalLM): config.json + model.safetensors + a llama2.c tokenizer file. */
  | HuggingFaceFiles;

export interface HuggingFaceFiles {
  /** config.json: parsed, as JSON text, bytes, a URL or a path. */
  config: object | FileSource;
  /** model.safetensors (F32, F16 or BF16 tensors). */
  weights: FileSource;
  /** A llama2.c tokenizer file (tokenizer.bin, tok512.bin) for the same vocabulary. */
  tokenizer: FileSource;
}

export interface LoadLanguageModelOptions {
  onProgress?: (progress: LoadProgress) => void;
  /** The llama2.c tokenizer file for a checkpoint given as the source. */
  tokenizer?: FileSource;
  /** config.json, when the source is a model.safetensors file. */
  config?: object | FileSource;
}

export interface LanguageModelConfig {
  readonly dim: number;
  readonly hiddenDim: number;
  readonly layers: number;
  /** Query heads. */
  readonly heads: number;
  /** Key/value heads: query head h reads key/value head floor(h / (heads / kvHeads)). */
  readonly kvHeads: number;
  readonly headDim: number;
  readonly vocabSize: number;
  /** The context: at most this many tokens (BOS included) per run(). */
  readonly seqLen: number;
}

export interface LanguageModelInfo {
  readonly name: string;
  readonly description: string;
  /** True when the LM head is the token embedding. */
  readonly sharedClassifier: boolean;
  /** RoPE pairing of the file's q/k rows: 'interleaved' (llama2.c) or 'half' (Hugging Face). */
  readonly rope: 'interleaved' | 'half';
  /** The model module that runs it: 'relaxed' (fused multiply-add) when the engine runs the
   *  relaxed build, else 'simd' (SIMD128). */
  readonly build: 'relaxed' | 'simd';
}

export interface LmTokenization {
  /** Token ids, BOS (1) first. */
  ids: Int32Array;
  /** Text of each token: BOS '<s>', EOS '</s>', a byte piece <0xHH> the byte it stands for
   *  (decoded as UTF-8: a lone non-ASCII byte shows as U+FFFD), other pieces as stored (with
   *  their leading space). */
  tokens: string[];
}

export interface LmLayerAttention {
  heads: number;
  /** Causal weights [heads, n, n], row-major: row i of head h is where token i looks (0 after i). */
  attention: Float32Array;
}

export interface LmRunResult extends LmTokenization {
  /** One entry per layer, first layer first. */
  layers: LmLayerAttention[];
  /** Logits [vocabSize] for the position after the last token. */
  logits: Float32Array;
  /** softmax(logits): next-token probabilities. */
  next: Float32Array;
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

export declare class LanguageModel {
  private constructor();
  readonly kind: 'causal-lm';
  readonly config: LanguageModelConfig;
  readonly info: LanguageModelInfo;
  /** run.c's encode(): BOS, a dummy-prefix space for non-empty text, merges by score. */
  tokenize(text: string): LmTokenization;
  /** run.c's decode rules; the first id is read as following BOS; BOS/EOS decode to ''. */
  decode(ids: ArrayLike<number>): string;
  /** One causal pass over text (tokenised, ≤ seqLen tokens) or ids. */
  run(input: string | ArrayLike<number>): LmRunResult;
  generate(prompt: string | ArrayLike<number>, options?: GenerateOptions): GenerateResult;
  /** This model's wasm heap: bytes in use and reserved. */
  memory(): { inUse: number; heapSize: number };
}

export declare const MAX_LM_TEXT_LENGTH: number;
export declare const CANDIDATES: number;
export declare function isLanguageModelSource(source: unknown, options?: unknown): boolean;
/** `engine.build` (lens.build) picks the model module; without it, the runtime's best. */
export declare function loadLanguageModel(source: LanguageModelSource, options?: LoadLanguageModelOptions,
  engine?: { build?: 'relaxed' | 'simd' | 'scalar' }): Promise<LanguageModel>;
