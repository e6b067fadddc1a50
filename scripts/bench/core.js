// The benchmark itself, shared by Node (bench.mjs) and Chromium (page.js): argument parsing,
// the ceiling probe, checking every peer against ours, warm-up, timed runs, and the report.
// Plain JavaScript with no imports from Node or the DOM.
import { makeInputs } from './peers.js';

export const DEFAULTS = {
  sizes: [128, 256, 512, 1024, 2048], heads: [1, 8], runs: 7, d: 64, jsMaxN: 1024,
  peers: ['attnlens', 'scalar', 'ort', 'tfjs', 'js', 'native'], tolerance: 1e-4,
};

const HELP = `usage: npm run bench [-- options]      (npm run bench:browser [-- options] for Chromium)
  --sizes 128,256,...   sequence lengths n (default ${DEFAULTS.sizes})
  --heads 1,8           head counts h (default ${DEFAULTS.heads})
  --runs 7              timed runs per measurement, median reported (≥ 7 recommended)
  --peers ${DEFAULTS.peers.join(',')}
                        which contestants (attnlens is always run; native: the same kernels
                        built natively, .build/native/attnlens_bench_native, Node only)
  --js-max-n 1024       above this n, plain JS times one head and scales by h
  --d 64                head width`;

export function parseArgs(argv) {
  const o = { ...DEFAULTS };
  const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);
  const ints = (s, name) => list(s).map((x) => {
    const v = Number(x);
    if (!Number.isInteger(v) || v < 1) throw new Error(`--${name}: '${x}' is not a positive integer`);
    return v;
  });
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i], value = argv[i + 1];
    const take = () => { if (value === undefined) throw new Error(`${flag} needs a value`); i++; return value; };
    if (flag === '--sizes') o.sizes = ints(take(), 'sizes');
    else if (flag === '--heads') o.heads = ints(take(), 'heads');
    else if (flag === '--runs') [o.runs] = ints(take(), 'runs');
    else if (flag === '--d') [o.d] = ints(take(), 'd');
    else if (flag === '--js-max-n') [o.jsMaxN] = ints(take(), 'js-max-n');
    else if (flag === '--peers') o.peers = list(take());
    else if (flag === '--help' || flag === '-h') o.help = HELP;
    else throw new Error(`unknown option ${flag}\n${HELP}`);
  }
  if (!o.peers.includes('attnlens')) o.peers = ['attnlens', ...o.peers];
  return o;
}

export const flopsOf = (h, n, d) => 4 * h * n * n * d;
const now = () => performance.now();

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function maxAbsDiff(a, b, length = a.length) {
  let m = 0;
  for (let i = 0; i < length; i++) {
    const e = Math.abs(a[i] - b[i]);
    if (!(e <= m)) m = e;  // NaN propagates
  }
  return m;
}

/**
 * The SIMD128 ceiling through the same module: 12 independent f32x4 multiply-add chains. Warmed
 * up for ≥ 20 calls and ≥ 300 ms (V8 swaps in optimised code only for later calls), then `runs`
 * calls. The ceiling is the best of them: on a shared machine a slow probe call says only that
 * something else was running, and a low ceiling would flatter the percentages.
 */
export function measureCeiling(lens, { runs = 15, iterations = 2e6, warmupMs = 300 } = {}) {
  const t0 = now();
  for (let i = 0; i < 20 || now() - t0 < warmupMs; i++) lens.ceilingProbe(iterations);
  const g = [];
  for (let i = 0; i < runs; i++) g.push(lens.ceilingProbe(iterations).gflops);
  return { gflops: Math.max(...g), median: median(g), min: Math.min(...g), runs, iterations };
}

/**
 * Runs every peer on every (h, n): checks its output against ours (attnlens output-only), warms
 * it up, then takes `runs` timed samples, round-robin across peers so that background load hits
 * all alike. A sample is one call, or the mean of k back-to-back calls when one call is short
 * (k = ⌈5 ms / first call⌉, so that browsers' coarse timers do not quantise it). Returns one record
 * per (h, n, peer).
 */
