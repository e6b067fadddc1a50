// <attn-compare> as a standalone SVG document, DOM-free: each panel of the view (A, B, A − B) as
// a table of cells (a <rect> per cell with data-value up to 64 tokens, an embedded PNG beyond),
// token labels as text, and the legends: 0 … 1 for weights, −max … 0 … +max for the difference.
import { hex } from '../lib/color.js';
import { legendTicks } from '../lib/color-scale.js';
import { comparePanels } from '../lib/compare-model.js';
import { signed } from '../lib/difference.js';
import { clip, hatchDef, svgDocument, tag, text } from '../lib/export.js';
import { matrixImageSVG } from './matrix-image.js';

const GAP = 24, TITLE = 18;

/**
 * state = { view, sides: { a: { layer, head, label }, b: { … } }, weights (optional: { a, b }, the
 * matrices shown; needed for aggregates) }.
 */
export function compareSVG(result, theme, { view, sides, weights, 'color-scale': colorScale = 'linear' }) {
  const { panels, diff } = comparePanels(result, sides, view, theme, weights && ((r, l, h, side) => weights[side]), colorScale);
  const longest = Math.max(...panels.map((p) => Math.max(p.rows, p.cols)));
  const labels = longest <= 64;
  const cell = labels ? Math.max(6, Math.min(24, Math.floor(360 / longest))) : 360 / longest;
  const gutter = labels ? 80 : 8;
  const font = { 'font-size': Math.min(11, Math.max(6, cell - 2)), fill: hex(theme.fg), 'dominant-baseline': 'middle' };
  const parts = [tag('defs', {}, hatchDef('attn-hatch', theme))];
  let x = 8, height = 0;
  panels.forEach((p, k) => {
    const top = TITLE + gutter, w = cell * p.cols, hgt = cell * p.rows;
    parts.push(text({ x: x + gutter, y: 13, 'font-size': 12, 'font-weight': 600, fill: hex(theme.fg) }, clip(p.title, 48)));
    if (labels) {
      p.queryTokens.forEach((t, i) => parts.push(text({ x: x + gutter - 4, y: top + (i + 0.5) * cell, 'text-anchor': 'end', ...font }, clip(t, 12))));
      p.keyTokens.forEach((t, j) => {
        const cx = x + gutter + (j + 0.5) * cell, cy = top - 4;
        parts.push(text({ x: cx, y: cy, transform: `rotate(-90 ${cx} ${cy})`, ...font }, clip(t, 12)));
      });
    }
    if (p.rows * p.cols <= 64 * 64) {
      for (let i = 0; i < p.rows; i++)
        for (let j = 0; j < p.cols; j++) {
          const c = i * p.cols + j, m = p.masked?.[c];
          parts.push(tag('rect', {
            x: x + gutter + j * cell, y: top + i * cell, width: cell, height: cell,
            fill: m ? 'url(#attn-hatch)' : p.scale.css(p.unit[c]),
            'data-panel': p.kind, 'data-row': i, 'data-column': j, 'data-value': m ? 'masked' : String(p.values[c]),
          }));
        }
    } else {
      parts.push(matrixImageSVG({
        weights: p.unit, rows: p.rows, cols: p.cols, masked: p.masked, scale: p.scale, id: `attn-cells-${k}`,
        x: x + gutter, y: top, width: w, height: hgt, target: Math.ceil(Math.max(w, hgt) * 2),
      }));
    }
    parts.push(tag('rect', { x: x + gutter, y: top, width: w, height: hgt, fill: 'none', stroke: hex(theme.line) }));
    parts.push(legend(theme, p, diff, x + gutter, top + hgt + 12, colorScale));
    x += gutter + w + GAP;
    height = Math.max(height, top + hgt + 40);
  });
  const title = view === 'difference' ? `Difference of attention weights, ${sides.a.label} − ${sides.b.label}`
    : `Attention weights of ${sides.a.label} and ${sides.b.label}${diff && view === 'all' ? ', and their difference' : ''}`;
  return svgDocument({ width: x, height, title, theme, body: parts.join('') });
}

// One legend under a panel: a gradient and its end values.
function legend(theme, panel, diff, x, y, colorScale) {
  const id = `attn-legend-${panel.kind}`, w = 120, hgt = 10;
  const font = { 'font-size': 11, fill: hex(theme.muted) };
  if (panel.kind !== 'difference' && colorScale !== 'linear') {  // ticks at the weights (color-scale.js)
    const ticks = legendTicks(colorScale, panel.top);
    return tag('g', {},
      tag('defs', {}, tag('linearGradient', { id }, [0, 1].map((s) => tag('stop', { offset: s, 'stop-color': hex(panel.scale.rgb(s)) })))),
      tag('rect', { x: x + 38, y, width: w, height: hgt, fill: `url(#${id})`, stroke: hex(theme.line) }),
      ticks.map((t, k) => [tag('rect', { x: x + 38 + t.t * w - 0.5, y: y + hgt, width: 1, height: 3, fill: hex(theme.muted), 'data-tick': t.t }),
        text({ x: x + 38 + t.t * w, y: y + hgt + 12, 'font-size': 9, fill: hex(theme.muted),
          'text-anchor': k === 0 ? 'start' : k === ticks.length - 1 ? 'end' : 'middle' }, t.label)]));
  }
  const stops = panel.kind === 'difference' ? [0, 0.5, 1] : [0, 1];
  const ends = panel.kind === 'difference' ? [signed(-diff.max), signed(diff.max)] : ['0', '1'];
  return tag('g', {},
    tag('defs', {}, tag('linearGradient', { id }, stops.map((s) => tag('stop', { offset: s, 'stop-color': hex(panel.scale.rgb(s)) })))),
    text({ x, y: y + hgt, 'text-anchor': 'start', ...font }, ends[0]),
    tag('rect', { x: x + 38, y, width: w, height: hgt, fill: `url(#${id})`, stroke: hex(theme.line) }),
    text({ x: x + 42 + w, y: y + hgt, ...font }, ends[1]));
}
