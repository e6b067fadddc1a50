// <attn-bars> as a standalone SVG document: the query's weight over every key as a bar. No DOM.
import { fmt, quote } from '../lib/a11y.js';
import { hex } from '../lib/color.js';
import { headMatrix, isAggregate, isMasked } from '../lib/compute.js';
import { clip, hatchDef, svgDocument, tag, text } from '../lib/export.js';
import { selectionLabel } from '../lib/selection.js';

/** state: { layer, head, query, row (the query's weights; needed for mean/max/rollout, which the engine computes) }. */
export function barsSVG(result, theme, { layer = 0, head = 0, query = 0, row: shown } = {}, { width: displayWidth } = {}) {
  const { tokens } = result, keys = result.keyTokens ?? tokens, nK = keys.length;
  const q = query, row = shown ?? headMatrix(result, layer, head).subarray(q * nK, (q + 1) * nK);
  const rowH = 20, label = 96, barW = 260, top = 30;
  const parts = [tag('defs', {}, hatchDef('attn-hatch', theme)),
    text({ x: 8, y: 18, 'font-size': 13, fill: hex(theme.fg), 'font-weight': 600 }, `Where ${quote(clip(tokens[q], 40))} looks`)];
  keys.forEach((t, j) => {
    const y = top + j * rowH, masked = isMasked(result.masks, q, j);
    parts.push(
      text({ x: label - 6, y: y + 13, 'text-anchor': 'end', 'font-size': 12, fill: hex(theme.fg), 'font-weight': keys === tokens && j === q ? 700 : undefined }, clip(t, 14)),
      tag('rect', { x: label, y: y + 3, width: barW, height: 14, fill: masked ? 'url(#attn-hatch)' : hex(theme.low) }),
      masked ? '' : tag('rect', { x: label, y: y + 3, width: barW * row[j], height: 14, fill: hex(theme.accent), 'data-weight': row[j] }),
      text({ x: label + barW + 6, y: y + 13, 'font-size': 11, fill: hex(theme.muted) }, masked ? 'masked' : fmt(row[j])));
  });
  return svgDocument({
    displayWidth, width: label + barW + 56, height: top + keys.length * rowH + 8, theme, body: parts.join(''),
    title: `Attention weights of ${clip(tokens[q], 40)} over ${keys.length} ${keys === tokens ? '' : 'key '}tokens` +
      (result.layers > 1 || result.heads > 1 || isAggregate(layer, head) ? ` (${selectionLabel(result, layer, head)})` : ''),
  });
}
