// npm run bench:models [-- --shapes gpt2-small,smollm-135m --runs 5 --json FILE --no-browser]
// npm run bench:models -- --big      (issue 21 §5: TinyLlama-1.1B's shape in BF16, Node)
// Whole models, ours against onnxruntime-web (Node, the ONNX graph; one process per thread
// count) and llama.cpp's wasm build (@wllama/wllama, headless Chromium, a cross-origin-isolated
// page; one and two threads), on random-weight files the bench writes (model-files.js) into
// .build/bench-models/. Every peer is checked against ours before it is timed. Prints a table,
// issue 21 §4's targets as ratios (met / missed), and with --json FILE all of it as JSON.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { configJson, gpt2TokenizerJson, llama2cTokenizer, safetensorsBytes } from './model-files.js';
import { ggufBytes } from './model-gguf.js';
import { onnxBytes } from './model-onnx.js';
import { parameterCount, shapeOf, weightBytesPerToken } from './model-shapes.js';
import { formatModels, judgeModels } from './models-report.js';
import { commandLine, machine } from './record.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FILES_VERSION = 3;  // bump when the writers change, so old files are rewritten

export const DEFAULTS = {
  shapes: ['gpt2-small', 'smollm-135m'], runs: 5, threads: [1, 2], lengths: [128, 512], seed: 1,
  promptTokens: 32, newTokens: 128, prefillTokens: 256, generateRuns: 3, bandwidthMiB: 256,
  browser: true, big: false, json: null, dir: path.join(ROOT, '.build/bench-models'),
};

const HELP = `npm run bench:models [-- options]
  --shapes a,b        model shapes (scripts/bench/model-shapes.js; default ${DEFAULTS.shapes})
  --runs N            timed rounds per forward-pass length (default ${DEFAULTS.runs})
  --lengths a,b       forward-pass lengths (default ${DEFAULTS.lengths})
  --threads a,b       thread counts (ours against onnxruntime-web / wllama on as many) (default ${DEFAULTS.threads})
  --new-tokens N      greedy tokens after the ${DEFAULTS.promptTokens}-token prompt (default ${DEFAULTS.newTokens})
  --prefill-tokens N  prompt length of the prefill measurement (default ${DEFAULTS.prefillTokens})
  --generate-runs N   timed greedy / prefill runs (default ${DEFAULTS.generateRuns})
  --bandwidth-mib N   buffer of the read-bandwidth probe (default ${DEFAULTS.bandwidthMiB})
  --no-browser        Node only (no wllama, no Chromium page)
  --big               issue 21 §5: TinyLlama-1.1B's shape in BF16 (load + generate, Node and an isolated page)
  --seed N            the random weights' seed (default ${DEFAULTS.seed})
  --dir DIR           where the model files go (default .build/bench-models)
  --json FILE         write every measurement as JSON`;

export function parseArgs(argv) {
  const o = { ...DEFAULTS };
  const ints = (s, flag) => s.split(',').map((x) => {
    const v = Number(x);
    if (!Number.isInteger(v) || v < 1) throw new Error(`${flag}: '${x}' is not a positive integer`);
    return v;
  });
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const take = () => {
      if (argv[i + 1] === undefined) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    if (flag === '--shapes') o.shapes = take().split(',').map((s) => shapeOf(s.trim()).name);
    else if (flag === '--runs') [o.runs] = ints(take(), flag);
    else if (flag === '--lengths') o.lengths = ints(take(), flag);
    else if (flag === '--threads') o.threads = ints(take(), flag);
    else if (flag === '--new-tokens') [o.newTokens] = ints(take(), flag);
    else if (flag === '--prefill-tokens') [o.prefillTokens] = ints(take(), flag);
    else if (flag === '--generate-runs') [o.generateRuns] = ints(take(), flag);
    else if (flag === '--bandwidth-mib') [o.bandwidthMiB] = ints(take(), flag);
    else if (flag === '--seed') [o.seed] = ints(take(), flag);
    else if (flag === '--dir') o.dir = path.resolve(take());
    else if (flag === '--no-browser') o.browser = false;
    else if (flag === '--big') o.big = true;
    else if (flag === '--json') o.json = path.resolve(take());
    else if (flag === '--help' || flag === '-h') o.help = HELP;
    else throw new Error(`unknown option ${flag}\n${HELP}`);
  }
  return o;
}

// Node's fs moves at most 2 GiB per call: files above that (--big) go in pieces.
const PIECE = 2 ** 30;

export function writeBytes(file, bytes) {
  const fd = openSync(file, 'w');
  try {
    for (let at = 0; at < bytes.byteLength; at += PIECE) writeSync(fd, bytes, at, Math.min(PIECE, bytes.byteLength - at));
  } finally {
    closeSync(fd);
  }
}

