// <attn-text> as a standalone SVG document, DOM-free: the tokens as flowing text (token-text.js),
// each on a box tinted by its weight on the color-scale, the text colour chosen for ≥ 4.5:1 on
// the tint, the selected token outlined, and the legend with ticks.
import { quote } from '../lib/a11y.js';
import { colorPositions, largestWeight, legendTicks } from '../lib/color-scale.js';
import { hex } from '../lib/color.js';
import { maskMatrix } from '../lib/compute.js';
import { readableOn } from '../lib/contrast.js';
import { clip, hatchDef, legendSVG, svgDocument, tag, text } from '../lib/export.js';
import { selectionLabel } from '../lib/selection.js';
import { flowPieces, tokenPieces } from '../lib/token-text.js';

const WIDTH = 560, FONT = 13, CHAR = 7.4, LINE = 24, LEFT = 8;

export const DIRECTIONS = ['to', 'from'];

/** The `direction` attribute: 'to' (the default) or 'from'; RangeError otherwise. */
export function parseDirection(value) {
  const word = value === null || value === undefined ? 'to' : String(value).trim().toLowerCase();
  if (!DIRECTIONS.includes(word)) throw new RangeError(`direction must be "to" or "from" (got ${JSON.stringify(value)})`);
  return word;
}

/**
 * What the tokens are tinted by: { values (true weights), positions (0…1 on the scale), masked
 * (1 = masked) } per token, for the selected token `query`. 'to': row `query` (the weight each
 * token receives from the selected query); 'from': column `query` (the weight each token gives
 * the selected one). `weights`: the n×n matrix shown; `masked`: its n×n mask or null.
 */
export function textTints(weights, n, query, direction, colorScale, masked, positions = colorPositions(colorScale, weights, n, n, masked)) {
  const values = new Float32Array(n), shown = new Float32Array(n), mask = new Uint8Array(n);
  for (let t = 0; t < n; t++) {
    const c = direction === 'from' ? t * n + query : query * n + t;
    values[t] = weights[c];
    shown[t] = positions[c] > 0 ? Math.min(1, positions[c]) : 0;
    mask[t] = masked?.[c] ?? 0;
  }
  return { values, positions: shown, masked: mask };
}

/** state: { layer, head, query (≥ 0), direction, weights (the n×n matrix shown), 'color-scale' }. */
export function textSVG(result, theme, { layer = 0, head = 0, query = 0, direction = 'to', weights, 'color-scale': colorScale = 'linear' } = {}, { width: displayWidth } = {}) {
  const { n, tokens } = result;
  const masked = maskMatrix(result.masks, n, n);
  const tints = textTints(weights, n, query, direction, colorScale, masked);
  const pieces = tokenPieces(tokens);
  const { boxes, lines } = flowPieces(pieces, { width: WIDTH - 2 * LEFT, char: CHAR, left: LEFT });
  const top = 30;
  const parts = [tag('defs', {}, hatchDef('attn-hatch', theme)),
    text({ x: LEFT, y: 18, 'font-size': 12, fill: hex(theme.muted) },
      `${direction === 'from' ? 'Weight each token gives' : 'Weight each token receives from'} ${quote(clip(tokens[query], 30))} (token ${query + 1})` +
      `${result.layers > 1 || result.heads > 1 || typeof head === 'string' || typeof layer === 'string' ? `, ${selectionLabel(result, layer, head)}` : ''}`)];
  boxes.forEach(({ x, line, w }, t) => {
    const y = top + line * LINE;
    const m = tints.masked[t];
    const tint = theme.scale.rgb(tints.positions[t]);
    parts.push(tag('rect', { x, y, width: w, height: LINE - 4, rx: 3, fill: m ? 'url(#attn-hatch)' : hex(tint),
      'data-token': t, 'data-weight': m ? 'masked' : String(tints.values[t]) }));
    if (t === query) parts.push(tag('rect', { x: x - 1, y: y - 1, width: w + 2, height: LINE - 2, rx: 3, fill: 'none', stroke: hex(theme.accent), 'stroke-width': 2 }));
    parts.push(text({ x: x + 2, y: y + 14, 'font-size': FONT, fill: hex(m ? theme.fg : readableOn(tint, [theme.fg, theme.bg])) }, pieces[t].word));
  });
  let y = top + lines * LINE + 8;
  const ticks = legendTicks(colorScale, colorScale === 'max' ? largestWeight(weights, masked) : 1);
  parts.push(legendSVG(theme, LEFT, y, { masked: tints.masked.some(Boolean), ticks }));
  y += 34;
  return svgDocument({ width: WIDTH, height: y, theme, body: parts.join(''), displayWidth,
    title: `Attention on the text, ${direction === 'from' ? 'from' : 'to'} ${quote(clip(tokens[query], 30))}: ${pieces.map((p) => p.gap + p.word).join('').slice(0, 4000)}` });
}
