// Stands in for web/engine/load.js inside the single-file build: the SIMD engine only, its wasm
// bytes inlined as base64 (no request, nothing to host next to the file).
import createModule from '../../web/dist/attnlens-simd.mjs';
import wasmBase64 from 'virtual:attnlens-simd-wasm-base64';

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

/** Instantiates the inlined SIMD build (the only one in this file). */
export async function instantiate(variant) {
  if (variant !== 'simd')
    throw new Error(
      `the single-file build of attnlens contains only the SIMD engine (asked for '${variant}'); ` +
      'use the package\'s regular entry for the scalar engine or the model add-on');
  return createModule({
    print: () => {},
    printErr: (text) => console.warn(`attnlens: ${text}`),
    wasmBinary: decode(wasmBase64),
  });
}
