// Types shared by the attnlens figures. Hand-written; see docs/figures.md for the data format.
import type { Lens } from '../../attnlens.js';

/** A list of numbers, nested lists of numbers, or a typed array. */
export type Numbers = ArrayLike<number> | Numbers[];

interface SelfTokens {
  /** The tokens, in order (a string is split at whitespace). At most 4096 (a figure may show fewer). */
  tokens: string[] | string;
  queryTokens?: undefined;
  keyTokens?: undefined;
}

/** Cross-attention: the rows (queries, e.g. a decoder's tokens) and columns (keys, e.g. the encoder's). */
interface CrossTokens {
  /** Stands in for queryTokens when that is missing. */
  tokens?: string[] | string;
  queryTokens?: string[] | string;
  keyTokens: string[] | string;
}

type CommonData = (SelfTokens | CrossTokens) & {
  /** One entry per (key) token: 1 keeps the key, 0 marks padding. Used by mask="padding". */
  keyMask?: ArrayLike<number | boolean>;
  /** Default mask is causal (when the `mask` attribute is not set). */
  causal?: boolean;
};

/** Tokens with Q, K, V: the engine computes softmax(scale·QKᵀ + mask)·V. */
export type VectorData = CommonData & {
  /** [n][dK], [heads][n][dK], [n][heads·dK] (split per head), or flat [heads·n·dK] with dK. */
  Q: Numbers;
  K: Numbers;
  /** Like Q with width dV; when missing, K stands in (weights do not depend on V). */
  V?: Numbers;
  dK?: number;
  dV?: number;
  /** Default 1. */
  heads?: number;
};

/** Tokens with embeddings X and projections: the engine's multiHead (Q = X·W_Q + b_Q, …). */
export type ProjectionData = CommonData & {
  /** [n][dModel] (nQ rows for cross-attention). */
  X: Numbers;
  /** Cross-attention: [nK][dModel], the key/value rows (needs keyTokens). */
  X_KV?: Numbers;
  W_Q: Numbers;
  W_K: Numbers;
  W_V: Numbers;
  W_O?: Numbers;
  b_Q?: Numbers; b_K?: Numbers; b_V?: Numbers; b_O?: Numbers;
  /** Must divide dModel; default 1. */
  heads?: number;
};

/** Precomputed weights, e.g. PyTorch's output_attentions with the batch dimension removed. */
export type AttentionData = CommonData & {
  /** [layers][heads][nQ][nK], [heads][nQ][nK], [nQ][nK], or flat [heads·nQ·nK] with `heads`. Values in [0, 1]. */
  attention: Numbers;
  heads?: number;
};

/** A model run by the attnlens model add-on (when the build has it). */
export interface ModelData {
  model: string;
  text: string;
}

export type AttnData = VectorData | ProjectionData | AttentionData | ModelData;

export type Step = 'scores' | 'scale' | 'mask' | 'softmax' | 'weights' | 'output';
export type Mask = 'none' | 'causal' | 'padding' | 'causal padding';
export type Scale = 'auto' | 'none' | number;

/** A layer index, or 'rollout' (attention rollout over every layer). */
export type LayerChoice = number | 'rollout';
/** A head index, or the element-wise 'mean' / 'max' over the current layer's heads. */
export type HeadChoice = number | 'mean' | 'max';

export interface AttnState {
  layer: LayerChoice;
  head: HeadChoice;
  /** Query token index (−1: none, for the heatmap's pinned row). */
  query: number;
  step: Step;
  scale: Scale;
  temperature: number;
  mask: Mask;
  /** Tokens left out of the picture: texts and indices (see "Hiding tokens" in docs/figures.md). */
  hide: ReadonlyArray<string | number>;
  /** Whether the weights left after hiding are renormalised (each row sums to 1 again). */
  renormalize: boolean;
}

/** What `hide` removed (on every figure's result). */
export interface AttnHidden {
  /** Tokens hidden (for cross-attention: hidden queries plus hidden keys). */
  count: number;
  /** Original indices of the hidden queries and keys. */
  queries: number[];
  keys: number[];
  renormalized: boolean;
}

export interface AttnChangeDetail<K extends keyof AttnState = keyof AttnState> {
  name: K;
  value: AttnState[K];
  /** True when the reader changed it (click, key), false when script or an attribute did. */
  user: boolean;
}

export interface AttnErrorDetail {
  message: string;
  error: unknown;
}

