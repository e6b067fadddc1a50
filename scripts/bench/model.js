// Benchmark (not a test): USE-lite's cold load and per-sentence run time, in Node and, with
// --browser, in headless Chromium (Debian's, via playwright-core, served by scripts/serve.mjs);
// then, in Node, ours against TF.js-wasm (SIMD, one thread) on 12-, 36- and 128-token inputs,
// both asked for the embedding and both layers' attention (--no-tfjs skips it), ours on the
// relaxed-SIMD and the SIMD128 model modules side by side. Runs itself with
// node --experimental-wasm-relaxed-simd so that the relaxed-SIMD module can load
// (ATTNLENS_BENCH_NO_RELAXED=1: SIMD128 only).
//   node scripts/bench/model.js [--browser] [--runs N] [--no-tfjs] [--cpu-time]
// --cpu-time times ours and TF.js with the process's CPU time (a shared machine disturbs it less).
// --json FILE writes the comparison with TF.js (with the command and the machine) for report.mjs.
// Run after scripts/build.sh (needs web/dist/attnlens-model.* and web/dist/use-lite.bin).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { tfjsUseLite } from './model-peer.js';
import { commandLine, jsonArg, writeSections } from './record.js';

const command = commandLine('scripts/bench/model.js', process.argv.slice(2));
const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
if (!process.execArgv.includes(RELAXED_FLAG) && !process.env.ATTNLENS_BENCH_NO_RELAXED) {
  const child = spawnSync(process.execPath, [...process.execArgv, RELAXED_FLAG,
    fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit', env: { ...process.env, ATTNLENS_BENCH_COMMAND: command } });
  process.exit(child.status ?? 1);
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { json, rest: args } = jsonArg(process.argv.slice(2));
const runs = Number(args[args.indexOf('--runs') + 1]) || 30;

const SENTENCES = {
  short: 'The cat sat on the mat because it was tired.',
  medium: 'Attention lets every token look at every other token; the weights say how much each one ' +
    'matters, and a trained model learns where to look: nouns, verbs, the end of the sentence.',
  // Past the 128-token limit: clipped, so it measures the largest forward pass.
  long: Array.from({ length: 160 }, (_, i) => ['river', 'quietly', 'numbers', 'jumped'][i % 4]).join(' '),
};

// Runs in Node and, serialised, in the page: keep it self-contained.
async function measure(importEngine, runs, sentences, sources) {
  const now = () => performance.now();
  const t0 = now();
  const { init } = await importEngine();
  const lens = await init();
  const t1 = now();
  const loads = {};
  let model;
  for (const [name, source] of Object.entries(sources)) {
    const s = now();
    model = await lens.loadModel(source);
    loads[name] = now() - s;
  }
  const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
  const timing = {};
  for (const [name, text] of Object.entries(sentences)) {
    const tokens = model.run(text).ids.length;  // warm-up
    const run = [];
    const tokenize = [];
    for (let i = 0; i < runs; i++) {
      const edited = `${text} ${i}`;  // an edited sentence each time, as when typing
      let s = now();
      model.run(edited);
      run.push(now() - s);
      s = now();
      model.tokenize(edited);
      tokenize.push(now() - s);
    }
    timing[name] = { tokens, run: median(run), tokenize: median(tokenize) };
  }
  return { engine: t1 - t0, loads, timing };
}

function report(where, r) {
  const ms = (x) => `${x.toFixed(1)} ms`;
  console.log(`${where}: engine init ${ms(r.engine)}`);
  for (const [name, t] of Object.entries(r.loads)) console.log(`${where}: cold loadModel(${name}) ${ms(t)}`);
  for (const [name, t] of Object.entries(r.timing))
    console.log(`${where}: run ${name} (${t.tokens} tokens) median ${ms(t.run)}; tokenize only ${ms(t.tokenize)}`);
}

const node = await measure(() => import('attnlens'), runs, SENTENCES, {
  'installed package': undefined,
  'web/dist/use-lite.bin': path.join(root, 'web/dist/use-lite.bin'),
});
report(`node ${process.version}`, node);

if (args.includes('--browser')) {
  const { serve } = await import('../serve.mjs');
  const { chromium } = await import('playwright-core');
  const { mkdtemp, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const server = await serve({ port: 0 });
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'attnlens-bench-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await context.newPage();
    await page.goto(`${server.url}/demo/`);
    // An expression string: DevTools evaluates it outside the page's CSP (which forbids eval).
    const result = await page.evaluate(
      `(${measure})(() => import('/attnlens.js'), ${runs}, ${JSON.stringify(SENTENCES)}, ` +
      `{ 'web/dist/use-lite.bin': undefined })`);
    report(`chromium ${context.browser()?.version() ?? ''}`.trim(), result);
  } finally {
    await context.close();
    await rm(userDataDir, { recursive: true, force: true });
    await server.close();
  }
}

// A text of exactly `tokens` tokens (128: longer, clipped by the model).
function textOf(model, tokens) {
  const pool = ['the', 'cat', 'sat', 'on', 'a', 'mat', 'and', 'it', 'was', 'tired'];
  let text = pool[0];
  for (let i = 1; model.tokenize(text).ids.length < tokens; i++) text += ` ${pool[i % pool.length]}`;
  return text;
}

async function versusTfjs() {
  const { init } = await import('attnlens');
  // Ours on each model module a user can get: relaxed SIMD (Chromium; Node with the flag) and
  // SIMD128 (Node without it, Safari), each the module its engine build loads.
  const ours = [];
  const lens = await init();
  if (lens.build === 'relaxed') ours.push({ label: 'relaxed', model: await lens.loadModel() });
  ours.push({ label: 'SIMD128', model: await (await init({ build: 'simd' })).loadModel() });
  const tfjs = await tfjsUseLite();
  const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
  const now = args.includes('--cpu-time') ? cpuMs : () => performance.now();
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  console.log(`\nUSE-lite${args.includes('--cpu-time') ? ' (process CPU time)' : ''}, ours (model.run: tokenize + forward pass + attention + embedding; ` +
    `the ${ours.map((o) => `${o.label} (model.info.build '${o.model.info.build}')`).join(' and the ')} model module) ` +
    `vs TF.js ${tfjs.backend} (SIMD, one thread, executeAsync for both attention tensors + embedding), interleaved, median of ${runs}:`);
  console.log(`| tokens | ${ours.map((o) => `ours ${o.label} ms (best)`).join(' | ')} | TF.js-wasm ms (best) | ` +
    `${ours.map((o) => `×TF.js ${o.label}`).join(' | ')} | max |Δ| embedding |`);
  console.log(`|---:|${ours.map(() => '---:|').join('')}---:|${ours.map(() => '---:|').join('')}---:|`);
  const rows = [];
  for (const tokens of [12, 36, 128]) {
    const text = textOf(ours[0].model, tokens);
    const ids = ours[0].model.tokenize(text).ids;
    const [, , embedding] = await tfjs.run(ids);
    let diff = 0;
    for (const { model } of ours) {
      const e = model.run(text).embedding;
      for (let i = 0; i < embedding.length; i++) diff = Math.max(diff, Math.abs(embedding[i] - e[i]));
    }
    for (let i = 0; i < 5; i++) { for (const { model } of ours) model.run(text); await tfjs.run(ids); }  // warm-up
    const times = ours.map(() => []), peer = [];
    for (let r = 0; r < runs; r++) {  // interleaved, so that load from other processes hits all
      ours.forEach(({ model }, o) => { const t = now(); model.run(text); times[o].push(now() - t); });
      const t = now(); await tfjs.run(ids); peer.push(now() - t);
    }
    const cell = (xs) => `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)})`;
    rows.push({ tokens: ids.length, ours: Object.fromEntries(ours.map((o, i) => [o.label, { ms: median(times[i]), msMin: Math.min(...times[i]) }])),
      tfjs: { ms: median(peer), msMin: Math.min(...peer) }, maxAbsDiffEmbedding: diff });
    console.log(`| ${ids.length} | ${times.map(cell).join(' | ')} | ${cell(peer)} | ` +
      `${times.map((xs) => (median(peer) / median(xs)).toFixed(2)).join(' | ')} | ${diff.toExponential(1)} |`);
  }
  if (json)
    writeSections(json, [{ section: 'model', runtime: 'node', model: 'use-lite', peer: `TF.js ${tfjs.backend}`,
      cpuTime: args.includes('--cpu-time'), runs, rows }], { command, fresh: true });
}

if (!args.includes('--no-tfjs')) await versusTfjs();
