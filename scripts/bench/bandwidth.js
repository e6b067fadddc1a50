// The memory-read bandwidth bound of `npm run bench:models`: a WebAssembly module written here
// byte by byte (wasm-probe.js's encoder) whose one function sums a buffer far larger than the
// caches with four independent f32x4 accumulators, the access pattern of a matrix-vector product
// streaming its weights. Decoding one token reads every weight once, so bytes/s ÷ weight bytes
// per token bounds tokens/s. Plain JavaScript: runs in Node and in browsers.
import { median } from './core.js';
import { leb, op, section, SIMD } from './wasm-probe.js';

const PAGE = 65536;
const v128Load = (offset) => [SIMD, ...leb(0x00), 4, ...leb(offset)];  // align 2^4, offset

/** The module's bytes: memory of `pages` pages; export "sum" (ptr, bytes: i32) → f32. */
export function bandwidthBytes(pages) {
  const END = 6;  // locals: 0 ptr, 1 bytes, 2..5 accumulators (v128), 6 end (i32)
  const body = [op.localGet, 0, op.localGet, 1, 0x6a /* i32.add */, op.localSet, END,
    op.block, op.void, op.loop, op.void];
  for (let a = 0; a < 4; a++)
    body.push(op.localGet, 2 + a, op.localGet, 0, ...v128Load(16 * a), ...op.f32x4Add, op.localSet, 2 + a);
  body.push(op.localGet, 0, op.i32Const, 0xc0, 0x00 /* signed LEB128 64 */, 0x6a, 0x22 /* local.tee */, 0, op.localGet, END,
    0x49 /* i32.lt_u */, op.brIf, 0, op.end, op.end,
    op.localGet, 2, op.localGet, 3, ...op.f32x4Add, op.localGet, 4, ...op.f32x4Add, op.localGet, 5, ...op.f32x4Add,
    ...op.f32x4ExtractLane, 0, op.end);
  const locals = [2, 4, 0x7b, 1, 0x7f];
  const code = [...leb(locals.length + body.length), ...locals, ...body];
  const name = (s) => [s.length, ...[...s].map((c) => c.charCodeAt(0))];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 2, 0x7f, 0x7f, 1, 0x7d]),  // (i32, i32) → f32
    ...section(3, [1, 0]),
    ...section(5, [1, 0x00, ...leb(pages)]),  // one memory, no maximum
    ...section(7, [2, ...name('sum'), 0x00, 0, ...name('memory'), 0x02, 0]),
    ...section(10, [1, ...code]),
  ]);
}

/**
 * Read bandwidth in GB/s (10^9 bytes/s) over `mib` MiB written beforehand (untouched pages
 * would read the zero page): best, median and worst of `runs` sums after `warmup` sums.
 */
export function readBandwidth({ mib = 256, runs = 8, warmup = 2, clock = () => performance.now() } = {}) {
  const bytes = mib * 2 ** 20;
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bandwidthBytes(bytes / PAGE + 1)));
  const { sum, memory } = instance.exports;
  new Float32Array(memory.buffer, 0, bytes / 4).fill(1);
  const expected = bytes / 16;  // lane 0 of each of the 4 accumulators adds 1 per 64 bytes
  // V8 runs a wasm function in its baseline compiler until it has been hot for a while, and a long
  // call never switches: many short calls first, so that the timed calls run optimised code.
  for (let i = 0, t0 = performance.now(); i < 2000 || performance.now() - t0 < 100; i++) sum(0, 65536);
  const gbs = [];
  for (let i = 0; i < warmup + runs; i++) {
    const t0 = clock();
    const total = sum(0, bytes);
    const ms = clock() - t0;
    // A wrong sum means the loop did not read what it should (exact: counts stay below 2^24).
    if (total !== expected) throw new Error(`bandwidth probe: sum ${total}, expected ${expected}`);
    if (i >= warmup) gbs.push(bytes / ms / 1e6);
  }
  return { gbs: Math.max(...gbs), median: median(gbs), min: Math.min(...gbs), mib, runs, source: 'hand-encoded wasm (scripts/bench/bandwidth.js)' };
}
