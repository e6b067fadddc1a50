// The benchmark itself, shared by Node (bench.mjs) and Chromium (page.js): argument parsing,
// the ceiling probe, checking every peer against ours, warm-up, timed runs, and the report.
// Plain JavaScript with no imports from Node or the DOM.
import { makeInputs } from './peers.js';
import { independentCeiling } from './wasm-probe.js';
import { tileChoices } from '../../web/engine/tiles.js';

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
  --d 64                head width
  --cpu-time            time with the process's CPU time instead of the wall clock (Node only;
                        on a shared machine it excludes the time other processes held the core)`;

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
    else if (flag === '--cpu-time') o.cpuTime = true;
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
 * The steady-state ceiling, measured twice: through our fastest module (lens.ceilingProbe(),
 * compiled from cpp/src/probe.cpp) and through an independent module hand-encoded byte by byte
 * (wasm-probe.js); each takes the best of 8, 12, 16 and 24 independent f32x4 chains, mul+add and,
 * where the runtime has relaxed SIMD, fused multiply-add (warm-up, then `runs` calls). The best
 * call is the ceiling: on a shared machine a slow call says only that something else was running,
 * and a low ceiling would flatter the percentages; so per instruction the higher of the two
 * probes is the ceiling (`mulAdd`, `fma`, with `from` saying whose), and both are kept (`ours`,
 * `independent`).
 */
export function measureCeiling(lens, { runs = 15, iterations = 2e6, warmupMs = 300, clock } = {}) {
  const ours = lens.ceilingProbe({ iterations, calls: runs, warmupMs, clock });
  const independent = independentCeiling({ iterations, calls: runs, warmupMs, ...(clock && { clock }) });
  const higher = (op) => {
    const a = ours[op], b = independent[op];
    if (!a || !b) return a ?? b ?? null;
    return b.gflops > a.gflops ? { ...b, from: 'independent' } : { ...a, from: 'ours' };
  };
  const mulAdd = higher('mulAdd'), fma = higher('fma');
  const main = ours.fma ? fma : mulAdd;
  // The register tiles the relaxed build chose (web/engine/tiles.js: on its first large call), for the report.
  const tiles = tileChoices()[0] ?? null;
  return { gflops: main.gflops, median: main.median, op: ours.op, mulAdd, fma, ours, independent, iterations, runs, tiles };
}

/** One call of each probe at its best chain counts: a sample per benchmark round, per instruction the higher. */
function probeRound(lens, ceiling, clock) {
  const iterations = ceiling?.iterations ?? 2e6;
  const counts = (c) => [...new Set([c?.mulAdd?.chains ?? 12, ...(c?.fma ? [c.fma.chains] : [])])];
  const once = { calls: 1, warmupCalls: 0, warmupMs: 0, ...(clock && { clock }) };
  const ours = lens.ceilingProbe({ iterations, chains: counts(ceiling?.ours), ...once });
  const independent = independentCeiling({ iterations, chains: counts(ceiling?.independent), ...once });
  const best = (op) => Math.max(ours[op]?.gflops ?? 0, independent[op]?.gflops ?? 0) || undefined;
  return { mulAdd: best('mulAdd'), fma: ours.fma ? best('fma') : undefined };
}

/** The ceiling a record is held to: fused multiply-add for the relaxed build, mul+add otherwise. */
const ceilingOp = (rec) => (rec.build === 'relaxed' ? 'fma' : 'mulAdd');

/**
 * Runs every peer on every (h, n): checks its output against ours (attnlens output-only), warms
 * it up, then takes `runs` timed samples, round-robin across peers so that background load hits
 * all alike. A sample is one call, or the mean of k back-to-back calls when one call is short
 * (k = ⌈5 ms / first call⌉, so that browsers' coarse timers do not quantise it). Returns one record
 * per (h, n, peer).
 */
export async function runBenchmark({ peers, sizes, heads, runs, d, tolerance = DEFAULTS.tolerance,
                                     ceiling, lens, warmupMs = 250, log = () => {}, clock = now }) {
  const records = [];
  for (const h of heads)
    for (const n of sizes) {
      const inputs = makeInputs(h, n, d, 1000 * h + n);
      const flops = flopsOf(h, n, d);
      const live = [];
      let reference = null;
      for (const peer of peers) {
        const rec = { h, n, d, peer: peer.id, label: peer.label, ours: !!peer.ours };
        if (peer.build) rec.build = peer.build;
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
      const probe = { mulAdd: [], fma: [] };
      for (let r = 0; r < runs; r++) {
        for (const x of live) {
          const t0 = clock();
          for (let b = 0; b < x.batch; b++) await x.p.run();
          x.times.push((clock() - t0) / x.batch);
          if (x.p.memory) x.memory = x.p.memory();  // read before another peer's call
        }
        if (lens) {
          const c = probeRound(lens, ceiling, clock === now ? undefined : clock);
          probe.mulAdd.push(c.mulAdd);
          if (c.fma) probe.fma.push(c.fma);
        }
      }
      const localCeiling = (op) => (probe[op].length ? median(probe[op]) : undefined);
      for (const { p, rec, heads, times, memory } of live) {
        const scaleUp = h / heads;  // plain JS above maxN: one head timed
        rec.runs = times.length;
        rec.ms = median(times) * scaleUp;
        rec.msMin = Math.min(...times) * scaleUp;
        rec.gflops = flops / rec.ms / 1e6;
        const op = ceilingOp(rec), local = localCeiling(op), best = ceiling?.[op]?.gflops;
        if (local) {
          rec.ceilingOp = op;
          rec.ceilingSameRounds = local;
          rec.pctCeiling = (100 * rec.gflops) / local;
        }
        if (best) rec.pctBestCeiling = (100 * rec.gflops) / best;
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

const gf = (x) => (x === undefined ? '–' : x.toFixed(1));

/** The ceiling lines: both probes at the start of the run and, when measured, at its end. */
export function formatCeiling(ceiling) {
  if (!ceiling) return [];
  const op = (c, name) => (c ? `${name} ${gf(c.gflops)} (median ${gf(c.median)}, ${c.chains} chains)` : `no ${name}`);
  const probe = (c) => `${op(c.mulAdd, 'mul+add')}, ${op(c.fma, 'fused multiply-add')}`;
  const when = (c) => (c.ours && c.independent
    ? `ours (lens.ceilingProbe()) ${probe(c.ours)}; independent (a hand-encoded module, scripts/bench/wasm-probe.js) ${probe(c.independent)}`
    : probe(c));
  const lines = [`Ceiling, GFLOP/s: the best of 8, 12, 16 and 24 independent f32x4 chains, steady state (warm-up, then best of ` +
    `${ceiling.runs ?? ceiling.calls} calls each). At the start: ${when(ceiling)}` +
    (ceiling.end ? `. At the end: ${when(ceiling.end)}.` : '.')];
  lines.push('"% ceiling" divides by the higher of the two probes\' per-round medians (each runs once per round,',
    'after the contestants, at its best chain count), so that load from other processes affects both alike;',
    '"% best" divides by the higher of the two start-of-run probes. The relaxed build is held to the fused',
    'multiply-add ceiling, every other contestant to mul+add.');
  const t = ceiling.end?.tiles ?? ceiling.tiles;  // chosen during the run, by its first large call
  if (t)
    lines.push(`Register tiles of the relaxed build, chosen on its first large call (web/engine/tiles.js): ${t.wide ? '6 × 2' : '4 × 2'} ` +
      (t.ms ? `(a timed attention call, best of ${t.rounds} rounds: 4 × 2 ${t.ms[0].toFixed(2)} ms, 6 × 2 ${t.ms[1].toFixed(2)} ms).`
        : '(not timed: this V8 is known to spill the 6 × 2 tile).'));
  return lines;
}

/** Markdown: one row per measurement, then one summary row per (h, n) with the targets. */
export function formatReport(records, { ceiling, env }) {
  const lines = [];
  lines.push(`attnlens benchmark — ${env}`);
  lines.push(...formatCeiling(ceiling));
  lines.push('FLOPs counted as 4·h·n²·d (d = 64); times are medians of timed samples after warm-up, each call',
    'including copying inputs in and outputs out (a sample averages back-to-back calls when one is',
    'under 5 ms); ×ours = peer time ÷ attnlens output-only time (fastest build);',
    'heap/call = the wasm heap a call of ours needs at its peak (its buffers + engine scratch).', '');
  lines.push('| h | n | contestant | ms | GFLOP/s | % ceiling | % best | ×ours | heap/call | note |');
  lines.push('|---:|---:|---|---:|---:|---:|---:|---:|---:|---|');
  const pct = (x) => (x ? fmt(x, 0) + ' %' : '–');
  for (const r of records)
    lines.push(`| ${r.h} | ${r.n} | ${r.label} | ${r.ms ? fmt(r.ms) : '–'} | ${r.ms ? fmt(r.gflops, 1) : '–'} | ` +
      `${pct(r.pctCeiling)} | ${pct(r.pctBestCeiling)} | ${r.oursSpeedup ? fmt(r.oursSpeedup, 1) + '×' : ''} | ` +
      `${mib(r.heapBytesPerCall)} | ${r.error ?? r.note ?? ''} |`);

  lines.push('', 'Summary (attnlens output-only on each build vs the best onnxruntime-web variant, TF.js, plain JS):', '');
  lines.push('| h | n | fastest build | ms | GFLOP/s | % ceiling (best) | + weights ms | SIMD128 ms | SIMD128 % ceiling | best ORT ms (variant) | ×ORT | ×ORT SIMD128 | ×TF.js | ×plain JS | ×scalar | heap/call (+ weights) |');
  lines.push('|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|');
  for (const s of summarize(records))
    lines.push(`| ${s.h} | ${s.n} | ${s.ours?.build ?? '–'} | ${fmt(s.ours?.ms)} | ${fmt(s.ours?.gflops, 1)} | ` +
      `${pct(s.ours?.pctCeiling)} (${pct(s.ours?.pctBestCeiling)}) | ${fmt(s.weights?.ms)} | ` +
      `${fmt(s.simd?.ms)} | ${pct(s.simd?.pctCeiling)} | ` +
      `${s.ort ? `${fmt(s.ort.ms)} (${s.ort.peer.replace('ort-', '')})` : '–'} | ${fmt(s.vsOrt, 2)} | ${fmt(s.simdVsOrt, 2)} | ` +
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
    // The SIMD128 build: its own row when the fastest build is relaxed, else the fastest row.
    const simd = get('attnlens-simd') ?? (ours?.build === 'simd' ? ours : undefined);
    const ort = at.filter((r) => r.peer.startsWith('ort-') && r.ms).sort((a, b) => a.ms - b.ms)[0];
    const ratio = (r, of = ours) => (r && of ? r.ms / of.ms : undefined);
    return {
      h, n, ours, simd, weights: get('attnlens-weights'), ort,
      vsOrt: ratio(ort), simdVsOrt: ratio(ort, simd), vsTfjs: ratio(get('tfjs-wasm')),
      vsJs: ratio(get('plain-js')), vsScalar: ratio(get('attnlens-scalar')),
    };
  });
}

/**
 * The issue's targets, judged on these records: one thread, h = 8, d = 64; the relaxed build
 * ≥ 2× the best ORT graph, SIMD128 (what Node runs without its relaxed-SIMD flag) ≥ 1.6×, and
 * ≥ 80 % of the running build's ceiling for n ≥ 512.
 */
export function judgeTargets(records) {
  const out = [];
  for (const s of summarize(records)) {
    if (s.h !== 8) continue;
    const relaxed = s.ours?.build === 'relaxed' ? s.ours : undefined;
    if (relaxed && s.vsOrt !== undefined)
      out.push({ target: 'relaxed ≥ 2× best ORT', h: s.h, n: s.n, value: s.vsOrt, met: s.vsOrt >= 2 });
    if (s.simdVsOrt !== undefined)
      out.push({ target: 'SIMD128 ≥ 1.6× best ORT', h: s.h, n: s.n, value: s.simdVsOrt, met: s.simdVsOrt >= 1.6 });
    for (const r of [relaxed, s.simd])
      if (r && s.n >= 512 && r.pctCeiling !== undefined)
        out.push({ target: `${r.build} ≥ 80 % of its ceiling`, h: s.h, n: s.n, value: r.pctCeiling, met: r.pctCeiling >= 80 });
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