export interface AttnMasks {
  causal: boolean;
  keyMask: Uint8Array | null;
  /** After hiding different tokens on each side: the original positions of the rows and columns shown (causal compares these). */
  queryPositions?: Int32Array;
  keyPositions?: Int32Array;
}

/** A bad attribute value the figure shows above its picture. */
export interface AttnAttributeError {
  name: string;
  message: string;
  error: Error;
}

export interface AttnResult {
  /** The query tokens (rows). */
  tokens: string[];
  /** = nQ. */
  n: number;
  nQ: number;
  nK: number;
  queryTokens: string[];
  /** The key tokens (columns); the same array as `tokens` for self-attention. */
  keyTokens: string[];
  layers: number;
  heads: number;
  masks: AttnMasks;
  /**
   * Per layer, [heads, nQ, nK] row-major. Computed when first read: the figure computes the head
   * it shows; reading `weights[layer]` computes that layer's other heads first.
   */
  weights: Float32Array[] | Float32Array;
  /** scale / temperature as used by the softmax; null for precomputed weights. */
  scale: number | null;
  /** What `hide` removed (count 0 when nothing). */
  hidden?: AttnHidden;
  /** For each remaining row and column, its index in the data as given (when tokens are hidden). */
  kept?: { queries: number[]; keys: number[] };
}

export interface AttnElementEventMap extends Omit<HTMLElementEventMap, 'error' | 'change'> {
  change: CustomEvent<AttnChangeDetail>;
  error: CustomEvent<AttnErrorDetail>;
  render: Event;
}

export declare class AttnElement extends HTMLElement {
  /** The data as assigned (null: read from src, a child JSON script, or attributes). */
  get data(): AttnData | null | undefined;
  set data(value: AttnData | null | undefined);
  /** A layer index, or 'rollout'. */
  layer: LayerChoice;
  /** A head index, or 'mean' / 'max' over the layer's heads. */
  head: HeadChoice;
  /** Set a token index, or a token's text (the first token with that text). */
  get query(): number;
  set query(value: number | string);
  step: Step;
  scale: Scale;
  temperature: number;
  mask: Mask;
  /** Tokens to leave out: texts and/or indices; a string is parsed like the attribute ("[CLS] [SEP]", "0 5", or a JSON list). */
  get hide(): ReadonlyArray<string | number>;
  set hide(value: ReadonlyArray<string | number> | string | null);
  /** Renormalise each row over the tokens left after hiding (default false). */
  renormalize: boolean;
  /** All of the state at once. */
  readonly state: AttnState;
  /** Resolves once everything asked so far is drawn: true, or false in the error state. */
  readonly updateComplete: Promise<boolean>;
  readonly lens: Lens | null;
  readonly tokens: string[] | null;
  readonly layers: number;
  readonly heads: number;
  /** The error message shown, or null. */
  readonly error: string | null;
  /** Bad attribute values said above the figure (which keeps its last good state). */
  readonly attributeErrors: AttnAttributeError[];
  readonly result: AttnResult | null;
  /** The current layer and head's nQ×nK weights (rows are queries), or the mean/max/rollout. */
  readonly weights: Float32Array | null;
  readonly effectiveScale: number | null;
  /** Whether cell (query i, key j) is masked out. */
  isMasked(i: number, j: number): boolean;
  /** The figure as a standalone SVG document; `width`: the size it shows at (it scales). */
  toSVG(options?: { width?: number }): string;
  /** The figure as a PNG (rasterised from the SVG; pixelRatio default 2). */
  toPNG(options?: { pixelRatio?: number }): Promise<Blob>;
  /**
   * The figure as one self-contained HTML file (engine, wasm, elements, data and the current
   * state inlined; no request at all): opens offline from file:// or any static host, interactive.
   */
  toHTML(options?: StandaloneOptions): Promise<string>;
  /** Redraw, e.g. after changing --attn-* custom properties from script. */
  redraw(): void;
  addEventListener<K extends keyof AttnElementEventMap>(type: K, listener: (this: this, ev: AttnElementEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
}

/** The engine every figure on the page shares (loaded on first use). */
export declare function loadEngine(): Promise<Lens>;
export declare const STEPS: readonly Step[];

/** Options of `toHTML()`. */
export interface StandaloneOptions {
  /** Force a theme; default: the figure's `theme` attribute, else the reader's colour scheme. */
  theme?: 'light' | 'dark';
  /** The document's <title> (default "attnlens: <element name>"). */
  title?: string;
  /** The figure's width in CSS pixels (at most the window's; default: the page's width). */
  width?: number;
}
