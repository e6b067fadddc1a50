// The first draw of a long precomputed heatmap (issue 19): n = 8192 tokens (one head, a causal
// band of width ~50 plus a sink at token 0, the shape long-context heads have) in a real
// <attn-heatmap> in headless Chromium, timed from the `data` assignment to `updateComplete`
// (median and best of N runs), beside a peer measured in the same page: one putImageData of an
// n×n image (what the old full-resolution draw paid at least) and parseData alone. `--json FILE`
// adds the result to FILE as the section `heatmap-first-draw` (report.mjs: heatmap-first-draw-chromium).
//   node scripts/bench/heatmap-first-draw.mjs [--n 8192] [--runs 5] [--json FILE]
import { parseArgs } from 'node:util';

import { withBenchPage } from './bench-page.mjs';
import { commandLine, writeSections } from './record.js';

const { values } = parseArgs({ options: { n: { type: 'string', default: '8192' }, runs: { type: 'string', default: '5' }, json: { type: 'string' } } });
const n = Number(values.n), runs = Number(values.runs);

const result = await withBenchPage((page) => page.evaluate(async ({ n, runs }) => {
  await import('/web/elements/attn-heatmap.js');
  const { parseData } = await import('/web/elements/lib/data.js');
  const band = 50;
  const attention = new Float32Array(n * n);
  for (let i = 0; i < n; i++) {
    const row = attention.subarray(i * n, (i + 1) * n);
    let total = 0;
    for (let j = Math.max(0, i - band); j <= i; j++) total += (row[j] = Math.exp(-(i - j) / 12));
    total += (row[0] += 0.3);
    for (let j = 0; j <= i; j++) row[j] /= total;
  }
  const tokens = Array.from({ length: n }, (_, i) => `t${i}`);
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const draws = [], parses = [], puts = [];
  for (let r = 0; r < runs; r++) {
    const el = document.createElement('attn-heatmap');
    el.style.width = '800px';
    document.body.append(el);
    const t0 = performance.now();
    el.data = { tokens, attention, heads: 1, causal: true };
    if (!(await el.updateComplete)) throw new Error(el.error);
    draws.push(performance.now() - t0);
    el.remove();
    let t = performance.now();
    parseData({ tokens, attention, heads: 1, causal: true }, { maxTokens: 4096, maxPrecomputedTokens: 8192 });
    parses.push(performance.now() - t);
    t = performance.now();
    const c = document.createElement('canvas');
    c.width = n; c.height = n;
    const ctx = c.getContext('2d');
    ctx.putImageData(ctx.createImageData(n, n), 0, 0);
    ctx.getImageData(0, 0, 1, 1);  // make it happen now
    puts.push(performance.now() - t);
  }
  return { n, runs, drawMs: median(draws), drawBestMs: Math.min(...draws), parseMs: median(parses), putImageDataMs: median(puts), browser: navigator.userAgent.match(/Chrome\/[\d.]+/)?.[0] };
}, { n, runs }));

const r = result;
console.log(`<attn-heatmap> first draw, n = ${r.n} precomputed (one head, causal band), ${r.runs} runs, headless ${r.browser}`);
console.log(`  data → updateComplete   median ${r.drawMs.toFixed(0)} ms, best ${r.drawBestMs.toFixed(0)} ms  (goal ≤ 1000 ms: ${r.drawMs <= 1000 ? 'MET' : 'NOT MET'})`);
console.log(`  peer: parseData alone   median ${r.parseMs.toFixed(0)} ms  (first draw / parseData = ${(r.drawMs / r.parseMs).toFixed(2)}×)`);
console.log(`  peer: one ${r.n}² putImageData  median ${r.putImageDataMs.toFixed(0)} ms  (first draw / putImageData = ${(r.drawMs / r.putImageDataMs).toFixed(2)}×)`);
console.log(JSON.stringify({ kind: 'heatmap-first-draw', ...r }));
if (values.json) {
  writeSections(values.json, [{ section: 'heatmap-first-draw', runtime: 'chromium', browser: r.browser, ...r }],
    { command: commandLine('scripts/bench/heatmap-first-draw.mjs', process.argv.slice(2)) });
}
