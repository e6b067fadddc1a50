// Types for `attnlens/single` (web/dist/attnlens-single.js): the engine API and every figure in
// one file, the SIMD engine's wasm inlined. Importing it registers the figures. Hand-written;
// checked by tests/types with tsc.
export * from './elements/index.js';
export { init, Lens, simdSupported } from './attnlens.js';
export type {
  AttentionOptions, AttentionResult, AttentionResultWithScores, InitOptions, MemoryUse,
  MultiHeadOptions, MultiHeadResult,
} from './attnlens.js';
