// What <attn-lines> and its SVG export share, DOM-free: the two-column layout, the heads to
// draw and their colours, which lines are drawn (weight ≥ threshold) and how (opacity and width
// from the weight, in buckets so the canvas strokes each bucket once), and the spoken summary.
import { fmt, quote, strongest } from './a11y.js';
import { colorPositions } from './color-scale.js';
import { headMatrix } from './compute.js';
import { rowSumNote } from './selection.js';
import { shapeOf } from './filter.js';

const MAX_ROW = 20, MAX_PLOT = 1200, LABEL_ROW = 9, MAX_LABEL = 120;
/** Opacity levels lines are grouped into (one stroke per head and level). */
export const BUCKETS = 32;
/** Lines under this weight are not drawn (they would be invisible). */
export const DEFAULT_THRESHOLD = 0.01;

/**
 * Where things go: queries in a column on the left (labels right-aligned, ending at `label`),
 * keys on the right (starting at `x1 + gap`), lines from x0 to x1. Rows are `row` px high (20 at
 * most; fewer for long inputs, which keep a plot at most 1200 px high); labels only when rows
 * are at least 9 px. `labelWidth` is the widest label's width in px.
 */
export function linesLayout({ nQ, nK, width, labelWidth }) {
  const n = Math.max(nQ, nK);
  const row = Math.min(MAX_ROW, MAX_PLOT / n);
  const labels = row >= LABEL_ROW;
  const font = labels ? Math.min(12, Math.max(8, Math.floor(row * 0.62))) : 0;
  const label = labels ? Math.round(Math.min(labelWidth + 14, MAX_LABEL, Math.max(40, width * 0.3))) : 12;
  const gap = 6;
  const span = Math.max(40, Math.min(320, width - 2 * label - 2 * gap));
  const x0 = label + gap, x1 = x0 + span, top = 2;
  return {
    nQ, nK, row, labels, font, label, gap, span, x0, x1, top,
    width: x1 + gap + label, height: top * 2 + n * row,
  };
}

/** The y of query row i (or key row j): the middle of its row. */
export const rowY = (layout, i) => layout.top + (i + 0.5) * layout.row;

/** Which side and row a point (x, y in layout pixels) is on, or null outside the rows. */
export function hitTest(layout, x, y) {
  const side = x < (layout.x0 + layout.x1) / 2 ? 'query' : 'key';
  const index = Math.floor((y - layout.top) / layout.row);
  const count = side === 'query' ? layout.nQ : layout.nK;
  return index >= 0 && index < count ? { side, index } : null;
}

/**
 * The `heads` attribute of <attn-lines> → 'all', a list of head indices, or null (absent: the
 * `head` state alone). "0 2 5", "0,2,5", "all", or a list of numbers.
 */
export function parseHeadList(value) {
  if (value === null || value === undefined) return null;
  if (value === 'all' || (typeof value === 'string' && value.trim().toLowerCase() === 'all')) return 'all';
  const list = typeof value === 'string' ? value.trim().split(/[\s,]+/).filter(Boolean).map(Number) : value;
  if (!Array.isArray(list) || list.length === 0 || !list.every((h) => Number.isInteger(h) && h >= 0))
    throw new RangeError(`heads must be "all" or head indices from 0, e.g. "0 2 5" (got ${JSON.stringify(value)})`);
  return Object.freeze([...new Set(list)].sort((a, b) => a - b));
}

/**
 * The heads to draw: the list (clamped to the data's heads), all of them, or the current head
 * (which may be 'mean' or 'max'). With layer 'rollout' the heads are already averaged: one.
 */
export function headsToDraw(list, result, head, layer) {
  if (layer === 'rollout') return ['rollout'];
  if (list === 'all') return Array.from({ length: result.heads }, (_, h) => h);
  if (list) {
    const inside = list.filter((h) => h < result.heads);
    return inside.length ? inside : [0];
  }
  return [head];
}

