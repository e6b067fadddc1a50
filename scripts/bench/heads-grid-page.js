// The page of heads-grid.mjs: issue 21 §4's figure target alone. A model of a bench shape (the
// folder `npm run bench:models` writes) runs on `tokens` ids, and an <attn-heads> 800 px wide
// redraws every layer and head; timed as models-page.js's headsGridRedraw (from lm.run to
// updateComplete), split into lm.run, data → updateComplete and data → the next painted frame.
import { init } from '../../web/attnlens.js';
import { promptIds } from './model-files.js';
import { shapeOf } from './model-shapes.js';
import { loadOurs, median } from './models-ours.js';

const bytesOf = async (url) => {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
};
// A frame is painted once a task after requestAnimationFrame runs.
const nextPaint = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

let loaded = null;

/** Loads the model once: { lm, build, loadMs }. */
window.attnlensHeadsGridLoad = async ({ shape: name, folder, dtype = 'F16' }) => {
  const shape = shapeOf(name);
  const lens = await init();
  const files = {
    config: JSON.parse(new TextDecoder().decode(await bytesOf(`/${folder}/${dtype}/config.json`))),
    weights: await bytesOf(`/${folder}/${dtype}/model.safetensors`),
    tokenizer: await bytesOf(`/${folder}/${shape.arch === 'gpt2' ? 'tokenizer.json' : 'tokenizer.bin'}`),
  };
  const { lm, ms } = await loadOurs(lens, files);
  await import('../../web/elements/attn-heads.js');
  loaded = { lm, shape };
  return { build: lens.build, threads: lm.info.threads, loadMs: ms, crossOriginIsolated: globalThis.crossOriginIsolated, userAgent: navigator.userAgent };
};

let figure = null;

/** An <attn-heads> `width` px wide, drawn once (seed 1: the untimed first draw, which builds it). */
window.attnlensHeadsGridStart = async ({ tokens = 64, width = 800 }) => {
  const { lm, shape } = loaded;
  const host = document.body.appendChild(document.createElement('div'));
  host.style.width = `${width}px`;
  const el = host.appendChild(document.createElement('attn-heads'));
  const n = Math.min(tokens, shape.context);
  const show = async (seed) => {
    const t0 = performance.now();
    const r = lm.run(promptIds(shape, n, seed));
    const t1 = performance.now();
    el.data = { tokens: r.tokens, attention: r.layers.map((l) => l.attention) };
    if (!(await el.updateComplete)) throw new Error(`the heads grid did not draw: ${el.error}`);
    const t2 = performance.now();
    await nextPaint();
    const t3 = performance.now();
    return { ms: t2 - t0, runMs: t1 - t0, figureMs: t2 - t1, paintedMs: t3 - t1 };
  };
  figure = { host, el, show, n, width };
  return show(1);
};

/** `redraws` timed redraws of the figure started above (seeds 2, 3, …); removes it. */
window.attnlensHeadsGridRedraws = async ({ redraws = 7 }) => {
  const { host, el, show, n, width } = figure;
  const timed = [];
  for (let i = 0; i < redraws; i++) timed.push(await show(2 + i));
  const cells = el.shadowRoot.querySelectorAll('[role="gridcell"]').length;
  host.remove();
  figure = null;
  const stat = (key) => ({ median: median(timed.map((t) => t[key])), best: Math.min(...timed.map((t) => t[key])) });
  return { tokens: n, layers: loaded.lm.config.layers, heads: loaded.lm.config.heads, cells, width, redraws,
    total: stat('ms'), run: stat('runMs'), figure: stat('figureMs'), painted: stat('paintedMs'), all: timed };
};
window.attnlensBenchReady = true;  // what bench-page.mjs waits for
