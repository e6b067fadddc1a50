// <attn-heatmap> as a standalone SVG document, from the computed result, a theme and the state
// (no DOM: the same bytes in Node and in the browser). Up to 64 tokens every cell is a <rect>
// with its weight in data-weight; beyond, the cells are one embedded PNG (see matrix-image.js).
import { quote } from '../lib/a11y.js';
import { hex } from '../lib/color.js';
import { colorPositions, largestWeight, legendTicks } from '../lib/color-scale.js';
import { headMatrix, isAggregate, maskMatrix } from '../lib/compute.js';
import { clip, hatchDef, legendSVG, svgDocument, tag, text } from '../lib/export.js';
import { rowSumNote, selectionLabel } from '../lib/selection.js';
import { matrixImageSVG } from './matrix-image.js';

/**
 * state: { layer (index or 'rollout'), head (index, 'mean' or 'max'), query (−1: none), weights
 * (the nQ×nK matrix shown; needed for aggregates, which the engine computes) }. Cross-attention
 * results (nK ≠ nQ, keyTokens) give a non-square table.
 */
export function heatmapSVG(result, theme, { layer = 0, head = 0, query = -1, weights: shown, 'color-scale': colorScale = 'linear' } = {}, { width: displayWidth } = {}) {
  const { n, tokens } = result, nK = result.nK ?? n, keys = result.keyTokens ?? tokens;
  const weights = shown ?? headMatrix(result, layer, head);
  const masked = maskMatrix(result.masks, n, nK);
  const position = colorPositions(colorScale, weights, n, nK, masked);  // fills; data-weight keeps the weight
  const most = Math.max(n, nK);
  const labels = most <= 256;
  const cell = labels ? Math.max(4, Math.min(28, Math.floor(560 / most))) : 560 / most;
  const gutter = labels ? 90 : 10, plot = cell * nK, tall = cell * n;
  const font = { 'font-size': Math.min(11, Math.max(5, cell - 2)), fill: hex(theme.fg) };
  const parts = [tag('defs', {}, hatchDef('attn-hatch', theme))];
  if (labels) {
    tokens.forEach((t, i) => {
      const c = gutter + i * cell + cell / 2;
      parts.push(text({ x: gutter - 4, y: c, 'text-anchor': 'end', 'dominant-baseline': 'middle', ...font }, clip(t, 16)));
    });
    keys.forEach((t, j) => {
      const c = gutter + j * cell + cell / 2;
      parts.push(text({ x: c, y: gutter - 4, transform: `rotate(-90 ${c} ${gutter - 4})`, 'dominant-baseline': 'middle', ...font }, clip(t, 16)));
    });
  }
  if (n * nK <= 64 * 64) {
    for (let i = 0; i < n; i++)
      for (let j = 0; j < nK; j++) {
        const m = masked?.[i * nK + j];
        parts.push(tag('rect', {
          x: gutter + j * cell, y: gutter + i * cell, width: cell, height: cell,
          fill: m ? 'url(#attn-hatch)' : theme.scale.css(position[i * nK + j]),
          'data-weight': m ? 'masked' : weights[i * nK + j],
        }));
      }
  } else {
    parts.push(matrixImageSVG({
      weights: position, rows: n, cols: nK, masked, scale: theme.scale,
      x: gutter, y: gutter, width: plot, height: tall, target: Math.ceil(Math.max(plot, tall) * 2),
    }));
  }
  parts.push(tag('rect', { x: gutter, y: gutter, width: plot, height: tall, fill: 'none', stroke: hex(theme.line) }));
  let y = gutter + tall + 14;
  const ticks = colorScale === 'linear' ? null : legendTicks(colorScale, colorScale === 'max' ? largestWeight(weights, masked) : 1);
  parts.push(legendSVG(theme, gutter, y, { masked: masked !== null, ticks }));
  y += ticks ? 34 : 24;
  if (isAggregate(layer, head)) {
    parts.push(text({ x: gutter, y: y + 2, 'font-size': 11, fill: hex(theme.muted), 'data-aggregate': layer === 'rollout' ? 'rollout' : head },
      `${selectionLabel(result, layer, head)}: ${rowSumNote(layer, head)}`));
    y += 16;
  }
  if (query >= 0) {
    const row = weights.subarray(query * nK, (query + 1) * nK);
    parts.push(text({ x: gutter, y: y + 10, 'font-size': 11, fill: hex(theme.fg) }, `Row ${quote(clip(tokens[query], 40))} as bars`));
    const base = y + 70;
    for (let j = 0; j < nK; j++)
      parts.push(masked?.[query * nK + j]
        ? tag('rect', { x: gutter + j * cell, y: base - 50, width: Math.max(cell - 1, 0.5), height: 50, fill: 'url(#attn-hatch)' })
        : tag('rect', { x: gutter + j * cell, y: base - row[j] * 50, width: Math.max(cell - 1, 0.5), height: row[j] * 50, fill: hex(theme.accent) }));
    y = base + 8;
  }
  const shape = keys === tokens ? `${n} tokens` : `${n} query × ${nK} key tokens`;
  const what = result.layers > 1 || result.heads > 1 || isAggregate(layer, head) ? `, ${selectionLabel(result, layer, head)}` : '';
  const title = `Attention weights of ${shape}${what} (rows: queries, columns: keys)`;
  // Wide enough for the legend (and the row's caption, ~6.2 px a character at 11 px) when the plot is small.
  const caption = query >= 0 ? 6.2 * (clip(tokens[query], 40).length + 16) : 0;
  const width = Math.max(gutter + plot + 20, gutter + (masked ? 230 : 160), gutter + caption);
  return svgDocument({ width, height: y + 6, title, theme, body: parts.join(''), displayWidth });
}
