// <attn-lines> as SVG, DOM-free: a pure function of the computed result, the theme and the
// figure's state. The same lines as the canvas, as vector paths: the focused token's only, or
// every line at or above the threshold. Each line carries data-head, data-query, data-key and
// data-weight (for up to 4000 lines; beyond that one path per head and opacity level).
import { hex } from '../lib/color.js';
import { clip, svgDocument, tag, text } from '../lib/export.js';
import { shapeOf } from '../lib/filter.js';
import {
  BUCKETS, DEFAULT_THRESHOLD, bucketAlpha, eachLine, focusWeights, headLayers, headName, headsToDraw, lineWidth, linesLayout, rowY,
} from '../lib/lines-layout.js';

const PER_LINE = 4000, CHARS = 16, WIDTH = 560;

/**
 * state = { layer, heads: head ids (default: `head`), focus: { side: 'query' | 'key', index } |
 * null (default: `query` when ≥ 0), threshold (default 0.01), weights (optional: the matrix of
 * each head in `heads`, as shown; needed for aggregates) }; options = { width }: the picture's
 * display width, as every figure's (default: its own, 568); the lines are laid out for it.
 */
export function linesSVG(result, theme, given, { width } = {}) {
  const state = {
    ...given, layer: given.layer ?? 0, heads: given.heads ?? headsToDraw(null, result, given.head ?? 0, given.layer),
    threshold: given.threshold ?? DEFAULT_THRESHOLD,
    focus: given.focus !== undefined ? given.focus : given.query >= 0 ? { side: 'query', index: given.query } : null,
  };
  const { nQ, nK, queryTokens, keyTokens } = shapeOf(result);
  const longest = Math.max(...queryTokens.map((t) => Math.min(t.length, CHARS)), ...keyTokens.map((t) => Math.min(t.length, CHARS)));
  const layout = linesLayout({ nQ, nK, width: width === undefined ? WIDTH : width - 8, labelWidth: longest * 6.6 });
  const layers = headLayers(result, state.layer, state.heads, theme, state.weights && ((l, h) => state.weights[state.heads.indexOf(h)]),
    state['color-scale'] ?? 'linear');
  const { focus, threshold } = state;
  const legendH = 22, top = legendH;
  const y = (i) => top + rowY(layout, i);
  const parts = [];

  // The legend: one swatch per head.
  let lx = 8;
  for (const { head, color } of layers) {
    parts.push(tag('rect', { x: lx, y: 6, width: 10, height: 10, fill: hex(color), 'data-legend-head': head }),
      text({ x: lx + 14, y: 15, 'font-size': 11, fill: hex(theme.muted) }, headName(head)));
    lx += 22 + headName(head).length * 6.2;
  }

  // Weight boxes beside the tokens the focused one looks at (or is looked at by).
  if (focus) {
    const other = focus.side === 'query' ? 'key' : 'query';
    const x = other === 'key' ? layout.x1 + layout.gap : 0;
    const stripe = layout.label / layers.length;
    for (const [k, { head, color, weights, positions }] of layers.entries()) {
      const values = focusWeights(weights, nQ, nK, focus), opacity = focusWeights(positions, nQ, nK, focus);
      values.forEach((w, t) => {
        if (w <= 0) return;
        parts.push(tag('rect', {
          x: x + k * stripe, y: y(t) - layout.row / 2, width: stripe, height: layout.row,
          fill: hex(color), 'fill-opacity': opacity[t], 'data-box-head': head, [`data-box-${other}`]: t, 'data-weight': String(w),
        }));
      });
    }
  }

  // The lines.
  let count = 0;
  for (const { weights } of layers) eachLine(weights, nQ, nK, focus, threshold, () => { count++; });
  for (const { head, color, weights, positions } of layers) {
    const stroke = hex(color);
    if (count <= PER_LINE) {
      eachLine(weights, nQ, nK, focus, threshold, (i, j, w, b) => {
        const alpha = bucketAlpha(b);
        parts.push(tag('path', {
          d: `M${layout.x0} ${round(y(i))}L${layout.x1} ${round(y(j))}`, stroke, 'stroke-opacity': alpha,
          'stroke-width': round(lineWidth(alpha, layout.row)), 'data-head': head, 'data-query': i, 'data-key': j, 'data-weight': String(w),
        }));
      }, positions);
    } else {
      const paths = Array.from({ length: BUCKETS }, () => []);
      eachLine(weights, nQ, nK, focus, threshold, (i, j, w, b) => paths[b].push(`M${layout.x0} ${round(y(i))}L${layout.x1} ${round(y(j))}`), positions);
      paths.forEach((d, b) => {
        if (d.length === 0) return;
        const alpha = bucketAlpha(b);
        parts.push(tag('path', { d: d.join(''), stroke, 'stroke-opacity': alpha, 'stroke-width': round(lineWidth(alpha, layout.row)), fill: 'none', 'data-head': head, 'data-lines': d.length }));
      });
    }
  }

  // Token labels (text, escaped), the focused one bold in the accent colour.
  if (layout.labels) {
    const font = { 'font-size': layout.font, 'dominant-baseline': 'middle' };
    const label = (tokens, side, x, anchor) => tokens.forEach((t, i) => {
      const focused = focus && focus.side === side && focus.index === i;
      parts.push(text({ x, y: y(i), 'text-anchor': anchor, fill: hex(focused ? theme.accent : theme.fg), 'font-weight': focused ? 700 : undefined, ...font }, clip(t, CHARS)));
    });
    label(queryTokens, 'query', layout.label - 4, 'end');
    label(keyTokens, 'key', layout.x1 + layout.gap + 4, 'start');
  }
  const what = focus ? `${focus.side === 'query' ? 'query' : 'key'} ${clip((focus.side === 'query' ? queryTokens : keyTokens)[focus.index], 40)}` : `${nQ} queries and ${nK} keys`;
  return svgDocument({
    width: layout.width + 8, height: top + layout.height + 6, theme, body: parts.join(''), displayWidth: width,
    title: `Attention lines of ${what} (${layers.map((l) => headName(l.head)).join(', ')})`,
  });
}

const round = (x) => Math.round(x * 100) / 100;
