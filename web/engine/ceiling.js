// The steady-state f32x4 ceiling behind lens.ceilingProbe(). V8 runs a wasm function's first
// calls in baseline code and swaps in optimised code only later, and on a shared machine a slow
// call says only that something else ran: so warm up (≥ warmupCalls calls and ≥ warmupMs), then
// time `calls` calls and report the best (the machine's ceiling) with the median and the worst.
// How many independent chains keep a core's vector pipes busy depends on its latencies and pipes
// (and on the registers V8 gives), so every chain count in `chains` is timed and the best wins.
import * as check from './validate.js';

const OPTIONS = ['iterations', 'calls', 'warmupMs', 'warmupCalls', 'clock', 'chains'];
/** The chain counts the module's probe has (cpp/src/probe.cpp) and the default set timed. */
export const CHAIN_COUNTS = [8, 12, 16, 24];
const NOMINAL_CHAINS = 12;  // `iterations` counts steps of 12 chains (96 flops): the earlier form

function nonNegative(name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number (got ${check.describe(value)})`);
  if (!(value >= 0) || value === Infinity)
    throw new RangeError(`${name} must be a finite number ≥ 0 (got ${value})`);
  return value;
}

function chainCounts(value) {
  if (value === undefined) return CHAIN_COUNTS;
  if (!Array.isArray(value)) throw new TypeError(`options.chains must be an array of chain counts (got ${check.describe(value)})`);
  if (value.length === 0 || value.some((c) => !CHAIN_COUNTS.includes(c)))
    throw new RangeError(`options.chains must list some of ${CHAIN_COUNTS.join(', ')} (got [${value.join(', ')}])`);
  return [...new Set(value)];
}

const wallClock = () => performance.now();

function sample(module, steps, fused, chains, clock = wallClock) {
  const start = clock();
  module.ceilingProbe(steps, fused, chains);
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
  const ms = sample(module, n, false, NOMINAL_CHAINS);
  const flops = 8 * NOMINAL_CHAINS * n;
  return { flops, ms, gflops: flops / ms / 1e6, op: 'mul+add' };
}

/**
 * The steady state, lens.ceilingProbe(options): mul+add, and fused multiply-add where the build
 * has it (relaxed SIMD), each with every chain count, interleaved call by call so that load from
 * other processes hits all alike. Every chain count does the flops of `iterations` steps of 12
 * chains. Per instruction the best chain count (by its best call) is reported, with `byChains`;
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
  const counts = chainCounts(o.chains);
  const hasFma = module.probeHasFma();
  const runs = [];
  for (const fused of hasFma ? [false, true] : [false])
    for (const chains of counts) {
      const steps = Math.max(1, Math.round((iterations * NOMINAL_CHAINS) / chains));
      runs.push({ fused, chains, steps, flops: 8 * chains * steps, ms: [] });
    }
  const t0 = performance.now();
  let warm = 0;
  for (; warm < warmupCalls || performance.now() - t0 < warmupMs; warm++)
    for (const r of runs) sample(module, r.steps, r.fused, r.chains, clock);
  for (let i = 0; i < calls; i++) for (const r of runs) r.ms.push(sample(module, r.steps, r.fused, r.chains, clock));
  const best = (fused) => {
    let top = null;
    const byChains = {};
    for (const r of runs.filter((x) => x.fused === fused)) {
      const s = { ...summary(r.ms, r.flops), chains: r.chains, flops: r.flops };
      byChains[r.chains] = s.gflops;
      if (!top || s.gflops > top.gflops) top = s;
    }
    return { ...top, byChains };
  };
  const mulAdd = best(false);
  const fma = hasFma ? best(true) : null;
  const main = fma ?? mulAdd;
  return {
    gflops: main.gflops, median: main.median, min: main.min, ms: main.ms, flops: main.flops,
    op: fma ? 'fma' : 'mul+add', chains: main.chains, mulAdd, fma, iterations, calls, warmupCalls: warm,
  };
}
