// The page side of the heatmap frame benchmark (issue 9; scripts/bench/heatmap-frame.mjs): a real
// <attn-heatmap> of n tokens and h heads from Q, K, V, redrawn after temperature, scale and mask
// changes; each redraw is timed from the change to `updateComplete` (the figure's own promise),
// split into compute (the engine call, weights only) and render (colour mapping, drawing). Then
// the parts of a render are timed alone on the same weights: cells (LUT fill + putImageData into
// the reused pixel canvas) and drawImage onto the visible canvas. The figure computes the head it
// shows, so `compute` is one head's engine call; unjudged `views` time a head switch right after
// a temperature change (the new head is computed in its render) and a temperature change in the
// Mean view (every head, then lens.aggregate).
import { init } from '../../web/attnlens.js';
import '../../web/elements/attn-heatmap.js';
import { cellsLayer, drawMatrix, PixelMatrix } from '../../web/elements/lib/matrix-canvas.js';
import { median } from './core.js';

const summary = (xs) => ({ medianMs: median(xs), bestMs: Math.min(...xs), worstMs: Math.max(...xs) });

// Seeded uniform values in [-1, 1) as a plain array (what an author's JSON holds).
function values(count, seed) {
  let s = seed >>> 0;
  return Array.from({ length: count }, () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return (s / 2 ** 32) * 2 - 1;
  });
}

// The changes timed, each alternating between two values so every one is a real change.
const CHANGES = {
  temperature: [1.5, 2],
  scale: [0.08, 0.16],
  mask: ['causal', 'none'],
};

// The page's state when the test starts: the JS heap (Chromium's performance.memory) and the
// engine's wasm heap, which other work in the same page leaves behind.
async function heapState() {
  const mib = (b) => (b === undefined ? undefined : b / 2 ** 20);
  const lens = await init();
  return { jsHeapMiB: mib(performance.memory?.usedJSHeapSize), wasmHeapMiB: mib(lens.memory().heapSize), threads: lens.threads };
}

export async function heatmapFrameTest({ n = 512, h = 8, d = 64, redraws = 20, warmup = 8 } = {}) {
  const heap = await heapState();
  const host = document.body.appendChild(document.createElement('div'));
  host.style.width = '640px';
  const el = host.appendChild(document.createElement('attn-heatmap'));
  el.data = {
    tokens: Array.from({ length: n }, (_, i) => `t${i}`), heads: h, dK: d,
    Q: values(h * n * d, 1), K: values(h * n * d, 2), V: values(h * n * d, 3),
  };
  if (!(await el.updateComplete)) throw new Error(`the heatmap did not draw: ${el.error}`);
  // Split every redraw into compute and render, without touching the element's code.
  let parts = null;
  const time = (name) => {
    const original = el[name].bind(el);
    el[name] = (...args) => {
      const t = performance.now();
      const r = original(...args);
      if (parts) parts[name] = performance.now() - t;
      return r;
    };
  };
  time('compute');
  time('render');
  // `warmup + redraws` redraws, each timed from `change(i)` to updateComplete (after an untimed
  // `prepare(i)`), split into compute and render.
  const measure = async ({ prepare = async () => {}, change }) => {
    const samples = [];
    for (let i = 0; i < warmup + redraws; i++) {
      parts = null;
      await prepare(i);
      parts = {};
      const t0 = performance.now();
      change(i);
      await el.updateComplete;
      const total = performance.now() - t0;
      if (i >= warmup) samples.push({ total, ...parts });
    }
    return {
      ...summary(samples.map((s) => s.total)),
      computeMs: median(samples.map((s) => s.compute ?? 0)),
      renderMs: median(samples.map((s) => s.render ?? 0)),
    };
  };
  const reset = async () => {
    Object.assign(el, { temperature: 1, scale: 'auto', mask: 'none', head: 0 });
    await el.updateComplete;
  };
  const results = {};
  for (const [name, pair] of Object.entries(CHANGES)) {
    results[name] = await measure({ change: (i) => { el[name] = pair[i % 2]; } });
    await reset();
  }

  // Unjudged, what else a reader does with the same figure: switching the head right after a
  // temperature change (the figure computes the head it shows, so the new head is computed
  // then, in the render), and a temperature change while the Mean view is shown (every head).
  const views = {};
  if (h > 1) {
    views['head after temperature'] = await measure({
      prepare: async (i) => { el.temperature = CHANGES.temperature[i % 2]; await el.updateComplete; },
      change: () => { el.head = el.head === 0 ? 1 : 0; },
    });
    await reset();
    el.head = 'mean';
    await el.updateComplete;
    views['temperature, mean view'] = await measure({ change: (i) => { el.temperature = CHANGES.temperature[i % 2]; } });
    await reset();
  }
  parts = null;

  // The render's parts alone, on the figure's own weights and canvas sizes.
  const weights = el.weights, theme = el.theme, plot = el.layout.plot;
  const pixels = new PixelMatrix();
  const target = document.createElement('canvas');
  target.width = Math.ceil(plot * devicePixelRatio);
  target.height = target.width;
  const ctx = target.getContext('2d');
  const cells = [], draw = [];
  for (let i = 0; i < warmup + redraws; i++) {
    const t0 = performance.now();
    const layer = cellsLayer(weights, n, theme.scale, null, n, pixels);
    const t1 = performance.now();
    drawMatrix(ctx, { cells: layer, mask: null, x: 0, y: 0, size: plot, theme, ratio: devicePixelRatio });
    ctx.getImageData(0, 0, 1, 1);  // wait for the draw to happen
    const t2 = performance.now();
    if (i >= warmup) { cells.push(t1 - t0); draw.push(t2 - t1); }
  }
  host.remove();
  return {
    n, h, d, redraws, budgetMs: 16, changes: results, views, heap,
    parts: { cellsMs: median(cells), drawImageMs: median(draw) },
    userAgent: navigator.userAgent,
  };
}