export async function runBenchmark({ peers, sizes, heads, runs, d, tolerance = DEFAULTS.tolerance,
                                     ceiling, lens, warmupMs = 250, log = () => {} }) {
  const records = [];
  for (const h of heads)
    for (const n of sizes) {
      const inputs = makeInputs(h, n, d, 1000 * h + n);
      const flops = flopsOf(h, n, d);
      const live = [];
      let reference = null;
      for (const peer of peers) {
        const rec = { h, n, d, peer: peer.id, label: peer.label, ours: !!peer.ours };
        records.push(rec);
        try {
          const p = await peer.prepare(h, n, d, inputs);
          const t0 = now();
          const out = p.toHND(await p.run());
          const first = now() - t0;
          const heads = p.heads ?? h;
          if (!reference) reference = out;  // the first peer is attnlens output-only
          rec.maxAbsDiff = maxAbsDiff(out, reference, heads * n * d);
          if (!(rec.maxAbsDiff <= tolerance)) {
            rec.error = `output differs from attnlens by ${rec.maxAbsDiff} (> ${tolerance}): not timed`;
            p.dispose?.();
            continue;
          }
          if (p.note) rec.note = p.note;
          live.push({ p, rec, heads, first, times: [] });
        } catch (e) {
          rec.error = String(e?.message ?? e).split('\n')[0];
        }
      }
      // Warm-up: ≥ 3 calls and ≥ warmupMs per peer (the check above was the first), or a single
      // call when one takes over 1.5 s.
      for (const x of live) {
        let calls = 1, spent = x.first, last = x.first;
        while (x.first < 1500 && (calls < 3 || (spent < warmupMs && calls < 50))) {
          const t0 = now();
          await x.p.run();
          last = now() - t0;
          spent += last;
          calls++;
        }
        x.rec.warmupCalls = calls;
        x.batch = Math.max(1, Math.min(100, Math.ceil(5 / Math.max(last, 0.01))));
        x.rec.callsPerSample = x.batch;
      }
      // The ceiling probe takes its turn in every round too, so that each size's "% of ceiling"
      // compares with the machine as it was while that size ran (other load comes and goes).
      const probe = [];
      for (let r = 0; r < runs; r++) {
        for (const x of live) {
          const t0 = now();
          for (let b = 0; b < x.batch; b++) await x.p.run();
          x.times.push((now() - t0) / x.batch);
          if (x.p.memory) x.memory = x.p.memory();  // read before another peer's call
        }
        if (lens) probe.push(lens.ceilingProbe(ceiling?.iterations ?? 2e6).gflops);
      }
      const localCeiling = probe.length ? median(probe) : undefined;
      for (const { p, rec, heads, times, memory } of live) {
        const scaleUp = h / heads;  // plain JS above maxN: one head timed
        rec.runs = times.length;
        rec.ms = median(times) * scaleUp;
        rec.msMin = Math.min(...times) * scaleUp;
        rec.gflops = flops / rec.ms / 1e6;
        if (localCeiling) {
          rec.ceilingSameRounds = localCeiling;
          rec.pctCeiling = (100 * rec.gflops) / localCeiling;
        }
        if (ceiling) rec.pctBestCeiling = (100 * rec.gflops) / ceiling.gflops;
        if (memory !== undefined) rec.heapBytesPerCall = memory;
        if (heads !== h) rec.extrapolated = true;
        p.dispose?.();
      }
      const ours = records.find((r) => r.h === h && r.n === n && r.peer === 'attnlens');
      for (const r of records.filter((x) => x.h === h && x.n === n && x.ms))
        if (ours?.ms && r !== ours) r.oursSpeedup = r.ms / ours.ms;
      log(`h=${h} n=${n}: ${records.filter((x) => x.h === h && x.n === n)
        .map((x) => `${x.peer} ${x.ms ? x.ms.toFixed(2) + ' ms' : 'failed'}`).join(', ')}`);
    }
  return records;
}

const fmt = (x, digits = 2) => (x === undefined ? '–' : x >= 100 ? x.toFixed(0) : x.toFixed(digits));
const mib = (b) => (b === undefined ? '' : `${(b / 2 ** 20).toFixed(b < 2 ** 20 ? 2 : 1)} MiB`);

