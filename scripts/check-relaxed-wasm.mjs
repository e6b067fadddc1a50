// Build step for the relaxed-SIMD modules: fails unless every instruction of the SIMD prefix
// (0xfd) beyond SIMD128 is a final relaxed-SIMD opcode (0x100–0x113), and unless the module uses
// f32x4.relaxed_madd at all (a build without it would be a SIMD128 build under another name).
// clang 14 emitted draft opcodes (f32x4.qfma was 0xfd 0xaf 0x01) that every current engine
// rejects; this catches such a toolchain. Decoding is llvm-objdump's (LLVM 19 splits wasm code
// into instructions but prints relaxed ones as <unknown>, with their bytes).
//   node scripts/check-relaxed-wasm.mjs file.wasm [path/to/llvm-objdump]
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const [file, objdump = 'llvm-objdump-19'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/check-relaxed-wasm.mjs file.wasm [llvm-objdump]');
  process.exit(2);
}

// The final relaxed-SIMD opcodes (WebAssembly 3.0), after the 0xfd prefix.
const RELAXED = new Map([
  [0x100, 'i8x16.relaxed_swizzle'], [0x101, 'i32x4.relaxed_trunc_f32x4_s'],
  [0x102, 'i32x4.relaxed_trunc_f32x4_u'], [0x103, 'i32x4.relaxed_trunc_f64x2_s_zero'],
  [0x104, 'i32x4.relaxed_trunc_f64x2_u_zero'], [0x105, 'f32x4.relaxed_madd'],
  [0x106, 'f32x4.relaxed_nmadd'], [0x107, 'f64x2.relaxed_madd'], [0x108, 'f64x2.relaxed_nmadd'],
  [0x109, 'i8x16.relaxed_laneselect'], [0x10a, 'i16x8.relaxed_laneselect'],
  [0x10b, 'i32x4.relaxed_laneselect'], [0x10c, 'i64x2.relaxed_laneselect'],
  [0x10d, 'f32x4.relaxed_min'], [0x10e, 'f32x4.relaxed_max'], [0x10f, 'f64x2.relaxed_min'],
  [0x110, 'f64x2.relaxed_max'], [0x111, 'i16x8.relaxed_q15mulr_s'],
  [0x112, 'i16x8.relaxed_dot_i8x16_i7x16_s'], [0x113, 'i32x4.relaxed_dot_i8x16_i7x16_add_s'],
]);

function leb(bytes) {
  let v = 0, shift = 0;
  for (const b of bytes) {
    v += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (!(b & 0x80)) break;
  }
  return v;
}

const bytes = readFileSync(file);
if (bytes.readUInt32LE(0) !== 0x6d736100) throw new Error(`${file} is not a wasm module`);
const listing = execFileSync(objdump, ['-d', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
const counts = new Map();
const bad = [];
for (const line of listing.split('\n')) {
  // "     1a1: fd 85 02     	<unknown>"
  const m = /^\s*([0-9a-f]+):\s+((?:[0-9a-f]{2} )+)\s*<unknown>/.exec(line);
  if (!m) continue;
  const code = m[2].trim().split(' ').map((h) => parseInt(h, 16));
  const name = code[0] === 0xfd ? RELAXED.get(leb(code.slice(1))) : undefined;
  if (name) counts.set(name, (counts.get(name) ?? 0) + 1);
  else bad.push(`0x${m[1]}: ${m[2].trim()}`);
}
if (bad.length) {
  console.error(`${file}: ${bad.length} instruction(s) that are not final WebAssembly opcodes ` +
    `(a draft relaxed-SIMD toolchain?), e.g.\n  ${bad.slice(0, 5).join('\n  ')}`);
  process.exit(1);
}
if (!counts.get('f32x4.relaxed_madd')) {
  console.error(`${file}: no f32x4.relaxed_madd at all: the kernels were not built with relaxed SIMD`);
  process.exit(1);
}
console.log(`${file}: final opcodes only; relaxed SIMD: ` +
  [...counts].map(([k, v]) => `${k} ×${v}`).join(', '));
