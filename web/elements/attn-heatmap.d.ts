// <attn-heatmap>: the n×n weight table on canvas. Importing this module registers it.
import { AttnElement } from './lib/base.js';

export interface HeatmapLayout {
  /** Room for the token labels, left and top (CSS pixels). */
  gutter: number;
  /** One cell's size (CSS pixels; fractional when cells are smaller than a pixel). */
  cell: number;
  plot: number;
  labels: boolean;
  n: number;
}

export declare class AttnHeatmap extends AttnElement {
  /** Where cell (i, j) is, in CSS pixels from the element's top-left corner. */
  cellBox(i: number, j: number): { x: number; y: number; width: number; height: number } | null;
  readonly layout: HeatmapLayout | null;
  /** How many times the cells and the hover overlay were drawn. */
  readonly renderStats: { cells: number; overlay: number };
}

declare global {
  interface HTMLElementTagNameMap { 'attn-heatmap': AttnHeatmap; }
}
