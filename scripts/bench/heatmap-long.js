// The heatmap at long inputs (issue 11): n tokens of precomputed weights (default 4096, one head)
// in a real <attn-heatmap>, timing what a reader does: the first draw, the crosshair following the
// pointer, wheel zoom, zoom/pan steps (+/−, arrows) and a hover under zoom. Event-driven redraws
// are timed inside the frame that draws them: a rAF callback queued after the event runs right
// after the figure's own, so `now − frame start` is the figure's drawing work in that frame.
import '../../web/elements/attn-heatmap.js';
import { median } from './core.js';

// A band around the diagonal plus an attention sink at token 0, each row normalised: the shape of
// a long-context model's weights, without randomness (the same table in every run).
function weights(n) {
  const w = new Float32Array(n * n);
  const band = Float64Array.from({ length: n }, (_, d) => Math.exp(-d / 8));
  for (let i = 0; i < n; i++) {
    const row = w.subarray(i * n, (i + 1) * n);
    row.set(band.slice(0, i + 1).reverse());
    row.set(band.subarray(1, n - i), i + 1);
    row[0] += 0.5;
    const total = row.reduce((a, b) => a + b, 0);
    row.forEach((x, j) => { row[j] = x / total; });
  }
  return w;
}

const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));

// Work done by the figure in the frame after `act()` (ms).
async function inFrame(act) {
  await frame();
  act();
  return new Promise((resolve) => requestAnimationFrame((start) => resolve(performance.now() - start)));
}

export async function heatmapLongTest({ n = 4096, samples = 20 } = {}) {
  const el = document.createElement('attn-heatmap');
  el.style.width = '800px';
  el.style.display = 'block';
  document.body.append(el);
  const tokens = Array.from({ length: n }, (_, i) => `t${i}`);
  const attention = weights(n);
  const t0 = performance.now();
  el.data = { tokens, attention, heads: 1 };
  const ok = await el.updateComplete;
  const firstDrawMs = performance.now() - t0;
  if (!ok) throw new Error(`heatmap at n = ${n}: ${el.error}`);
  const plot = el.shadowRoot.querySelector('.plot');
  const host = el.getBoundingClientRect();
  const at = (i, j) => {
    const b = el.cellBox(i, j);
    return { clientX: host.left + b.x + b.width / 2, clientY: host.top + b.y + b.height / 2 };
  };
  const move = (i, j) => plot.dispatchEvent(new PointerEvent('pointermove', { bubbles: true, pointerType: 'mouse', ...at(i, j) }));
  const hover = [];
  for (let k = 0; k < samples; k++) hover.push(await inFrame(() => move((k * 97) % n, (k * 31) % n)));
  const wheel = [];
  for (let k = 0; k < samples / 2; k++)
    wheel.push(await inFrame(() => plot.dispatchEvent(new WheelEvent('wheel', { bubbles: true, cancelable: true, deltaY: -120, ...at(n / 2, n / 2) }))));
  const zoomedTo = el.view.zoom;
  el.zoomTo(1);
  const zoom = [], pan = [];
  for (let k = 0; k < samples / 2; k++) {
    let t = performance.now();
    el.zoomTo(2 ** (1 + (k % 6)), { row: n / 2, col: n / 2 });
    zoom.push(performance.now() - t);
    t = performance.now();
    el.zoomTo(el.view.zoom, { row: n / 2 + 40 * k, col: n / 3 + 20 * k });
    pan.push(performance.now() - t);
  }
  el.zoomTo(16, { row: n / 2, col: n / 2 });
  const hoverZoomed = [];
  for (let k = 0; k < samples; k++) hoverZoomed.push(await inFrame(() => move(n / 2 + (k % 8) - 4, n / 2 + (k % 5) - 2)));
  el.remove();
  const med = (xs) => Number(median(xs).toFixed(2));
  return {
    n, firstDrawMs: Number(firstDrawMs.toFixed(1)), hoverMs: med(hover), wheelMs: med(wheel), wheelZoom: Number(zoomedTo.toFixed(2)),
    zoomStepMs: med(zoom), panStepMs: med(pan), hoverZoomedMs: med(hoverZoomed), samples,
  };
}
