// Issue 21 §4's heads-grid target alone (the bench:models run measures it among much else):
// GPT-2 small's shape (or --shape smollm-135m; F16, the random-weight folder `npm run bench:models`
// writes under .build/bench-models/<shape>-1/), lm.run on 64 ids, then an <attn-heads> of every
// layer and head (12 × 12 for GPT-2 small) redrawn in headless Chromium, cross-origin isolated. Prints lm.run, data → updateComplete and
// data → the next painted frame (median and best); with --profile, the time of a redraw by part
// and by function (V8's sampling profiler over the timed redraws, after the first draw; `self` =
// in the function itself, `total` = with what it calls).
//   node scripts/bench/heads-grid.mjs [--shape gpt2-small] [--redraws 7] [--tokens 64] [--width 800] [--profile] [--top 30]
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { withBenchPage } from './bench-page.mjs';
import { ISOLATION_HEADERS } from '../serve.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values } = parseArgs({ options: {
  redraws: { type: 'string', default: '7' }, tokens: { type: 'string', default: '64' }, width: { type: 'string', default: '800' },
  profile: { type: 'boolean', default: false }, top: { type: 'string', default: '30' },
  shape: { type: 'string', default: 'gpt2-small' }, folder: { type: 'string' },
} });
const folder = values.folder ?? `.build/bench-models/${values.shape}-1`;
if (!existsSync(path.join(ROOT, folder, 'F16/model.safetensors')))
  throw new Error(`${folder}/F16/model.safetensors is missing: \`npm run bench:models -- --shapes ${values.shape}\` writes it (writeModelFiles, scripts/bench/models.mjs)`);
const spec = { redraws: Number(values.redraws), tokens: Number(values.tokens), width: Number(values.width) };

// The parts of a redraw, each by the functions that do it: a sample counts for the innermost
// frame of its stack that one of these names (in this order of test), so nothing counts twice.
const PARTS = [
  ['lm.run (the model)', /^run web\/model\/language-model\.js/],
  ['data validation and copies (parseData)', /^checkData /],
  ['mean/max/rollout tiles (engine)', /^selectedMatrix /],
  ['colour mapping + pixels (ImageData, putImageData)', /^(cellsLayer|colorPositions|masks) web\/elements\/lib/],
  ['canvas drawing (size, clear, drawImage)', /^(drawMatrix|sizeCanvas|clear) web\/elements/],
  ['ARIA labels (headPattern, labels)', /^(headPattern|selectionLabel|rowSumNote|setAttribute)( |$)/],
  ['building the grid\'s elements', /^#tileList /],
  ['selection and tab stops', /^#select /],
  ['detail heatmap (the opened head)', /^(#openDetail|render web\/elements\/attn-heatmap\.js)/],
  ['the rest of the update loop', /^(render web\/elements\/attn-heads|#run |#load )/],
];

// Self and total (inclusive) time per function of a CPU profile (one sample = the time to the
// next), and the time per part (PARTS).
function byFunction(profile) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const name = (node) => {
    const f = node.callFrame;
    return `${f.functionName || '(anonymous)'} ${f.url ? `${f.url.replace(/^.*?\/\/[^/]+\//, '')}:${f.lineNumber + 1}` : ''}`.trim();
  };
  const self = new Map(), total = new Map(), parts = new Map();
  let all = 0;
  profile.samples.forEach((id, i) => {
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    all += dt;
    self.set(name(nodes.get(id)), (self.get(name(nodes.get(id))) ?? 0) + dt);
    const seen = new Set();
    let part = null;
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const key = name(nodes.get(at));
      if (!seen.has(key)) total.set(key, (total.get(key) ?? 0) + dt), seen.add(key);
      part ??= PARTS.find(([, pattern]) => pattern.test(key))?.[0] ?? null;
    }
    if (part) parts.set(part, (parts.get(part) ?? 0) + dt);
  });
  return { all, self, total, parts };
}

await withBenchPage(async (page) => {
  const info = await page.evaluate((s) => window.attnlensHeadsGridLoad(s), { shape: values.shape, folder });
  const first = await page.evaluate((s) => window.attnlensHeadsGridStart(s), spec);
  let cdp = null;
  if (values.profile) {
    cdp = await page.context().newCDPSession(page);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
    await cdp.send('Profiler.start');
  }
  const r = { ...(await page.evaluate((s) => window.attnlensHeadsGridRedraws(s), spec)), first };
  const profile = cdp ? (await cdp.send('Profiler.stop')).profile : null;
  const ms = (x) => `${x.toFixed(0)} ms`;
  console.log(`<attn-heads> redraw: ${r.layers} layers × ${r.heads} heads (${r.cells} tiles), ${r.tokens} tokens, ${r.width} px; ` +
    `${info.userAgent.match(/Chrome\/[\d.]+/)?.[0]} (${info.build}, model on ${info.threads} thread(s), isolated ${info.crossOriginIsolated}); ${r.redraws} redraws after one`);
  for (const [label, s] of [['lm.run → updateComplete (the target, ≤ 500 ms)', r.total], ['  lm.run', r.run],
    ['  data → updateComplete', r.figure], ['  data → next painted frame', r.painted]])
    console.log(`  ${label.padEnd(48)} median ${ms(s.median).padStart(7)}  best ${ms(s.best).padStart(7)}`);
  console.log(`  first draw: ${ms(r.first.ms)} (lm.run ${ms(r.first.runMs)}); each: ${r.all.map((t) => t.ms.toFixed(0)).join(' ')} ms`);
  if (profile) {
    const { all, self, total, parts } = byFunction(profile);
    const top = (map) => [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top));
    const draws = r.redraws;
    console.log(`profile over the ${draws} timed redraws (${ms(all)} sampled); per redraw:`);
    for (const [label] of PARTS) console.log(`  ${label.padEnd(52)} ${((parts.get(label) ?? 0) / draws).toFixed(1).padStart(6)} ms`);
    console.log('  self:');
    for (const [k, v] of top(self)) console.log(`    ${(v / draws).toFixed(1).padStart(7)} ms  ${k}`);
    console.log('  total:');
    for (const [k, v] of top(total)) console.log(`    ${(v / draws).toFixed(1).padStart(7)} ms  ${k}`);
  }
  console.log(JSON.stringify({ kind: 'heads-grid', ...r, ...info }));
}, { log: (t) => console.error(`[page] ${t}`), headers: ISOLATION_HEADERS, pagePath: '/scripts/bench/heads-grid-page.html' });
