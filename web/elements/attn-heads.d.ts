// <attn-heads>: a grid of small heatmaps, one per head and layer. Importing this module registers it.
import { AttnElement } from './lib/base.js';
import { AttnHeatmap } from './attn-heatmap.js';

export declare class AttnHeads extends AttnElement {
  /** The linked heatmap that shows the chosen head. */
  readonly heatmap: AttnHeatmap;
}

declare global {
  interface HTMLElementTagNameMap { 'attn-heads': AttnHeads; }
}
