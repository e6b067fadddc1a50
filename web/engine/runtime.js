// What the current JavaScript runtime can do: shared by the loaders (the package's and the
// single-file build's).

// A minimal module using one SIMD128 instruction: validates only where SIMD is supported.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15,
  253, 98, 11,
]);

export function simdSupported() {
  try {
    return WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

// A minimal module using f32x4.relaxed_madd (final opcode 0xfd 0x85 0x02) on three splats:
// validates only where relaxed SIMD is on (Chromium, Firefox; Node 20 with
// --experimental-wasm-relaxed-simd; never Safari).
const RELAXED_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 19, 1, 17, 0, 65, 0, 253, 15,
  65, 0, 253, 15, 65, 0, 253, 15, 253, 133, 2, 11,
]);

export function relaxedSimdSupported() {
  try {
    return WebAssembly.validate(RELAXED_PROBE);
  } catch {
    return false;
  }
}

export const isNode =
  typeof process === 'object' && typeof process.versions?.node === 'string' &&
  typeof window === 'undefined';
