// <attn-pipeline>: QKᵀ → ÷√d_k → mask → softmax → A → A·V. Importing this module registers it.
import { AttnElement, Step } from './lib/base.js';

export declare class AttnPipeline extends AttnElement {
  /** The matrix shown at each step (n×n, the output n×dV); masked scores are −Infinity. */
  readonly steps: Record<Step, Float32Array> | null;
}

declare global {
  interface HTMLElementTagNameMap { 'attn-pipeline': AttnPipeline; }
}
