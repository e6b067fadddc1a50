// <attn-lines>: the two-column "head view" (queries left, keys right, a line per pair). Importing
// this module registers it.
import { AttnElement } from './lib/base.js';

export interface LinesFocus {
  side: 'query' | 'key';
  index: number;
}

export interface LinesLayout {
  nQ: number;
  nK: number;
  /** Row height (CSS pixels). */
  row: number;
  /** Whether token labels are drawn (rows of at least 9 px). */
  labels: boolean;
  /** Width of each label column. */
  label: number;
  /** Lines run from x0 to x1. */
  x0: number;
  x1: number;
  top: number;
  width: number;
  height: number;
}

export declare class AttnLines extends AttnElement {
  /** The heads drawn; set 'all', a list of indices, or null (the current `head`). Reflects to `heads`. */
  get selectedHeads(): number[];
  set selectedHeads(value: 'all' | number[] | string | null);
  /** The focused key (right column), −1 when none; set an index or a key's text. */
  get key(): number;
  set key(value: number | string);
  /** Lines with a smaller weight are not drawn (default 0.01, in [0, 1)). */
  threshold: number;
  /** The focused token, or null when every line is drawn. */
  readonly focused: LinesFocus | null;
  readonly layout: LinesLayout | null;
  /** The tokens the loupe lists while it is open (rows under 9 px), or null. */
  readonly magnifier: { side: 'query' | 'key'; first: number; count: number } | null;
  /** The spoken summary of a focused token (e.g. “it” (token 8 of 11) looks most at “cat” 0.59, …). */
  describe(focus?: LinesFocus | null): string;
  /** Drawing counters and the last timings in ms (allMs: every line; paintMs: one redraw). */
  readonly renderStats: { all: number; focus: number; lines: number; strokes: number; allMs: number; paintMs: number };
}

declare global {
  interface HTMLElementTagNameMap { 'attn-lines': AttnLines; }
}
