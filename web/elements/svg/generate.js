// <attn-generate> as SVG text, without the DOM: the text so far (each earlier token tinted by
// the weight the newest token gave it), where the newest token looked most, the next-token
// candidates, and the causal heatmap of the rows written so far (a PNG built without a canvas).
import { fmt, quote, strongest } from '../lib/a11y.js';
import { colorPositions } from '../lib/color-scale.js';
import { hex } from '../lib/color.js';
import { clip, hatchDef, svgDocument, tag, text } from '../lib/export.js';
import { tokenLabel } from '../lib/tokens.js';
import { matrixImageSVG } from './matrix-image.js';

const WIDTH = 560, FONT = 12, CHAR = 7.2, LINE = 20, BAR = 140;

// Token boxes laid out in lines of at most WIDTH − 16 pixels (widths estimated from lengths).
function flow(labels, count) {
  const boxes = [];
  let x = 8, line = 0;
  for (let j = 0; j < count; j++) {
    const w = Math.max(8, labels[j].length * CHAR + 4);
    if (x + w > WIDTH - 8 && x > 8) { x = 8; line++; }
    boxes.push({ x, line, w });
    x += w + 2;
  }
  return { boxes, lines: line + 1 };
}

function bars(title, rows, x, y, theme) {
  const out = [text({ x, y: y + 12, 'font-size': FONT, 'font-weight': 600, fill: hex(theme.fg) }, title)];
  rows.forEach(({ label, value, bold }, i) => {
    const top = y + 20 + i * 18;
    out.push(
      text({ x: x + 78, y: top + 11, 'text-anchor': 'end', 'font-size': 11, fill: hex(theme.fg), 'font-weight': bold ? 700 : undefined }, clip(label, 12)),
      tag('rect', { x: x + 84, y: top + 2, width: BAR, height: 11, fill: hex(theme.low) }),
      tag('rect', { x: x + 84, y: top + 2, width: BAR * value, height: 11, fill: hex(theme.accent), 'data-value': value }),
      text({ x: x + 90 + BAR, y: top + 11, 'font-size': 11, fill: hex(theme.muted) }, fmt(value)));
  });
  return { markup: out.join(''), height: 24 + rows.length * 18 };
}

/**
 * `frame`: the element's `frame` plus { labels, matrix (size×size causal weights, every row),
 * model, where }. `theme`: readTheme() or themeFor() colours. `options.width`: the size to show
 * at (the drawing scales).
 */
export function generateSVG(frame, theme, { width } = {}) {
  const { labels, shown, newest, looked, candidates, chosen } = frame;
  const parts = [text({ x: 8, y: 18, 'font-size': 13, 'font-weight': 600, fill: hex(theme.fg) },
    newest >= 0 ? `${frame.model} writes ${quote(clip(labels[newest], 30))} (token ${frame.current + 1} of ${frame.steps}), ${frame.where}`
      : `${frame.model}: the prompt, before writing`)];
  const { boxes, lines } = flow(labels, shown);
  const top = 30, colorScale = frame.colorScale ?? 'linear';
  const tint = looked && colorPositions(colorScale, looked, 1, looked.length);  // as the element's text
  boxes.forEach(({ x, line, w }, j) => {
    const y = top + line * LINE, weight = looked && j < looked.length ? looked[j] : null;
    if (weight !== null) parts.push(tag('rect', { x, y, width: w, height: LINE - 3, rx: 3, fill: theme.scale.css(tint[j]), 'data-weight': weight }));
    if (j === newest) parts.push(tag('rect', { x: x - 1, y: y - 1, width: w + 2, height: LINE - 1, rx: 3, fill: 'none', stroke: hex(theme.accent), 'stroke-width': 2 }));
    parts.push(text({ x: x + 2, y: y + 13, 'font-size': FONT, fill: hex(weight !== null && tint[j] > 0.5 ? theme.bg : j < frame.promptLength ? theme.muted : theme.fg) }, labels[j]));
  });
  let y = top + lines * LINE + 8;
  if (looked) {
    const a = bars(`Where it looked most`, strongest(looked, 6).map(({ index, value }) => ({ label: labels[index], value })), 8, y, theme);
    const b = bars('Next-token candidates', candidates.map((c) => ({ label: tokenLabel(c.token), value: c.p, bold: c.id === chosen })), 8 + WIDTH / 2, y, theme);
    parts.push(a.markup, b.markup);
    y += Math.max(a.height, b.height) + 8;
  }
  const n = frame.size, filled = frame.filledRows;
  if (n > 0) {
    // The rows written so far, at their place in the n×n square; the future hatched.
    const size = Math.min(WIDTH - 16, 360);
    const masked = new Uint8Array(filled * n);
    for (let i = 0; i < filled; i++) for (let j = i + 1; j < n; j++) masked[i * n + j] = 1;
    parts.push(tag('defs', {}, hatchDef('attn-hatch', theme)));
    if (filled > 0)
      parts.push(matrixImageSVG({ weights: matrixPositions(frame.matrix, n, colorScale).subarray(0, filled * n), rows: filled, cols: n, masked,
        scale: theme.scale, x: 8, y, width: size, height: (size * filled) / n, target: size }));
    parts.push(tag('rect', { x: 8, y, width: size, height: size, fill: 'none', stroke: hex(theme.line) }));
    y += size + 8;
  }
  return svgDocument({ width: WIDTH, height: y, theme, body: parts.join(''), displayWidth: width,
    title: `${frame.model} generating text: where each new token looked (${frame.where})` });
}

// The n×n matrix on the color-scale, over every row with the causal mask (as the element draws it).
function matrixPositions(matrix, n, colorScale) {
  if (colorScale === 'linear') return matrix;
  const causal = new Uint8Array(n * n);
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) causal[i * n + j] = 1;
  return colorPositions(colorScale, matrix, n, n, causal);
}
