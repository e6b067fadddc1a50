// node scripts/bench/threads.mjs [--threads N] [--sizes …] [--heads …] [--runs …] [--peers …]
// The threads section of `npm run bench` (which runs this as a process of its own: onnxruntime-web
// reads its thread count once per process): ours threaded vs ours single-thread vs onnxruntime-web
// with the same number of threads, in Node (threads.js). Default: one thread per core. `--json FILE`
// writes the section to FILE (appended when `npm run bench` runs this as its threads section).
import os from 'node:os';

import { init } from '../../web/attnlens.js';
import * as core from './core.js';
import { buildModels } from './onnx-models.js';
import { ortPeers } from './peers.js';
import { commandLine, jsonArg, writeSections } from './record.js';
import { formatThreads, runThreads, threadPeers, threadsArg } from './threads.js';

const cores = os.availableParallelism?.() ?? os.cpus().length;
const { json, rest: argv } = jsonArg(process.argv.slice(2));
const { threads, rest } = threadsArg(argv, Math.max(2, Math.min(8, cores)));
const options = core.parseArgs(rest);
if (options.help) {
  console.log(`${options.help}\n  --threads N           threads for ours and onnxruntime-web (default: the cores, ≥ 2)`);
} else {
  const log = (s) => console.error(`[bench threads] ${s}`);
  if (options.cpuTime) log('--cpu-time ignored here: CPU time adds up the threads, so this section uses the wall clock');
  const peers = await threadPeers(init, threads);
  if (options.peers.includes('ort')) {
    const ort = await import('onnxruntime-web');
    const cache = new Map();
    const models = (h, d) => cache.get(`${h},${d}`) ?? cache.set(`${h},${d}`, buildModels(h, d)).get(`${h},${d}`);
    peers.push(...ortPeers(ort, models, { threads }));
  }
  const [load] = os.loadavg();
  const env = `Node ${process.versions.node}, ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${cores} cores, load average ${load.toFixed(2)} at the start`;
  log(`${env}; ${threads} threads; sizes ${options.sizes}, heads ${options.heads}, ${options.runs} runs`);
  const records = await runThreads({ options, peers, log });
  console.log(`\n${formatThreads(records, { threads, env: `${env}, ${os.loadavg()[0].toFixed(2)} at the end` })}\n`);
  console.log(core.jsonLines(records, { env, runtime: 'node', threads }).split('\n')
    .map((l) => l.replace('"kind":"measurement"', '"kind":"threads"')).join('\n'));
  if (json)
    writeSections(json, [{ section: 'threads', runtime: 'node', env, threads, records }],
      { command: commandLine('scripts/bench/threads.mjs', process.argv.slice(2)), fresh: process.env.ATTNLENS_BENCH_APPEND !== '1' });
}
