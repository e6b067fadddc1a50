// The threads section of the benchmarks, the same in Node (threads.mjs, run by bench.mjs) and in
// Chromium (threads-page.js, run by browser.mjs in a cross-origin-isolated page): our threaded
// build against our single-thread build of the same SIMD flavour, and against onnxruntime-web
// with the same number of threads. Output only, wall clock (CPU time would add the threads up).
// Plain JavaScript with no imports from Node or the DOM.
import * as core from './core.js';
import { attnlensPeer } from './peers.js';

/** `--threads N` taken out of argv (default: `fallback`), the rest for core.parseArgs. */
export function threadsArg(argv, fallback) {
  const rest = [...argv];
  const at = rest.indexOf('--threads');
  if (at < 0) return { threads: fallback, rest };
  const threads = Number(rest[at + 1]);
  if (!Number.isInteger(threads) || threads < 2) throw new Error(`--threads: '${rest[at + 1]}' is not an integer ≥ 2`);
  rest.splice(at, 2);
  return { threads, rest };
}

/** Ours, single-thread first (every other contestant is checked against it), then threaded. */
export async function threadPeers(init, threads) {
  const threaded = await init({ threads });
  if (!threaded.threaded) throw new Error(`the threaded build did not start here (lens.threads = ${threaded.threads})`);
  const single = await init({ build: threaded.build, threads: false });
  return [
    attnlensPeer(single, { id: 'attnlens', label: `attnlens ${single.build}, 1 thread`, weights: false }),
    attnlensPeer(threaded, { id: 'attnlens-threads', label: `attnlens ${threaded.build}, ${threads} threads`, weights: false }),
  ];
}

export function runThreads({ options, peers, log }) {
  return core.runBenchmark({ ...options, peers, log, lens: undefined, ceiling: undefined });
}

/** Per (h, n): single, threaded, speed-up, best ORT graph with the same threads, ×ORT. */
export function summarizeThreads(records) {
  const keys = [...new Set(records.map((r) => `${r.h},${r.n}`))];
  return keys.map((key) => {
    const [h, n] = key.split(',').map(Number);
    const at = records.filter((r) => r.h === h && r.n === n && r.ms);
    const single = at.find((r) => r.peer === 'attnlens'), threaded = at.find((r) => r.peer === 'attnlens-threads');
    const ort = at.filter((r) => r.peer.startsWith('ort-')).sort((a, b) => a.ms - b.ms)[0];
    return {
      h, n, single, threaded, ort,
      speedup: single && threaded ? single.ms / threaded.ms : undefined,
      vsOrt: ort && threaded ? ort.ms / threaded.ms : undefined,
    };
  });
}

const fmt = (x, digits = 2) => (x === undefined ? '–' : x >= 100 ? x.toFixed(0) : x.toFixed(digits));

export function formatThreads(records, { threads, env }) {
  const lines = [`Threads — ${env}; ${threads} threads, output only, d = 64, wall clock (medians after warm-up).`,
    '×1 thread = our single-thread time ÷ threaded time (same SIMD flavour); ×ORT = the best onnxruntime-web',
    `graph's time with numThreads = ${threads} ÷ ours threaded.`, '',
    `| h | n | build | 1 thread ms | ${threads} threads ms | ×1 thread | best ORT ${threads} threads ms (graph) | ×ORT |`,
    '|---:|---:|---|---:|---:|---:|---|---:|'];
  const judged = [];
  for (const s of summarizeThreads(records)) {
    lines.push(`| ${s.h} | ${s.n} | ${s.threaded?.build ?? '–'} | ${fmt(s.single?.ms)} | ${fmt(s.threaded?.ms)} | ` +
      `${fmt(s.speedup)} | ${s.ort ? `${fmt(s.ort.ms)} (${s.ort.peer.replace('ort-', '')})` : '–'} | ${fmt(s.vsOrt)} |`);
    if (s.n >= 512 && s.speedup !== undefined)
      judged.push({ target: `threads ≥ 1.7× our single thread`, h: s.h, n: s.n, value: s.speedup, met: s.speedup >= 1.7 });
    if (s.vsOrt !== undefined)
      judged.push({ target: `threads ahead of ORT with ${threads} threads`, h: s.h, n: s.n, value: s.vsOrt, met: s.vsOrt > 1 });
  }
  const errors = records.filter((r) => r.error).map((r) => `  ${r.label} h=${r.h} n=${r.n}: ${r.error}`);
  if (errors.length) lines.push('', 'Not timed:', ...errors);
  lines.push('', 'Targets (issue 9, threads):', core.formatTargets(judged));
  return lines.join('\n');
}