export function readBytes(file) {
  const fd = openSync(file, 'r');
  try {
    const out = new Uint8Array(fstatSync(fd).size);
    for (let at = 0; at < out.byteLength;) at += readSync(fd, out, at, Math.min(PIECE, out.byteLength - at), at);
    return out;
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a shape's files (once per shape, seed and writer version) into `dir`/<shape>-<seed>/:
 * F32/ and F16/ (model.safetensors + config.json), the tokenizer, model.onnx, model-F32.gguf,
 * model-F16.gguf. Returns the folder.
 */
export function writeModelFiles(shape, { dir, seed, dtypes = ['F32', 'F16'], onnx = true, gguf = true, log = () => {} }) {
  const folder = path.join(dir, `${shape.name}-${seed}`);
  const stampFile = path.join(folder, 'stamp.json');
  const stamp = JSON.stringify({ version: FILES_VERSION, shape, seed, dtypes, onnx, gguf });
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return folder;
  mkdirSync(folder, { recursive: true });
  const t0 = performance.now();
  for (const dtype of dtypes) {
    mkdirSync(path.join(folder, dtype), { recursive: true });
    writeBytes(path.join(folder, dtype, 'model.safetensors'), safetensorsBytes(shape, dtype, seed));
    writeFileSync(path.join(folder, dtype, 'config.json'), JSON.stringify(configJson(shape, dtype), null, 2));
  }
  if (shape.arch === 'gpt2') writeFileSync(path.join(folder, 'tokenizer.json'), JSON.stringify(gpt2TokenizerJson(shape.vocab)));
  else writeFileSync(path.join(folder, 'tokenizer.bin'), llama2cTokenizer(shape.vocab));
  if (onnx) writeFileSync(path.join(folder, 'model.onnx'), onnxBytes(shape, seed));
  if (gguf) for (const dtype of ['F32', 'F16'].filter((d) => dtypes.includes(d)))
    writeBytes(path.join(folder, `model-${dtype}.gguf`), ggufBytes(shape, dtype, seed));
  writeFileSync(stampFile, stamp);
  log(`wrote ${shape.name}'s files (${parameterCount(shape).toLocaleString('en-US')} parameters) in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${folder}`);
  return folder;
}

const RELAXED = '--experimental-wasm-relaxed-simd';
const NODE_SCRIPT = fileURLToPath(new URL('./models-node.mjs', import.meta.url));

/** Runs models-node.mjs in a process of its own; its RESULT line, parsed. */
export function runNode(spec, { log = () => {} } = {}) {
  const child = spawnSync(process.execPath, [RELAXED, NODE_SCRIPT, '--spec', JSON.stringify(spec)],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 });
  for (const line of child.stderr.split('\n')) if (line.trim() && !line.includes('threaded build did not start')) log(line);
  const line = child.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (child.status !== 0 || !line)
    throw new Error(`models-node.mjs (${spec.shape}, ${spec.threads} threads) failed with status ${child.status}: ${child.stderr.trim().split('\n').slice(-5).join(' | ')}`);
  return JSON.parse(line.slice('RESULT '.length));
}

export function environment() {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  return { node: process.versions.node, cpu, cores: os.cpus().length, memoryBytes: os.totalmem() };
}

/** Every measurement of one shape: Node processes (one per thread count), then the page. */
export async function benchShape(name, o, { log = () => {} } = {}) {
  const shape = shapeOf(name);
  const folder = writeModelFiles(shape, { dir: o.dir, seed: o.seed, log });
  const base = { shape: name, dir: folder, dtypes: ['F32', 'F16'], lengths: o.lengths, runs: o.runs,
    promptTokens: o.promptTokens, newTokens: o.newTokens, prefillTokens: Math.min(o.prefillTokens, shape.context - 1),
    generateRuns: o.generateRuns, bandwidthMiB: o.bandwidthMiB };
  // One process per thread count, ours and onnxruntime-web on that many threads in each: loads,
  // memory, forward passes and decoding (the report's load and memory rows are the first's).
  const node = o.threads.map((threads) => runNode({ ...base, threads, generate: true }, { log }));
  let browser = null;
  if (o.browser) {
    const { runModelsInBrowser } = await import('./models-browser.mjs');
    browser = await runModelsInBrowser({ ...base, folder: path.relative(ROOT, folder), threads: o.threads }, { log });
  }
  return {
    shape: { ...shape, parameters: parameterCount(shape),
      weightBytesPerToken: { F32: weightBytesPerToken(shape, 4), F16: weightBytesPerToken(shape, 2) } },
    node, browser,
  };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  // What report.mjs heads the tables with (record.js: the command less --json, and the machine).
  const command = commandLine('scripts/bench/models.mjs', process.argv.slice(2));
  if (o.help) return console.log(o.help);
  const log = (s) => console.error(s.startsWith('[') ? s : `[bench:models] ${s}`);
  const env = { ...environment(), loadAverage: { start: os.loadavg() } };
  log(`Node ${env.node}, ${env.cpu}, ${env.cores} cores, load average ${env.loadAverage.start.map((x) => x.toFixed(2)).join(' ')}`);
  if (o.big) {
    const { benchBig } = await import('./models-big.mjs');
    const big = await benchBig(o, { log });
    env.loadAverage.end = os.loadavg();
    console.log(big.text);
    if (o.json) writeFileSync(o.json, JSON.stringify({ kind: 'bench:models --big', command, machine: machine(), env, ...big.json }, null, 2));
    return;
  }
  const shapes = [];
  for (const name of o.shapes) shapes.push(await benchShape(name, o, { log }));
  env.loadAverage.end = os.loadavg();
  const targets = judgeModels(shapes);
  console.log(formatModels(shapes, targets, env));
  if (o.json) {
    writeFileSync(o.json, JSON.stringify({ kind: 'bench:models', command, machine: machine(), env, options: { ...o, dir: undefined }, shapes, targets }, null, 2));
    log(`JSON written to ${o.json}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
