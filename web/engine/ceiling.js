// The steady-state f32x4 ceiling behind lens.ceilingProbe(). V8 runs a wasm function's first
// calls in baseline code and swaps in optimised code only later, and on a shared machine a slow
// call says only that something else ran: so warm up (≥ warmupCalls calls and ≥ warmupMs), then
// time `calls` calls and report the best (the machine's ceiling) with the median and the worst.
import * as check from './validate.js';

const FLOPS_PER_STEP = 96;  // 12 chains × 4 lanes × (multiply + add)
const OPTIONS = ['iterations', 'calls', 'warmupMs', 'warmupCalls', 'clock'];

function nonNegative(name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number (got ${check.describe(value)})`);
  if (!(value >= 0) || value === Infinity)
    throw new RangeError(`${name} must be a finite number ≥ 0 (got ${value})`);
  return value;
}

const wallClock = () => performance.now();

function sample(module, iterations, fused, clock = wallClock) {
  const start = clock();
  module.ceilingProbe(iterations, fused);
  return clock() - start;
}

function summary(ms, flops) {
  const gflops = ms.map((t) => flops / t / 1e6).sort((a, b) => a - b);
  const mid = gflops.length >> 1;
  const median = gflops.length % 2 ? gflops[mid] : (gflops[mid - 1] + gflops[mid]) / 2;
  return { gflops: gflops[gflops.length - 1], median, min: gflops[0], ms: Math.min(...ms) };
}

function iterationsOf(value) {
  const n = check.positiveInteger('iterations', value, 1e6);
  if (n > 0xffffffff) throw new RangeError(`iterations must be < 2^32 (got ${n})`);
  return n;
}

/** One call of the mul+add chains: the single-sample form, lens.ceilingProbe(iterations). */
export function probeOnce(module, iterations) {
  const n = iterationsOf(iterations);
  const ms = sample(module, n, false);
  const flops = FLOPS_PER_STEP * n;
  return { flops, ms, gflops: flops / ms / 1e6, op: 'mul+add' };
}

/**
 * The steady state, lens.ceilingProbe(options): mul+add, and fused multiply-add where the build
 * has it (relaxed SIMD), interleaved call by call so that load from other processes hits both.
 * `gflops` is the best result of the instruction the build's kernels use.
 */
export function steadyCeiling(module, opts) {
  const o = check.options('options', opts, OPTIONS);
  const iterations = iterationsOf(o.iterations);
  const calls = check.positiveInteger('options.calls', o.calls, 15);
  const warmupCalls = nonNegative('options.warmupCalls', o.warmupCalls, 20);
  const warmupMs = nonNegative('options.warmupMs', o.warmupMs, 200);
  // A clock in milliseconds; e.g. the process's CPU time, which a shared machine disturbs less.
  const clock = o.clock ?? wallClock;
  if (typeof clock !== 'function') throw new TypeError(`options.clock must be a function (got ${check.describe(clock)})`);
  const hasFma = module.probeHasFma();
  const ops = hasFma ? [false, true] : [false];
  const t0 = performance.now();
  let warm = 0;
  for (; warm < warmupCalls || performance.now() - t0 < warmupMs; warm++)
    for (const fused of ops) sample(module, iterations, fused, clock);
  const times = ops.map(() => []);
  for (let i = 0; i < calls; i++) ops.forEach((fused, j) => times[j].push(sample(module, iterations, fused, clock)));
  const flops = FLOPS_PER_STEP * iterations;
  const mulAdd = summary(times[0], flops);
  const fma = hasFma ? summary(times[1], flops) : null;
  const main = fma ?? mulAdd;
  return {
    gflops: main.gflops, median: main.median, min: main.min, ms: main.ms, flops,
    op: fma ? 'fma' : 'mul+add', mulAdd, fma, iterations, calls, warmupCalls: warm,
  };
}
