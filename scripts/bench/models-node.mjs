// One Node process of `npm run bench:models` (models.mjs starts one per thread count:
// onnxruntime-web reads its thread count once per process). In this process, on the bench's
// files, both on spec.threads threads: ours (lm.run, and with `generate` greedy decoding and
// prefill) and onnxruntime-web (the ONNX graph), checked against each other before anything is
// timed, then timed in interleaved rounds.
// Prints one JSON line (prefixed 'RESULT ') on stdout; progress on stderr.
//   node --experimental-wasm-relaxed-simd scripts/bench/models-node.mjs --spec '{…}'
import { readFileSync } from 'node:fs';

import os from 'node:os';
import path from 'node:path';

import { init } from '../../web/attnlens.js';
import { readBandwidth } from './bandwidth.js';
import { promptIds } from './model-files.js';
import { shapeOf } from './model-shapes.js';
import { loadOurs, median, timeGreedy, timePrefill } from './models-ours.js';

const spec = JSON.parse(process.argv[process.argv.indexOf('--spec') + 1]);
const log = (s) => console.error(`[bench:models node ${spec.shape} ${spec.threads}t] ${s}`);
const shape = shapeOf(spec.shape);
const rss = () => process.memoryUsage().rss;
const read = (...p) => new Uint8Array(readFileSync(path.join(spec.dir, ...p)));
const files = (dtype) => ({ config: JSON.parse(readFileSync(path.join(spec.dir, dtype, 'config.json'), 'utf8')),
  weights: read(dtype, 'model.safetensors'), tokenizer: read(shape.arch === 'gpt2' ? 'tokenizer.json' : 'tokenizer.bin') });

const result = { runtime: 'node', node: process.versions.node, shape: spec.shape, threads: spec.threads,
  loadAverage: { start: os.loadavg()[0] }, ours: {}, ort: {} };
const errorOf = (e) => String(e?.message ?? e).split('\n')[0];

// Ours first (its own wasm module per model), then onnxruntime-web, each load measured alone.
// Ours runs on as many threads as onnxruntime-web does in this process: the ratios compare like
// with like.
const lens = await init({ threads: spec.threads });
result.ours.build = lens.build;
result.ours.threads = lens.threads;
const ours = {};
for (const dtype of spec.dtypes) {
  const bytes = files(dtype);
  const before = rss();
  try {
    const loaded = await loadOurs(lens, bytes);
    ours[dtype] = loaded.lm;
    // memory(): heapSize and inUse today; weights, kvCache and scratch bytes where the loader reports them.
    result.ours[dtype] = { loadMs: loaded.ms, heapBytes: loaded.memory.heapSize, heapInUse: loaded.memory.inUse, memory: loaded.memory,
      rssAddedBytes: rss() - before, fileBytes: bytes.weights.byteLength };
    log(`ours ${dtype}: loaded in ${loaded.ms.toFixed(0)} ms, heap ${(loaded.memory.heapSize / 2 ** 20).toFixed(0)} MiB`);
  } catch (e) {
    result.ours[dtype] = { error: errorOf(e) };
    log(`ours ${dtype}: does not load: ${errorOf(e)}`);
  }
}

const ort = await import('onnxruntime-web');
ort.env.wasm.numThreads = spec.threads;
ort.env.logLevel = 'error';
const graph = read('model.onnx');
let session;
{
  const before = rss();
  const t0 = performance.now();
  session = await ort.InferenceSession.create(graph, { graphOptimizationLevel: 'all', intraOpNumThreads: spec.threads, logSeverityLevel: 3 });
  result.ort.createMs = performance.now() - t0;
  result.ort.rssAddedAfterCreateBytes = rss() - before;
  result.ort.version = ort.env.versions?.web ?? 'unknown';
  result.ort.rssBefore = before;
}
const ortRun = async (ids) => {
  const out = await session.run({ ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [ids.length]) });
  return out;
};

// Agreement: last position's logits and every layer's attention at a short input.
const ref = ours.F32;
const checkIds = promptIds(shape, Math.min(16, shape.context));
const theirs = await ortRun(checkIds);
result.ort.rssAddedBytes = rss() - result.ort.rssBefore;  // after the first run: its arenas exist
if (ref) {
  const r = ref.run(checkIds);
  let logits = 0, scale = 0, attention = 0;
  for (let i = 0; i < shape.vocab; i++) {
    logits = Math.max(logits, Math.abs(r.logits[i] - theirs.logits.data[i]));
    scale = Math.max(scale, Math.abs(r.logits[i]));
  }
  for (let l = 0; l < shape.layers; l++) {
    const a = theirs[`attention_${l}`].data, b = r.layers[l].attention;
    if (a.length !== b.length) throw new Error(`attention_${l}: ${a.length} values from onnxruntime-web, ${b.length} from ours`);
    for (let i = 0; i < a.length; i++) attention = Math.max(attention, Math.abs(a[i] - b[i]));
  }
  result.agreement = { tokens: checkIds.length, logitsMaxAbs: logits, logitsScale: scale, attentionMaxAbs: attention,
    ok: logits <= 1e-3 * Math.max(1, scale) && attention <= 1e-4 };
  log(`agreement: logits ${logits.toExponential(2)} (of ${scale.toFixed(2)}), attention ${attention.toExponential(2)}`);
}

// Forward passes, ours and theirs alternating each round.
result.forward = [];
for (const n of spec.lengths.filter((x) => x <= shape.context)) {
  const ids = promptIds(shape, n, 11);
  const timeOne = async (fn) => { const t0 = performance.now(); await fn(); return performance.now() - t0; };
  const runOurs = ref ? () => ref.run(ids) : null;
  const runTheirs = () => ortRun(ids);
  if (runOurs) runOurs();
  await runTheirs();
  const ms = { ours: [], ort: [] };
  for (let i = 0; i < spec.runs; i++) {
    if (runOurs) ms.ours.push(await timeOne(runOurs));
    ms.ort.push(await timeOne(runTheirs));
  }
  const row = { tokens: n, oursMs: runOurs ? median(ms.ours) : null, ortMs: median(ms.ort), runs: spec.runs };
  result.forward.push(row);
  log(`forward n=${n}: ours ${row.oursMs?.toFixed(1) ?? '—'} ms, onnxruntime-web ${row.ortMs.toFixed(1)} ms`);
}

if (spec.generate) {
  result.bandwidth = { start: readBandwidth({ mib: spec.bandwidthMiB }) };
  log(`read bandwidth ${result.bandwidth.start.gbs.toFixed(1)} GB/s (best of ${result.bandwidth.start.runs})`);
  result.generate = {};
  for (const dtype of spec.dtypes) {
    const lm = ours[dtype];
    if (!lm) continue;
    const greedy = timeGreedy(lm, promptIds(shape, spec.promptTokens), { steps: spec.newTokens, runs: spec.generateRuns });
    const prefill = timePrefill(lm, promptIds(shape, spec.prefillTokens, 13), { runs: spec.generateRuns });
    result.generate[dtype] = { ...greedy, promptTokens: spec.promptTokens, prefill };
    log(`ours ${dtype}: greedy ${greedy.decodeTokensPerSecond.toFixed(1)} tokens/s, prefill of ${prefill.tokens} ${prefill.tokensPerSecond.toFixed(0)} tokens/s`);
  }
  result.bandwidth.end = readBandwidth({ mib: spec.bandwidthMiB });
}
result.loadAverage.end = os.loadavg()[0];
console.log(`RESULT ${JSON.stringify(result)}`);
