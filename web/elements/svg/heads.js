// <attn-heads> as a standalone SVG document: one thumbnail per layer and head (embedded PNGs,
// see matrix-image.js), the chosen one outlined. No DOM.
import { css, hex } from '../lib/color.js';
import { colorPositions } from '../lib/color-scale.js';
import { headMatrix, maskMatrix } from '../lib/compute.js';
import { hatchDef, svgDocument, tag, text } from '../lib/export.js';
import { matrixImageSVG } from './matrix-image.js';

/** Rollout work (2·n³ per layer after the first) up to which the grid draws its tile up front. */
export const EAGER_ROLLOUT_FLOPS = 2 ** 33;
/** Whether the rollout tile of `result` is cheap enough to draw before it is opened. */
export const eagerRollout = (result) => 2 * result.n ** 3 * (result.layers - 1) <= EAGER_ROLLOUT_FLOPS;

/**
 * state: { layer, head } (the chosen thumbnail), and `aggregate(layer, head)` → the nQ×nK matrix
 * of head 'mean' / 'max' of a layer or of layer 'rollout', or null (no such tile): the element
 * gives the engine's; without it only the heads are drawn.
 */
export function headsSVG(result, theme, { layer = 0, head = 0, aggregate = () => null, 'color-scale': colorScale = 'linear' } = {}, { width: displayWidth } = {}) {
  const { n, layers, heads } = result, nK = result.nK ?? n;
  const size = 72, gap = 10, left = 64, top = 10;
  const masked = maskMatrix(result.masks, n, nK);
  // A non-square (cross-attention) thumbnail keeps its shape inside the size×size square.
  const w = nK >= n ? size : size * nK / n, hgt = n >= nK ? size : size * n / nK;
  const parts = [];
  let columns = heads;
  const tile = (x, y, weights, chosen, label, id) => parts.push(matrixImageSVG({
    weights: colorPositions(colorScale, weights, n, nK, masked), rows: n, cols: nK, masked, scale: theme.scale,
    x: x + (size - w) / 2, y: y + (size - hgt) / 2, width: w, height: hgt, target: size * 2, maxPixels: size * 2, id,
  }),
  tag('rect', { x: x - 1, y: y - 1, width: size + 2, height: size + 2, fill: 'none', stroke: css(chosen ? theme.accent : theme.line), 'stroke-width': chosen ? 2 : 1 }),
  text({ x: x + size / 2, y: y + size + 14, 'text-anchor': 'middle', 'font-size': 11, fill: hex(theme.fg) }, label));
  const rowY = (l) => top + l * (size + 26);
  for (let l = 0; l < layers; l++) {
    const y = rowY(l);
    parts.push(text({ x: 6, y: y + size / 2, 'font-size': 11, fill: hex(theme.muted) }, `Layer ${l + 1}`));
    for (let hd = 0; hd < heads; hd++)
      tile(left + hd * (size + gap), y, headMatrix(result, l, hd), l === layer && hd === head, `H${hd + 1}`, `attn-cells-${l}-${hd}`);
    let at = heads;
    for (const mode of ['mean', 'max']) {
      const weights = aggregate(l, mode);
      if (!weights) continue;
      tile(left + at * (size + gap), y, weights, l === layer && head === mode, mode === 'mean' ? 'Mean' : 'Max', `attn-cells-${l}-${mode}`);
      columns = Math.max(columns, ++at);
    }
  }
  const rolled = aggregate('rollout', 'mean');
  if (rolled) {
    parts.push(text({ x: 6, y: rowY(layers) + size / 2, 'font-size': 11, fill: hex(theme.muted) }, 'All layers'));
    tile(left, rowY(layers), rolled, layer === 'rollout', 'Rollout', 'attn-cells-rollout');
  }
  const rows = layers + (rolled ? 1 : 0);
  const defs = masked ? tag('defs', {}, hatchDef('attn-hatch', theme)) : '';
  return svgDocument({
    displayWidth, width: left + columns * (size + gap) + 6, height: top + rows * (size + 26) + 4, theme, body: defs + parts.join(''),
    title: `Attention of ${nK === n ? `${n} tokens` : `${n} query × ${nK} key tokens`}, ${layers} layer(s) × ${heads} head(s): ${result.tokens.join(' ').slice(0, 4000)}`,
  });
}
