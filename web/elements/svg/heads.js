// <attn-heads> as a standalone SVG document: one thumbnail per layer and head (embedded PNGs,
// see matrix-image.js), the chosen one outlined. No DOM.
import { css, hex } from '../lib/color.js';
import { headMatrix, maskMatrix } from '../lib/compute.js';
import { hatchDef, svgDocument, tag, text } from '../lib/export.js';
import { matrixImageSVG } from './matrix-image.js';

/** state: { layer, head } (the chosen thumbnail). */
export function headsSVG(result, theme, { layer = 0, head = 0 } = {}, { width: displayWidth } = {}) {
  const { n, layers, heads } = result, nK = result.nK ?? n;
  const size = 72, gap = 10, left = 64, top = 10;
  const masked = maskMatrix(result.masks, n, nK);
  // A non-square (cross-attention) thumbnail keeps its shape inside the size×size square.
  const w = nK >= n ? size : size * nK / n, hgt = n >= nK ? size : size * n / nK;
  const parts = [];
  for (let l = 0; l < layers; l++) {
    const y = top + l * (size + 26);
    parts.push(text({ x: 6, y: y + size / 2, 'font-size': 11, fill: hex(theme.muted) }, `Layer ${l + 1}`));
    for (let hd = 0; hd < heads; hd++) {
      const x = left + hd * (size + gap);
      const chosen = l === layer && hd === head;
      parts.push(matrixImageSVG({
        weights: headMatrix(result, l, hd), rows: n, cols: nK, masked, scale: theme.scale,
        x: x + (size - w) / 2, y: y + (size - hgt) / 2, width: w, height: hgt, target: size * 2, maxPixels: size * 2, id: `attn-cells-${l}-${hd}`,
      }),
      tag('rect', { x: x - 1, y: y - 1, width: size + 2, height: size + 2, fill: 'none', stroke: css(chosen ? theme.accent : theme.line), 'stroke-width': chosen ? 2 : 1 }),
      text({ x: x + size / 2, y: y + size + 14, 'text-anchor': 'middle', 'font-size': 11, fill: hex(theme.fg) }, `H${hd + 1}`));
    }
  }
  const defs = masked ? tag('defs', {}, hatchDef('attn-hatch', theme)) : '';
  return svgDocument({
    displayWidth, width: left + heads * (size + gap) + 6, height: top + layers * (size + 26) + 4, theme, body: defs + parts.join(''),
    title: `Attention of ${nK === n ? `${n} tokens` : `${n} query × ${nK} key tokens`}, ${layers} layer(s) × ${heads} head(s): ${result.tokens.join(' ').slice(0, 4000)}`,
  });
}
