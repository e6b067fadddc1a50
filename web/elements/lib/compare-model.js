// What <attn-compare> shows, DOM-free (shared by the canvas and the SVG export): the two
// matrices A and B picked from their results (layer and head per side), their difference when
// both have the same tokens, and the panels of each view.
import { quote } from './a11y.js';
import { colorPositions, largestWeight } from './color-scale.js';
import { headMatrix, maskMatrix } from './compute.js';
import { DataError } from './data.js';
import { difference, differenceScale, toUnit } from './difference.js';
import { shapeOf } from './filter.js';

export const VIEWS = ['side-by-side', 'difference', 'all'];

/** The `view` attribute: side-by-side (A | B), difference (A − B) or all (A | B | A − B). */
export function parseView(value) {
  const view = value === null || value === undefined ? 'side-by-side' : String(value).trim();
  if (!VIEWS.includes(view)) throw new RangeError(`view must be ${VIEWS.join(', ')} (got ${JSON.stringify(value)})`);
  return view;
}

const sameTokens = (x, y) => x.length === y.length && x.every((t, i) => t === y[i]);
const preview = (tokens) => `${tokens.length} tokens: ${tokens.slice(0, 6).map(quote).join(' ')}${tokens.length > 6 ? ' …' : ''}`;

/**
 * sides = { a: { layer, head, label }, b: { … } } (indices already inside each result);
 * `matrix(result, layer, head, side)` gives the matrix a side shows (default: one head's weights; the
 * element passes compute.js selectedMatrix for 'mean', 'max' and 'rollout').
 * Returns { a, b, diff: { values, max } | null, same, panels: [{ kind: 'a' | 'b' | 'difference',
 * title, values (what a cell stands for), unit (0…1 for the colour scale), scale, rows, cols,
 * queryTokens, keyTokens, masked }] }. The difference view with different tokens throws a DataError.
 * `colorScale` (color-scale.js) places A's and B's weights on the ramp; with 'max' both panels
 * share one top (the larger of the two), so equal colours mean equal weights.
 */
export function comparePanels(result, sides, view, theme, matrix = headMatrix, colorScale = 'linear') {
  const side = (key) => {
    const r = result[key], s = sides[key], shape = shapeOf(r);
    const values = matrix(r, s.layer, s.head, key);
    return { kind: key, title: s.label, values, unit: values, scale: theme.scale, rows: shape.nQ, cols: shape.nK,
      queryTokens: shape.queryTokens, keyTokens: shape.keyTokens, masked: maskMatrixOf(r, shape) };
  };
  const a = side('a'), b = side('b');
  if (colorScale !== 'linear') {
    const top = Math.max(largestWeight(a.values, a.masked), largestWeight(b.values, b.masked));
    for (const p of [a, b]) p.unit = colorPositions(colorScale, p.values, p.rows, p.cols, p.masked, { top });
    Object.assign(a, { top }); Object.assign(b, { top });
  }
  const same = a.rows === b.rows && a.cols === b.cols && sameTokens(a.queryTokens, b.queryTokens) && sameTokens(a.keyTokens, b.keyTokens);
  if (!same && view !== 'side-by-side')
    throw new DataError(`A and B have different tokens (A: ${preview(a.queryTokens)}; B: ${preview(b.queryTokens)}): ` +
      'the difference needs the same tokens (use view="side-by-side" to show them next to each other)');
  const diff = same ? difference(a.values, b.values) : null;
  const panels = view === 'difference' ? [] : [a, b];
  if (diff && view !== 'side-by-side') {
    const masked = a.masked && b.masked ? a.masked.map((m, c) => m & b.masked[c]) : null;
    panels.push({ ...a, kind: 'difference', title: `${sides.a.label} − ${sides.b.label}`, values: diff.values,
      unit: toUnit(diff.values, diff.max), scale: differenceScale(theme), masked });
  }
  return { a, b, diff, same, panels };
}

// Masked cells as 1s (rows × cols), or null.
const maskMatrixOf = (result, { nQ, nK }) => maskMatrix(result.masks, nQ, nK);
