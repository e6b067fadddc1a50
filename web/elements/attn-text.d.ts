// <attn-text>: the tokens as flowing text, each tinted by its weight from the selected token.
// Importing this module registers it.
import { AttnElement } from './lib/base.js';

export type TextDirection = 'to' | 'from';

export declare class AttnText extends AttnElement {
  /**
   * 'to' (default): each token is tinted by the weight it receives from the selected token (the
   * selected query's row); 'from': by the weight it gives the selected token (its column).
   */
  get direction(): TextDirection;
  set direction(value: TextDirection | null);
  /** The true weight behind each token's tint for the selected token (masked ones are 0), or null. */
  readonly tints: Float32Array | null;
}

declare global {
  interface HTMLElementTagNameMap { 'attn-text': AttnText; }
}