// Colour-blind-aware categorical colours (Okabe–Ito and Tableau hues), darker on light
// backgrounds and lighter on dark ones; the first is the theme's accent.
const LIGHT = ['#d55e00', '#009e73', '#cc79a7', '#e69f00', '#0072b2', '#7a4fb8', '#8c564b', '#17a2b8', '#c0392b', '#6b8e23', '#5c6570'];
const DARK = ['#ff9a5c', '#4fd8a6', '#f0a6d0', '#ffc94d', '#62b8ff', '#c39bff', '#d9a78f', '#4fd8e6', '#ff7a7a', '#b5d96b', '#b8bec6'];
const rgb = (hexText) => [1, 3, 5].map((i) => parseInt(hexText.slice(i, i + 2), 16));
const luminance = ([r, g, b]) => (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;

/** The colour of head `h` ([r, g, b]): the accent for the first (and for 'mean'/'max'), then the palette. */
export function headColor(theme, h) {
  if (typeof h !== 'number' || h === 0) return theme.accent;
  const palette = luminance(theme.bg) < 0.5 ? DARK : LIGHT;
  return rgb(palette[(h - 1) % palette.length]);
}

/** What a legend calls head `h`. */
export const headName = (h) => (typeof h === 'number' ? `Head ${h + 1}`
  : h === 'rollout' ? 'Attention rollout' : h === 'mean' ? 'Mean of the heads' : 'Max over the heads');

/** The legend's note on what a line's weight is (max rows do not sum to 1). */
export const weightNote = (layer, heads) => (heads.includes('max') ? rowSumNote(layer, 'max') : rowSumNote(layer, heads[0]));

/** A weight's opacity bucket (0 … BUCKETS − 1) and that bucket's opacity. */
export const bucketOf = (w) => Math.min(BUCKETS - 1, Math.floor(w * BUCKETS));
export const bucketAlpha = (b) => (b + 0.5) / BUCKETS;
/** Line width for an opacity, never wider than most of a row. */
export const lineWidth = (alpha, row) => Math.min(Math.max(row * 0.8, 0.75), 0.75 + 2.25 * alpha);

/**
 * The matrices to draw: [{ head, color, weights (nQ×nK) }], one per head in `heads`. `matrix`
 * (layer, head) gives a matrix; the default takes one head's weights (aggregates, 'mean', 'max'
 * and 'rollout', come from the engine: the element passes compute.js selectedMatrix).
 */
export function headLayers(result, layer, heads, theme, matrix = (l, h) => headMatrix(result, l, h), colorScale = 'linear') {
  const { nQ, nK } = shapeOf(result);
  return heads.map((head) => {
    const weights = matrix(layer, head);
    // How opaque each line is: its weight's place on the color-scale (color-scale.js).
    return { head, color: headColor(theme, head), weights, positions: colorPositions(colorScale, weights, nQ, nK) };
  });
}

/**
 * Calls `line(i, j, w, bucket)` for every drawn line: all pairs (focus null), the focused
 * query's row (focus.side 'query') or the focused key's column ('key'); weight ≥ threshold.
 */
export function eachLine(weights, nQ, nK, focus, threshold, line, positions = weights) {
  const min = Math.max(threshold, Number.MIN_VALUE);
  // The threshold is on the weight; the opacity bucket on its color-scale position.
  if (focus?.side === 'query') {
    const i = focus.index, row = i * nK;
    for (let j = 0; j < nK; j++) { const w = weights[row + j]; if (w >= min) line(i, j, w, bucketOf(positions[row + j])); }
  } else if (focus?.side === 'key') {
    const j = focus.index;
    for (let i = 0; i < nQ; i++) { const w = weights[i * nK + j]; if (w >= min) line(i, j, w, bucketOf(positions[i * nK + j])); }
  } else {
    for (let i = 0; i < nQ; i++) {
      const row = i * nK;
      for (let j = 0; j < nK; j++) { const w = weights[row + j]; if (w >= min) line(i, j, w, bucketOf(positions[row + j])); }
    }
  }
}

/** The focused token's weights for one head: its row (a query) or its column (a key). */
export function focusWeights(weights, nQ, nK, focus) {
  if (focus.side === 'query') return weights.subarray(focus.index * nK, (focus.index + 1) * nK);
  const column = new Float32Array(nQ);
  for (let i = 0; i < nQ; i++) column[i] = weights[i * nK + focus.index];
  return column;
}

/**
 * “it” (token 8 of 11) looks most at “cat” 0.59, “the” 0.12 and “mat” 0.08. For a key: “cat”
 * (key 2 of 11) is looked at most by “it” 0.59, … With several heads, one clause per head.
 */
export function describeFocus(result, layers, focus, isMasked = () => false) {
  const { nQ, nK, queryTokens, keyTokens } = shapeOf(result);
  const query = focus.side === 'query';
  const own = query ? queryTokens : keyTokens, other = query ? keyTokens : queryTokens;
  const who = `${quote(own[focus.index])} (${query ? 'token' : 'key'} ${focus.index + 1} of ${own.length})`;
  const clauses = layers.map(({ head, weights }) => {
    const values = focusWeights(weights, nQ, nK, focus);
    const masked = (x) => (query ? isMasked(focus.index, x) : isMasked(x, focus.index));
    const top = strongest(values, 3, masked).filter((t) => t.value > 0);
    const prefix = layers.length > 1 ? `${headName(head)} ` : '';
    if (top.length === 0) return `${prefix}${query ? 'looks at no token (every key is masked)' : 'no token looks at it'}`;
    const parts = top.map(({ index, value }) => `${quote(other[index])} ${fmt(value)}`);
    const list = parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}` : parts[0];
    return `${prefix}${query ? 'looks most at' : 'is looked at most by'} ${list}`;
  });
  return `${who}${layers.length > 1 ? ':' : ''} ${clauses.join('; ')}.`;
}
