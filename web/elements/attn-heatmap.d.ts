// <attn-heatmap>: the n×n weight table on canvas. Importing this module registers it.
import { AttnElement } from './lib/base.js';

export interface HeatmapLayout {
  /** Room for the token labels, left and top (CSS pixels). */
  gutter: number;
  /** One cell's size at zoom 1 (CSS pixels; fractional when cells are smaller than a pixel). */
  cell: number;
  /** = plotWidth. */
  plot: number;
  plotWidth: number;
  plotHeight: number;
  /** Whether labels are drawn (cells at the current zoom ≥ 8 px). */
  labels: boolean;
  /** = nQ. */
  n: number;
  nQ: number;
  nK: number;
}

/** The zoom window: first visible row and column and how many are visible (fractional). */
export interface HeatmapView {
  zoom: number;
  row: number;
  col: number;
  rows: number;
  cols: number;
  maxZoom: number;
}

export declare class AttnHeatmap extends AttnElement {
  /** Where cell (i, j) is at the current zoom, in CSS pixels from the element's top-left corner. */
  cellBox(i: number, j: number): { x: number; y: number; width: number; height: number } | null;
  readonly layout: HeatmapLayout | null;
  /** How many times the cells and the hover overlay were drawn. */
  readonly renderStats: { cells: number; overlay: number };
  readonly view: HeatmapView;
  /** Zoom to `zoom` (1 = the whole table, up to view.maxZoom), centred on (row, col) when given. */
  zoomTo(zoom: number, centre?: { row?: number; col?: number }): void;
  /** Multiply the zoom by `factor` around the crosshair. */
  zoomBy(factor: number): void;
  resetZoom(): void;
  addEventListener(type: 'zoom', listener: (this: this, ev: CustomEvent<HeatmapView>) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener<K extends keyof import('./lib/base.js').AttnElementEventMap>(type: K, listener: (this: this, ev: import('./lib/base.js').AttnElementEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
}

declare global {
  interface HTMLElementTagNameMap { 'attn-heatmap': AttnHeatmap; }
}