/** Markdown: one row per measurement, then one summary row per (h, n) with the targets. */
export function formatReport(records, { ceiling, env }) {
  const lines = [];
  lines.push(`attnlens benchmark — ${env}`);
  if (ceiling)
    lines.push(`SIMD128 ceiling (12 f32x4 mul+add chains, best of ${ceiling.runs} after warm-up): ` +
      `${ceiling.gflops.toFixed(1)} GFLOP/s (median ${ceiling.median.toFixed(1)}, min ${ceiling.min.toFixed(1)}).`,
    '"% ceiling" divides by the probe\'s median over the same rounds as the figure (it runs once per',
    'round, after the contestants), so that load from other processes affects both alike; "% best" divides',
    'by the best probe result above.');
  lines.push('FLOPs counted as 4·h·n²·d (d = 64); times are medians of timed samples after warm-up, each call',
    'including copying inputs in and outputs out (a sample averages back-to-back calls when one is',
    'under 5 ms); ×ours = peer time ÷ attnlens output-only time;',
    'heap/call = the wasm heap a call of ours needs at its peak (its buffers + engine scratch).', '');
  lines.push('| h | n | contestant | ms | GFLOP/s | % ceiling | % best | ×ours | heap/call | note |');
  lines.push('|---:|---:|---|---:|---:|---:|---:|---:|---:|---|');
  const pct = (x) => (x ? fmt(x, 0) + ' %' : '–');
  for (const r of records)
    lines.push(`| ${r.h} | ${r.n} | ${r.label} | ${r.ms ? fmt(r.ms) : '–'} | ${r.ms ? fmt(r.gflops, 1) : '–'} | ` +
      `${pct(r.pctCeiling)} | ${pct(r.pctBestCeiling)} | ${r.oursSpeedup ? fmt(r.oursSpeedup, 1) + '×' : ''} | ` +
      `${mib(r.heapBytesPerCall)} | ${r.error ?? r.note ?? ''} |`);

  lines.push('', 'Summary (attnlens output-only vs the best onnxruntime-web variant, plain JS, the ceiling):', '');
  lines.push('| h | n | attnlens ms | GFLOP/s | % ceiling (best) | + weights ms | best ORT ms (variant) | ×ORT | ×TF.js | ×plain JS | ×scalar | heap/call (+ weights) |');
  lines.push('|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|');
  for (const s of summarize(records))
    lines.push(`| ${s.h} | ${s.n} | ${fmt(s.ours?.ms)} | ${fmt(s.ours?.gflops, 1)} | ` +
      `${pct(s.ours?.pctCeiling)} (${pct(s.ours?.pctBestCeiling)}) | ${fmt(s.weights?.ms)} | ` +
      `${s.ort ? `${fmt(s.ort.ms)} (${s.ort.peer.replace('ort-', '')})` : '–'} | ${fmt(s.vsOrt, 1)} | ` +
      `${fmt(s.vsTfjs, 1)} | ${fmt(s.vsJs, 0)} | ${fmt(s.vsScalar, 1)} | ` +
      `${mib(s.ours?.heapBytesPerCall)}${s.weights ? ` (${mib(s.weights.heapBytesPerCall)})` : ''} |`);
  return lines.join('\n');
}

export function summarize(records) {
  const keys = [...new Set(records.map((r) => `${r.h},${r.n}`))];
  return keys.map((key) => {
    const [h, n] = key.split(',').map(Number);
    const at = records.filter((r) => r.h === h && r.n === n);
    const get = (id) => at.find((r) => r.peer === id && r.ms);
    const ours = get('attnlens');
    const ort = at.filter((r) => r.peer.startsWith('ort-') && r.ms).sort((a, b) => a.ms - b.ms)[0];
    const ratio = (r) => (r && ours ? r.ms / ours.ms : undefined);
    return {
      h, n, ours, weights: get('attnlens-weights'), ort,
      vsOrt: ratio(ort), vsTfjs: ratio(get('tfjs-wasm')), vsJs: ratio(get('plain-js')),
      vsScalar: ratio(get('attnlens-scalar')),
    };
  });
}

/** The issue's targets, judged on these records. */
export function judgeTargets(records) {
  const out = [];
  for (const s of summarize(records)) {
    if (s.h === 8 && s.vsOrt !== undefined)
      out.push({ target: '≥ 2× best ORT (h=8)', h: s.h, n: s.n, value: s.vsOrt, met: s.vsOrt >= 2 });
    if (s.h === 8 && s.n >= 512 && s.ours?.pctCeiling !== undefined)
      out.push({ target: '≥ 60 % of ceiling (h=8, n≥512)', h: s.h, n: s.n, value: s.ours.pctCeiling, met: s.ours.pctCeiling >= 60 });
    if (s.vsJs !== undefined)
      out.push({ target: '≥ 40× plain JS', h: s.h, n: s.n, value: s.vsJs, met: s.vsJs >= 40 });
  }
  return out;
}

export function formatTargets(judged) {
  return judged.map((t) => `${t.met ? 'MET    ' : 'NOT MET'}  ${t.target}  h=${t.h} n=${t.n}: ` +
    `${t.target.includes('%') ? t.value.toFixed(0) + ' %' : t.value.toFixed(2) + '×'}`).join('\n');
}

/** One JSON object per measurement (and one for the ceiling). */
export function jsonLines(records, { ceiling, env, runtime }) {
  const lines = [];
  if (ceiling) lines.push(JSON.stringify({ kind: 'ceiling', runtime, env, ...ceiling }));
  for (const r of records) {
    const { label, ...rest } = r;
    lines.push(JSON.stringify({ kind: 'measurement', runtime, label, ...rest }));
  }
  return lines.join('\n');
}
