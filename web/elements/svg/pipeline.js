// <attn-pipeline> as a standalone SVG document: the six steps QKᵀ → ÷√d_k → mask → softmax → A →
// A·V as small matrices (numbers in the cells up to NUMBERS_UP_TO tokens). No DOM. The step
// titles, number format and colours live here and are shared with the element.
import { fmt } from '../lib/a11y.js';
import { css, hex, signedScale, textOn } from '../lib/color.js';
import { colorPositions } from '../lib/color-scale.js';
import { isMasked } from '../lib/compute.js';
import { clip, hatchDef, svgDocument, tag, text } from '../lib/export.js';
import { STEPS } from '../lib/state.js';

export const TITLES = { scores: 'QKᵀ', scale: '÷√d_k', mask: 'mask', softmax: 'softmax', weights: 'A', output: 'A·V' };
export const NUMBERS_UP_TO = 10;  // tokens; more and the cells show colour only
export const MASKED_STEPS = new Set(['mask', 'softmax', 'weights']);  // where masked cells are hatched

export const num = (x) => (!Number.isFinite(x) ? (x > 0 ? '∞' : '−∞') : Math.abs(x) >= 1000 ? x.toExponential(1) : x.toFixed(2));

/** The matrix shown at each step: { scores, scale, mask, softmax, weights, output }. */
export const pipelineSteps = (r) => ({ scores: r.scores, scale: r.scaled, mask: r.masked, softmax: r.exp, weights: r.weights, output: r.output });

/**
 * The colour of a value at `step` as (value, cell index) → rgb: the weight scale for
 * probabilities (through `colorScale`, color-scale.js; rows of `cols`), else diverging around 0.
 */
export function stepColour(theme, step, values, colorScale = 'linear', cols = 1) {
  if (step === 'softmax' || step === 'weights') {
    if (colorScale === 'linear') return (x) => theme.scale.rgb(x);
    const position = colorPositions(colorScale, values, values.length / cols, cols);
    return (x, c) => theme.scale.rgb(position[c]);
  }
  let max = 0;
  for (const x of values) if (Number.isFinite(x)) max = Math.max(max, Math.abs(x));
  return signedScale(theme.negative, theme.low, theme.high, max).rgb;
}

/** state: { query, mask } (the mask's name for the title). */
export function pipelineSVG(result, theme, { query = 0, mask = 'none', 'color-scale': colorScale = 'linear' } = {}, { width: displayWidth } = {}) {
  const { tokens, n, dV } = result;
  const steps = pipelineSteps(result), numbers = n <= NUMBERS_UP_TO;
  const cell = numbers ? 30 : Math.max(6, Math.floor(200 / n)), label = 72, gap = 24;
  const colChars = Math.max(1, Math.floor(cell / 7.5));
  const blockW = label + cell * Math.max(n + 1, dV), blockH = 34 + cell * n + 10;
  const parts = [tag('defs', {}, hatchDef('attn-hatch', theme))];
  STEPS.forEach((step, s) => {
    const x0 = 8 + (s % 3) * (blockW + gap), y0 = 8 + Math.floor(s / 3) * (blockH + gap);
    const values = steps[step], cols = step === 'output' ? dV : n;
    const colour = stepColour(theme, step, values, colorScale, cols);
    parts.push(text({ x: x0, y: y0 + 12, 'font-size': 12, 'font-weight': 600, fill: hex(theme.fg) }, `${s + 1}. ${TITLES[step]}`));
    tokens.forEach((t, i) => {
      const y = y0 + 30 + i * cell;
      parts.push(text({ x: x0 + label - 4, y: y + cell / 2 + 4, 'text-anchor': 'end', 'font-size': 10, fill: hex(theme.muted), 'font-weight': i === query ? 700 : undefined }, clip(t, 8)));
      for (let j = 0; j < cols; j++) {
        const v = values[i * cols + j];
        const hatched = v === -Infinity || (MASKED_STEPS.has(step) && isMasked(result.masks, i, j));
        const fill = hatched ? 'url(#attn-hatch)' : css(colour(v, i * cols + j));
        parts.push(tag('rect', { x: x0 + label + j * cell, y, width: cell - 1, height: cell - 1, fill }));
        if (numbers) parts.push(text({ x: x0 + label + j * cell + cell / 2, y: y + cell / 2 + 3, 'text-anchor': 'middle', 'font-size': 8, fill: hatched ? hex(theme.fg) : textOn(colour(v, i * cols + j)) }, num(v)));
      }
    });
    if (numbers) for (let j = 0; j < cols; j++)
      parts.push(text({ x: x0 + label + j * cell + cell / 2, y: y0 + 26, 'text-anchor': 'middle', 'font-size': 9, fill: hex(theme.muted) }, step === 'output' ? String(j + 1) : clip(tokens[j], colChars)));
  });
  return svgDocument({
    displayWidth, width: 16 + 3 * blockW + 2 * gap, height: 16 + 2 * blockH + gap, theme, body: parts.join(''),
    title: `Attention step by step for ${n} tokens (d_k = ${result.dK}, scale ${fmt(result.scale, 4)}, mask ${mask}): ${tokens.join(' ')}`,
  });
}
