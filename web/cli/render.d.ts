// Types for `attnlens/cli` (web/cli/render.js): rendering a figure in Node without a browser, as
// the `attnlens render` command does. Hand-written; checked by tests/types with tsc.
import type { AttnData, ColorScale, Mask, Scale, Step } from '../elements/lib/base.js';

export type Format = 'svg' | 'html' | 'png';

export interface RenderOptions {
  /** The figure's name: 'heatmap' (default), 'bars', 'heads', 'pipeline', … (see figureNames()). */
  figure?: string;
  /** 'svg' (default), 'html' (the standalone file of toHTML()) or 'png' (needs @resvg/resvg-js). */
  format?: Format;
  /** svg/png: default 'light'; html: default the reader's colour scheme. */
  theme?: 'light' | 'dark';
  /**
   * The figure's width in CSS pixels: svg/png, the picture's display width (the drawing scales
   * through its viewBox; PNG pixels = width × pixelRatio); html, the figure's width in the page.
   */
  width?: number | string;
  /** PNG pixels per SVG unit (default 2). */
  pixelRatio?: number | string;
  /** The HTML document's title. */
  title?: string;
  layer?: number | string;
  head?: number | string;
  /** A token index (−1: none, for the heatmap) or a token's text. */
  query?: number | string;
  step?: Step | number;
  scale?: Scale | string;
  temperature?: number | string;
  mask?: Mask | string;
  /** Tokens to leave out: texts and/or indices ("[CLS] [SEP]", ["[CLS]", 0]); each text must be a token's. */
  hide?: string | ReadonlyArray<string | number>;
  /** Renormalise the rows left after hiding. */
  renormalize?: boolean | 'true' | 'false' | '';
  /** How weights map to colours (as the attribute; default 'linear'). */
  'color-scale'?: ColorScale;
  /** The same as 'color-scale' (the property's name). */
  colorScale?: ColorScale;
  /** figure 'lines' only: the heads drawn ('all', [0, 2] or "0 2"). */
  heads?: 'all' | ReadonlyArray<number> | string;
  /** figure 'lines' only: the focused key (index or text). */
  key?: number | string;
  /** figure 'lines' only: lines lighter than this weight are not drawn, in [0, 1). */
  threshold?: number | string;
  /** figure 'text' only: 'to' (each token's weight from the selected one, default) or 'from'. */
  direction?: 'to' | 'from';
}

/** SVG or HTML text; PNG bytes. */
export function render(input: AttnData, options: RenderOptions & { format: 'png' }): Promise<Uint8Array>;
export function render(input: AttnData, options?: RenderOptions & { format?: 'svg' | 'html' }): Promise<string>;
export function render(input: AttnData, options?: RenderOptions): Promise<string | Uint8Array>;

/** The figures that can be rendered (found from web/elements/svg/). */
export function figureNames(): Promise<string[]>;

export declare const FORMATS: Format[];

/** A bad option (unknown figure or format, a state value out of range): a RangeError. */
export declare class OptionError extends RangeError {}
/** Bad data (the message names the field). */
export declare class DataError extends Error {}
