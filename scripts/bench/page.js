// The browser side of `npm run bench:browser`: the same benchmark as in Node (core.js, peers.js)
// plus the frame test. scripts/bench/browser.mjs serves this page from 127.0.0.1, calls
// window.attnlensBench(options, models) and prints what it returns.
import { init } from '/web/attnlens.js';
import * as core from './core.js';
import { makeInputs, ortPeers, ourPeers, plainJsPeer, tfjsPeer } from './peers.js';

const status = (s) => { document.getElementById('status').textContent = s; };
const fromBase64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

async function loadPeers(wanted, models, jsMaxN) {
  const { lens, peers } = await ourPeers(init, wanted);
  if (wanted.includes('ort')) {
    const ort = await import('/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs');
    const bytes = (h, d) => {
      const m = models[`${h},${d}`];
      return { plain: fromBase64(m.plain), mha: fromBase64(m.mha), attention23: fromBase64(m.attention23) };
    };
    peers.push(...ortPeers(ort, bytes));
  }
  if (wanted.includes('tfjs')) {
    const tf = globalThis.tf;
    tf.wasm.setWasmPaths('/node_modules/@tensorflow/tfjs-backend-wasm/dist/');
    tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
    tf.wasm.setThreadsCount?.(1);
    if (!(await tf.setBackend('wasm'))) throw new Error('TF.js could not start its wasm backend');
    await tf.ready();
    peers.push(tfjsPeer(tf));
  }
  if (wanted.includes('js')) peers.push(plainJsPeer({ maxN: jsMaxN }));
  return { lens, peers };
}

// Recompute attention for n keys and h heads (with weights: the heatmap needs them) and redraw
// head 0's n × n weights with putImageData, `frames` times; the work of one frame is timed.
function frameTest(lens, { n = 512, h = 8, d = 64, frames = 30 } = {}) {
  const { q, k, v } = makeInputs(h, n, d, 7);
  const canvas = document.getElementById('heatmap');
  canvas.width = n;
  canvas.height = n;
  const ctx = canvas.getContext('2d');
  const image = ctx.createImageData(n, n);
  const px = image.data;
  const frame = () => {
    const t0 = performance.now();
    const { weights } = lens.attention(q, k, v, { dK: d, heads: h });
    const t1 = performance.now();
    for (let i = 0, p = 0; i < n * n; i++, p += 4) {
      const c = Math.min(255, weights[i] * n * 64) | 0;  // uniform weights (1/n) → 64
      px[p] = 255 - c; px[p + 1] = 255 - (c >> 1); px[p + 2] = 255; px[p + 3] = 255;
    }
    ctx.putImageData(image, 0, 0);
    const t2 = performance.now();
    return { total: t2 - t0, compute: t1 - t0, draw: t2 - t1 };
  };
  for (let i = 0; i < 5; i++) frame();  // warm-up (tier-up)
  const samples = [];
  for (let i = 0; i < frames; i++) samples.push(frame());
  const med = (key) => core.median(samples.map((s) => s[key]));
  const sorted = samples.map((s) => s.total).sort((a, b) => a - b);
  const total = med('total');
  return {
    n, h, d, frames, budgetMs: 16, medianMs: total, computeMs: med('compute'), drawMs: med('draw'),
    p90Ms: sorted[Math.floor(0.9 * (sorted.length - 1))], fits: total <= 16,
  };
}

window.attnlensBench = async (options, models) => {
  status('running…');
  const { lens, peers } = await loadPeers(options.peers, models, options.jsMaxN);
  const log = (s) => console.log(`[bench] ${s}`);
  const ceiling = core.measureCeiling(lens);
  log(`ceiling ${ceiling.gflops.toFixed(1)} GFLOP/s`);
  const records = options.sizes.length ? await core.runBenchmark({ ...options, peers, ceiling, lens, log }) : [];
  ceiling.end = core.measureCeiling(lens);
  const frame = frameTest(lens, options.frame);
  status('done');
  return { records, ceiling, frame, userAgent: navigator.userAgent };
};
window.attnlensBenchReady = true;
status('ready');

// The heatmap at long inputs (issue 11): first draw, hover, wheel, zoom and pan at n = 4096.
window.attnlensHeatmapLong = (options) => import('./heatmap-long.js').then((m) => m.heatmapLongTest(options));
