// <attn-generate>: a causal language model writes token by token; the figure shows where each new
// token looked. Importing this module registers it.
import type { AttnErrorDetail, ColorScale } from './lib/base.js';
import type { Candidate, GenerateResult, LanguageModel, LmRunResult } from '../model/language-model.js';

/** What the figure shows now. */
export interface GenerateFrame {
  /** The step shown (−1: the prompt only) and how many there are. */
  current: number;
  steps: number;
  layer: number;
  head: number | 'mean';
  /** Tokens shown (prompt and generated so far), the prompt's length (BOS included). */
  shown: number;
  promptLength: number;
  /** Index of the newest token in the text (−1: none) and its text. */
  newest: number;
  token: string | null;
  /** Where the newest token looked: weights over the tokens before it (null: none). */
  looked: Float32Array | null;
  candidates: Candidate[];
  chosen: number | null;
  /** Heatmap rows written so far, of `size` (every position the model read). */
  filledRows: number;
  size: number;
}

export interface GenerateChangeDetail {
  name: 'current' | 'layer' | 'head';
  value: number | 'mean';
  user: boolean;
}

export interface AttnGenerateEventMap extends Omit<HTMLElementEventMap, 'error' | 'change'> {
  change: CustomEvent<GenerateChangeDetail>;
  error: CustomEvent<AttnErrorDetail>;
  /** A generation finished and is drawn (before playback). */
  generate: CustomEvent<{ generation: GenerateResult; run: LmRunResult }>;
  render: Event;
}

export declare class AttnGenerate extends HTMLElement {
  /** Model name or URL for lens.loadModel (default 'stories260K'). */
  model: string;
  /** The text to continue (default 'Once upon a time'). */
  prompt: string;
  /** Tokens to write (default 32; fewer when the model ends the story or the context is full). */
  steps: number;
  /** Sampling temperature (default 1; 0: always the most likely token). */
  temperature: number;
  /** Nucleus sampling: keep the smallest set of tokens whose probability reaches topP (default 1: off). */
  topP: number;
  /** Seed of the sampler (default 1): the same seed writes the same text. */
  seed: number;
  layer: number;
  /** A head index or 'mean' (the mean over the layer's heads, the default). */
  head: number | 'mean';
  /** The `color-scale` attribute: how weights map to the text's tints and the matrix (default 'linear'). */
  colorScale: ColorScale;
  /** A model object to use instead of loading `model` (null: load `model`). */
  languageModel: LanguageModel | null;
  /** The step shown: −1 (the prompt only) … steps − 1. */
  current: number;
  readonly playing: boolean;
  readonly frame: GenerateFrame | null;
  readonly generation: GenerateResult | null;
  readonly promptRun: LmRunResult | null;
  /** Every token's text: the prompt's (BOS first), then the generated ones. */
  readonly tokens: string[] | null;
  readonly error: string | null;
  readonly layout: { gutter: number; cell: number; plot: number; n: number } | null;
  readonly updateComplete: Promise<boolean>;
  play(): void;
  pause(): void;
  toggle(): void;
  stepForward(): void;
  stepBack(): void;
  redraw(): void;
  /** The figure now as SVG; `width` sets the size it shows at. */
  toSVG(options?: { width?: number }): string;
  toPNG(options?: { pixelRatio?: number }): Promise<Blob>;
  addEventListener<K extends keyof AttnGenerateEventMap>(type: K, listener: (this: this, ev: AttnGenerateEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
}

declare global {
  interface HTMLElementTagNameMap { 'attn-generate': AttnGenerate; }
}
