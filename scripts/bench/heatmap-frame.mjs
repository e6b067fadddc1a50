// The heatmap frame benchmark: a real <attn-heatmap> (n = 512, h = 8, d = 64, from Q, K, V) in
// headless Chromium, redrawn after temperature, scale and mask changes; median and best of N
// redraws, each timed from the change to `updateComplete`, with the compute/render split. Part
// of `npm run bench:browser`; alone: `node scripts/bench/heatmap-frame.mjs [--redraws 20]
// [--isolated] [--json FILE]`.
import { withBenchPage } from './bench-page.mjs';
import { commandLine, jsonArg, writeSections } from './record.js';
import { ISOLATION_HEADERS } from '../serve.mjs';

/** Runs the page side (heatmap-page.js) in a fresh headless Chromium; returns its measurements. */
// `isolated`: serve the page with COOP/COEP, so the figure's engine runs threaded where it can.
export function measureHeatmapFrames(options = {}, { log = () => {}, isolated = false } = {}) {
  return withBenchPage(async (page, context) => {
    const result = await heatmapFrames(page, options);
    result.browser = context.browser()?.version() ?? '';
    return result;
  }, { log, headers: isolated ? ISOLATION_HEADERS : {} });
}

/** In an open bench page (page.html): the page side, heatmap-frame-page.js. */
export function heatmapFrames(page, options = {}) {
  return page.evaluate((o) => window.attnlensHeatmapFrames(o), options);
}

/**
 * The report: one line per change (median, best, split), then one JSON line per change. `where`
 * says which page it ran in; `judge: false` prints no MET/NOT MET (a diagnostic run); `json`
 * tags the JSON lines' `page`.
 */
export function formatHeatmapFrames(r, { where = 'fresh page', judge = true, json = 'fresh' } = {}) {
  const lines = [`Heatmap frame (${where}): <attn-heatmap> n=${r.n}, h=${r.h}, d=${r.d} from Q, K, V; ` +
    `change → updateComplete, ${r.redraws} redraws each (headless Chromium ${r.browser})`];
  const verdict = (s) => (!judge ? '       ' : s.medianMs <= r.budgetMs ? 'MET    ' : 'NOT MET');
  for (const [change, s] of Object.entries(r.changes))
    lines.push(`${verdict(s)}  ${change.padEnd(11)} median ${s.medianMs.toFixed(1)} ms, ` +
      `best ${s.bestMs.toFixed(1)} ms, worst ${s.worstMs.toFixed(1)} ms ` +
      `(compute ${s.computeMs.toFixed(1)} ms + render ${s.renderMs.toFixed(1)} ms) vs a ${r.budgetMs} ms frame`);
  for (const [view, s] of Object.entries(r.views ?? {}))
    lines.push(`(info)   ${view.padEnd(22)} median ${s.medianMs.toFixed(1)} ms, best ${s.bestMs.toFixed(1)} ms, ` +
      `worst ${s.worstMs.toFixed(1)} ms (compute ${s.computeMs.toFixed(1)} ms + render ${s.renderMs.toFixed(1)} ms)`);
  lines.push(`         render parts alone: cells (LUT + putImageData) ${r.parts.cellsMs.toFixed(2)} ms, ` +
    `drawImage ${r.parts.drawImageMs.toFixed(2)} ms`);
  const mib = (x) => (x === undefined ? '?' : `${x.toFixed(0)} MiB`);
  if (r.heap) lines.push(`         page state at the start: JS heap ${mib(r.heap.jsHeapMiB)}, engine wasm heap ${mib(r.heap.wasmHeapMiB)}` +
    (r.heap.threads ? `; engine threads ${r.heap.threads}` : ''));
  lines.push('');
  for (const [change, s] of Object.entries(r.changes))
    lines.push(JSON.stringify({ kind: 'heatmap-frame', page: json, runtime: 'chromium', browser: r.browser, n: r.n, h: r.h, d: r.d,
      change, redraws: r.redraws, budgetMs: r.budgetMs, ...s, ...r.parts, ...r.heap }));
  for (const [view, s] of Object.entries(r.views ?? {}))
    lines.push(JSON.stringify({ kind: 'heatmap-frame-view', page: json, runtime: 'chromium', browser: r.browser, n: r.n, h: r.h, d: r.d,
      view, redraws: r.redraws, ...s, ...r.heap }));
  return lines.join('\n');
}

function parse(argv) {
  const o = {};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (key === 'isolated') { o.isolated = true; i -= 1; continue; }
    if (!['n', 'h', 'd', 'redraws', 'warmup'].includes(key)) throw new TypeError(`unknown option ${argv[i]} (known: --n --h --d --redraws --warmup --isolated)`);
    o[key] = Number(argv[i + 1]);
  }
  return o;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const log = (s) => console.error(`[page] ${s}`);
  const { json, rest } = jsonArg(process.argv.slice(2));
  const { isolated = false, ...options } = parse(rest);
  measureHeatmapFrames(options, { log, isolated })
    .then((r) => {
      console.log(formatHeatmapFrames(r));
      if (json)
        writeSections(json, [{ section: 'heatmap-frames', runtime: 'chromium', browser: r.browser, page: isolated ? 'fresh-isolated' : 'fresh', ...r }],
          { command: commandLine('scripts/bench/heatmap-frame.mjs', process.argv.slice(2)), fresh: true });
    })
    .catch((e) => { console.error(e); process.exitCode = 1; });
}
