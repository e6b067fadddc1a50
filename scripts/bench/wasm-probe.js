// An independent ceiling probe for the benchmarks: a WebAssembly module written here byte by byte
// (no compiler, no build tool, nothing shared with the engine) whose one function runs `chains`
// independent f32x4 chains x ← x·a + b for n steps, as f32x4.mul then f32x4.add or as relaxed
// SIMD's f32x4.relaxed_madd. If the engine's probe (lens.ceilingProbe(), compiled by clang from
// cpp/src/probe.cpp) read low for a reason of its own, this one would not; the benchmarks print
// both and hold every contestant to the higher. Plain JavaScript: runs in Node and in browsers.

const CHAIN_COUNTS = [8, 12, 16, 24];

// Unsigned LEB128 (every count here is small, but encode it properly).
export function leb(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}

const f32 = (x) => [...new Uint8Array(new Float32Array([x]).buffer)];
export const section = (id, bytes) => [id, ...leb(bytes.length), ...bytes];
export const SIMD = 0xfd;
export const op = {
  localGet: 0x20, localSet: 0x21, f32Const: 0x43, i32Const: 0x41, i32Eqz: 0x45, i32Sub: 0x6b,
  block: 0x02, loop: 0x03, br: 0x0c, brIf: 0x0d, end: 0x0b, void: 0x40,
  f32x4Splat: [SIMD, ...leb(0x13)], f32x4ExtractLane: [SIMD, ...leb(0x1f)],
  f32x4Add: [SIMD, ...leb(0xe4)], f32x4Mul: [SIMD, ...leb(0xe6)],
  f32x4RelaxedMadd: [SIMD, ...leb(0x105)],  // the final (standardised) opcode
};

/** The module's bytes: export "probe" (n: i32) → f32, the sum of lane 0 of every chain. */
export function probeBytes(chains, fused) {
  // Local 0 is n; 1 = a, 2 = b, 3… = the chains.
  const A = 1, B = 2, X = (c) => 3 + c;
  const splat = (value, local) => [op.f32Const, ...f32(value), ...op.f32x4Splat, op.localSet, ...leb(local)];
  const body = [...splat(0.999, A), ...splat(0.001, B)];
  for (let c = 0; c < chains; c++) body.push(...splat(0.01 * c, X(c)));
  body.push(op.block, op.void, op.loop, op.void,
    op.localGet, 0, op.i32Eqz, op.brIf, 1);
  for (let c = 0; c < chains; c++) {
    const x = leb(X(c));
    body.push(op.localGet, ...x, op.localGet, A);
    if (fused) body.push(op.localGet, B, ...op.f32x4RelaxedMadd);  // x·a + b, one rounding or two
    else body.push(...op.f32x4Mul, op.localGet, B, ...op.f32x4Add);
    body.push(op.localSet, ...x);
  }
  body.push(op.localGet, 0, op.i32Const, 1, op.i32Sub, op.localSet, 0, op.br, 0, op.end, op.end);
  body.push(op.localGet, ...leb(X(0)));
  for (let c = 1; c < chains; c++) body.push(op.localGet, ...leb(X(c)), ...op.f32x4Add);
  body.push(...op.f32x4ExtractLane, 0, op.end);
  const locals = [1, ...leb(chains + 2), 0x7b];  // one group of v128 locals
  const code = [...leb(locals.length + body.length), ...locals, ...body];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 1, 0x7f, 1, 0x7d]),  // type 0: (i32) → f32
    ...section(3, [1, 0]),  // one function of type 0
    ...section(7, [1, 5, ...[...'probe'].map((ch) => ch.charCodeAt(0)), 0x00, 0]),
    ...section(10, [1, ...code]),
  ]);
}

const instances = new Map();  // one instance per kind, so that later calls run its optimised code

/** The instance's probe function, or null when this runtime does not validate the module. */
export function probeFunction(chains, fused) {
  const key = `${chains},${fused}`;
  if (!instances.has(key)) {
    const bytes = probeBytes(chains, fused);
    instances.set(key, WebAssembly.validate(bytes)
      ? new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.probe : null);
  }
  return instances.get(key);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * The same protocol as lens.ceilingProbe(): every (instruction, chain count) warmed up (≥
 * warmupCalls calls each and ≥ warmupMs in all), then `calls` calls each, interleaved; each call
 * does the flops of `iterations` steps of 12 chains. Returns per instruction the best chain
 * count's best, median and worst GFLOP/s, or fma: null where relaxed SIMD does not validate.
 */
export function independentCeiling({ iterations = 2e6, calls = 15, warmupCalls = 10, warmupMs = 200,
                                     chains = CHAIN_COUNTS, clock = () => performance.now() } = {}) {
  const runs = [];
  for (const fused of [false, true])
    for (const c of chains) {
      const probe = probeFunction(c, fused);
      if (!probe) continue;
      const steps = Math.max(1, Math.round((iterations * 12) / c));
      runs.push({ fused, chains: c, probe, steps, flops: 8 * c * steps, gflops: [] });
    }
  const once = (r) => {
    const t0 = clock();
    r.probe(r.steps);
    return r.flops / (clock() - t0) / 1e6;
  };
  const t0 = performance.now();
  for (let i = 0; i < warmupCalls || performance.now() - t0 < warmupMs; i++) runs.forEach(once);
  for (let i = 0; i < calls; i++) for (const r of runs) r.gflops.push(once(r));
  const best = (fused) => {
    let top = null;
    const byChains = {};
    for (const r of runs.filter((x) => x.fused === fused)) {
      const s = { gflops: Math.max(...r.gflops), median: median(r.gflops), min: Math.min(...r.gflops),
        chains: r.chains, flops: r.flops };
      byChains[r.chains] = s.gflops;
      if (!top || s.gflops > top.gflops) top = s;
    }
    return top && { ...top, byChains };
  };
  return { mulAdd: best(false), fma: best(true), iterations, calls, source: 'hand-encoded wasm (scripts/bench/wasm-probe.js)' };
}
