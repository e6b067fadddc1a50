// <attn-compare>: A and B side by side and their difference A − B. Importing this module registers it.
import { AttnData, AttnElement } from './lib/base.js';

export type CompareView = 'side-by-side' | 'difference' | 'all';

/** What `data` takes: one data for both sides (two heads or layers: set head-a/head-b), or a pair. */
export type CompareData = AttnData | { a: AttnData; b: AttnData };

export interface ComparePanelLayout {
  kind: 'a' | 'b' | 'difference';
  gutter: number;
  cell: number;
  rows: number;
  cols: number;
  labels: boolean;
}

export declare class AttnCompare extends AttnElement {
  /** As assigned (a pair reads back as the object given). */
  get data(): AttnData | null | undefined;
  set data(value: CompareData | null | undefined);
  /** Reflects to the `view` attribute. */
  view: CompareView;
  /** A's and B's matrices as drawn (nQ×nK, rows are queries). */
  readonly weightsA: Float32Array | null;
  readonly weightsB: Float32Array | null;
  /** A − B, cell by cell (null when the tokens differ). */
  readonly difference: Float32Array | null;
  /** The largest |A − B| (the ends of the difference legend). */
  readonly maxDifference: number | null;
  /** Where cell (i, j) of a panel is, in CSS pixels from the element's top-left corner. */
  cellBox(panel: 'a' | 'b' | 'difference', i: number, j: number): { x: number; y: number; width: number; height: number } | null;
  readonly layout: ComparePanelLayout[] | null;
  /** “it” → “cat”: A 0.4213 · B 0.1302 · A−B +0.2911 */
  describeCell(i: number, j: number): string;
}

declare global {
  interface HTMLElementTagNameMap { 'attn-compare': AttnCompare; }
}
