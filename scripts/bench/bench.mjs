// npm run bench [-- --sizes 128,256 --heads 8 --runs 7 --peers attnlens,ort]
// One Node process, one run: attnlens on every build (relaxed SIMD output-only and with weights,
// SIMD128, scalar), onnxruntime-web (WASM EP, one thread, three graphs), TF.js wasm and plain JavaScript on
// d = 64, float32, inputs uniform in [-1, 1). Every peer is checked against attnlens before it is
// timed. Prints a Markdown table, the targets, and one JSON line per measurement; `--json FILE`
// also writes every section (this one and the threads section) to FILE, with the command and the
// machine, for scripts/bench/report.mjs.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { init } from '../../web/attnlens.js';
import * as core from './core.js';
import { buildModels } from './onnx-models.js';
import { commandLine, jsonArg, writeSections } from './record.js';
import { ortPeers, ourPeers, plainJsPeer, tfjsPeer } from './peers.js';

/** The contestants named in `wanted`, loaded from node_modules. */
export async function loadPeers(wanted, { jsMaxN = core.DEFAULTS.jsMaxN } = {}) {
  const { lens, peers } = await ourPeers(init, wanted);
  if (wanted.includes('ort')) {
    const ort = await import('onnxruntime-web');
    const cache = new Map();
    const models = (h, d) => {
      if (!cache.has(`${h},${d}`)) cache.set(`${h},${d}`, buildModels(h, d));
      return cache.get(`${h},${d}`);
    };
    peers.push(...ortPeers(ort, models));
  }
  if (wanted.includes('tfjs')) {
    const tf = await import('@tensorflow/tfjs-core');
    const wasm = await import('@tensorflow/tfjs-backend-wasm');
    tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);  // one thread, like everyone else
    wasm.setThreadsCount?.(1);
    if (!(await tf.setBackend('wasm'))) throw new Error('TF.js could not start its wasm backend');
    await tf.ready();
    peers.push(tfjsPeer(tf));
  }
  if (wanted.includes('js')) peers.push(plainJsPeer({ maxN: jsMaxN }));
  return { lens, peers };
}

const NATIVE = path.resolve(path.dirname(fileURLToPath(import.meta.url)),
  '../../.build/native/attnlens_bench_native');

export function environment() {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  return `Node ${process.versions.node} (V8 ${process.versions.v8}), ${cpu}, ${os.cpus().length} cores, one thread`;
}

const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';

async function main() {
  const argv = process.argv.slice(2);
  const { json, rest } = jsonArg(argv);
  const command = commandLine('scripts/bench/bench.mjs', argv);
  const options = core.parseArgs(rest);
  if (options.help) {
    console.log(options.help);
    return;
  }
  // Node 20 validates relaxed SIMD only behind a V8 flag (the library never sets it). The
  // benchmark runs itself again with the flag, so that one process has every build side by side:
  // the SIMD128 build's code is the same with or without the flag, so its ratios are what Node
  // users without the flag get.
  if (!process.execArgv.includes(RELAXED_FLAG) && !process.env.ATTNLENS_BENCH_NO_RELAXED) {
    const child = spawnSync(process.execPath, [...process.execArgv, RELAXED_FLAG,
      fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit', env: { ...process.env, ATTNLENS_BENCH_COMMAND: command } });
    process.exitCode = child.status ?? 1;
    return;
  }
  const { lens, peers } = await loadPeers(options.peers, options);
  const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
  const clock = options.cpuTime ? cpuMs : undefined;
  const env = `${environment()}${options.cpuTime ? '; times are process CPU time' : ''}`;
  const log = (s) => console.error(`[bench] ${s}`);
  log(`${env}; sizes ${options.sizes}, heads ${options.heads}, ${options.runs} runs`);
  const ceiling = core.measureCeiling(lens, { clock });
  log(`ceiling ${ceiling.gflops.toFixed(1)} GFLOP/s (ours ${ceiling.ours.gflops.toFixed(1)}, independent ` +
    `${(ceiling.ours.fma ? ceiling.independent.fma : ceiling.independent.mulAdd)?.gflops.toFixed(1)})`);
  const records = await core.runBenchmark({ ...options, peers, ceiling, lens, log, ...(clock && { clock }) });
  ceiling.end = core.measureCeiling(lens, { clock });
  log(`ceiling again after the run: ${ceiling.end.gflops.toFixed(1)} GFLOP/s (the table uses the first)`);
  console.log(core.formatReport(records, { ceiling, env }));
  console.log('\nTargets (issue 9; one thread, h = 8):');
  console.log(core.formatTargets(core.judgeTargets(records)));
  console.log(`\nwasm heap size at the end: ${(lens.memory().heapSize / 2 ** 20).toFixed(0)} MiB\n`);
  console.log(core.jsonLines(records, { ceiling, env, runtime: 'node' }));
  if (json) writeSections(json, [{ section: 'attention', runtime: 'node', env, cpuTime: !!options.cpuTime, ceiling, records }], { command, fresh: true });
  if (options.peers.includes('native')) {
    if (existsSync(NATIVE)) {
      log('native build of the same kernels (a separate process, after the above)');
      console.log(`\n${execFileSync(NATIVE, [String(options.runs), options.sizes.join(','),
        options.heads.join(',')], { encoding: 'utf8' })}`);
    } else {
      log(`no native benchmark at ${NATIVE}: run scripts/build.sh first`);
    }
  }
  // Threads (threads.mjs): a process of its own, since onnxruntime-web reads its thread count
  // once per process. ATTNLENS_BENCH_NO_THREADS=1 skips it.
  if (!process.env.ATTNLENS_BENCH_NO_THREADS) {
    log('threads: ours threaded vs one thread vs onnxruntime-web with as many threads (a separate process)');
    const threads = spawnSync(process.execPath, [...process.execArgv, THREADS_SCRIPT, ...process.argv.slice(2)
      .filter((a, i, all) => a !== '--cpu-time' && !(a === '--peers' || all[i - 1] === '--peers'))],
    { stdio: 'inherit', env: { ...process.env, ATTNLENS_BENCH_COMMAND: command, ATTNLENS_BENCH_APPEND: '1' } });
    if (threads.status !== 0) process.exitCode = threads.status ?? 1;
  }
}

const THREADS_SCRIPT = fileURLToPath(new URL('./threads.mjs', import.meta.url));

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
