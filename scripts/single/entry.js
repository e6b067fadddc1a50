// The single-file build's entry (bundled by scripts/build-single.mjs into
// web/dist/attnlens-single.js, package entry `attnlens/single`): the engine API and every figure,
// registered on import, with the SIMD engine's wasm inlined.
export * from '../../web/elements/index.js';
export { init, Lens, simdSupported } from '../../web/attnlens.js';
