// The colour legend of a figure's `color-scale` on the page: the theme's ramp with tick marks and
// labels at the weights they stand for (color-scale.js legendTicks), so a √ or log scale reads
// as such. Its SVG twin is export.js legendSVG (same ticks).
import { legendTicks, scaleCaption } from './color-scale.js';
import { css } from './color.js';
import { h, sizeCanvas } from './dom.js';

const WIDTH = 120, RAMP = 10, TICK = 3;

/**
 * Fills `box` (an element) with the legend of scale `kind` on `theme` (`top`: the largest weight
 * shown, for 'max'); returns the ticks drawn.
 */
export function drawScaleLegend(box, theme, kind = 'linear', top = 1, scale = theme.scale) {
  const ticks = legendTicks(kind, top);
  const canvas = h('canvas', { class: 'ramp' });
  const ctx = sizeCanvas(canvas, WIDTH, RAMP + TICK);
  for (let x = 0; x < WIDTH; x++) {
    ctx.fillStyle = scale.css(x / (WIDTH - 1));
    ctx.fillRect(x, 0, 1, RAMP);
  }
  ctx.fillStyle = css(theme.muted);
  for (const t of ticks) ctx.fillRect(Math.min(WIDTH - 1, Math.round(t.t * (WIDTH - 1))), RAMP, 1, TICK);
  // Positions through the CSSOM (el.style), never a style attribute: a strict CSP allows only the former.
  const labels = h('span', { class: 'ticks' });
  Object.assign(labels.style, { position: 'relative', display: 'block', width: `${WIDTH}px`, height: '1.3em' });
  ticks.forEach((t, k) => {
    const tick = h('span', { class: 'tick', 'data-t': t.t }, t.label);
    Object.assign(tick.style, { position: 'absolute', left: `${(t.t * 100).toFixed(2)}%`, whiteSpace: 'nowrap', fontSize: '10px',
      transform: `translateX(${k === 0 ? 0 : k === ticks.length - 1 ? -100 : -50}%)` });
    labels.append(tick);
  });
  const legend = h('span', { class: 'scale-legend', title: scaleCaption(kind, top) }, canvas, labels);
  Object.assign(legend.style, { display: 'inline-flex', flexDirection: 'column', marginRight: '28px' });
  box.replaceChildren(legend);
  box.dataset.colorScale = kind;
  return ticks;
}
