// Stands in for web/engine/load.js inside the single-file build: the SIMD engine only, its wasm
// bytes inlined gzip-compressed as base64 (no request, nothing to host next to the file) and
// inflated by DecompressionStream, which every runtime that validates SIMD128 has.
import createModule from '../../web/dist/attnlens-simd.mjs';
import wasmGzipBase64 from 'virtual:attnlens-simd-wasm';

import { isNode, relaxedSimdSupported, simdSupported } from '../../web/engine/runtime.js';

export { isNode, relaxedSimdSupported, simdSupported };

/** The only engine build inlined here. */
export const ENGINE_BUILDS = ['simd'];

function decode(base64) {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

async function inflate(gzipped) {
  const stream = new Blob([gzipped]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Instantiates the inlined SIMD build (the only one in this file). */
export async function instantiate(variant) {
  if (variant !== 'simd')
    throw new Error(
      `the single-file build of attnlens contains only the SIMD engine (asked for '${variant}'); ` +
      'use the package\'s regular entry for the scalar engine or the model add-on');
  return createModule({
    print: () => {},
    printErr: (text) => console.warn(`attnlens: ${text}`),
    wasmBinary: await inflate(decode(wasmGzipBase64)),
  });
}
