// Finds and instantiates the wasm module that sits next to this package's files, in Node and in
// browsers, without any network request: Node reads the .wasm from disk; browsers fetch it from
// the same folder as the module (the URL is relative to import.meta.url, so bundlers see it).

import { isNode, relaxedSimdSupported, simdSupported } from './runtime.js';

export { isNode, relaxedSimdSupported, simdSupported };

/** The engine builds this loader has, fastest first (init() takes the first the runtime runs). */
export const ENGINE_BUILDS = ['relaxed', 'simd', 'scalar'];

// Literal URLs, one per build, so that bundlers can find and copy the files.
const builds = {
  // SIMD128 + relaxed SIMD's fused multiply-add (f32x4.relaxed_madd).
  relaxed: {
    factory: () => import('../dist/attnlens-relaxed.mjs'),
    wasm: () => new URL('../dist/attnlens-relaxed.wasm', import.meta.url),
  },
  simd: {
    factory: () => import('../dist/attnlens-simd.mjs'),
    wasm: () => new URL('../dist/attnlens-simd.wasm', import.meta.url),
  },
  scalar: {
    factory: () => import('../dist/attnlens-scalar.mjs'),
    wasm: () => new URL('../dist/attnlens-scalar.wasm', import.meta.url),
  },
  // The threaded builds (-pthread): the same kernels, work split across a pool of workers
  // (web/engine/threaded.js starts them from pthread-worker.js; the .worker.js emcc writes beside
  // each .mjs is not used).
  'relaxed-threads': {
    factory: () => import('../dist/attnlens-relaxed-threads.mjs'),
    wasm: () => new URL('../dist/attnlens-relaxed-threads.wasm', import.meta.url),
  },
  'simd-threads': {
    factory: () => import('../dist/attnlens-simd-threads.mjs'),
    wasm: () => new URL('../dist/attnlens-simd-threads.wasm', import.meta.url),
  },
  // The opt-in model add-on (engine + USE-lite + Llama family), imported only by lens.loadModel().
  model: {
    factory: () => import('../dist/attnlens-model.mjs'),
    wasm: () => new URL('../dist/attnlens-model.wasm', import.meta.url),
  },
  'model-relaxed': {
    factory: () => import('../dist/attnlens-model-relaxed.mjs'),
    wasm: () => new URL('../dist/attnlens-model-relaxed.wasm', import.meta.url),
  },
  // The model add-on's threaded builds (web/model/loading.js picks them where threads run).
  'model-threads': {
    factory: () => import('../dist/attnlens-model-threads.mjs'),
    wasm: () => new URL('../dist/attnlens-model-threads.wasm', import.meta.url),
  },
  'model-relaxed-threads': {
    factory: () => import('../dist/attnlens-model-relaxed-threads.mjs'),
    wasm: () => new URL('../dist/attnlens-model-relaxed-threads.wasm', import.meta.url),
  },
};

/** A Node built-in module ('fs', 'path', ...) without a static `node:` import. */
export async function nodeBuiltin(name) {
  return process.getBuiltinModule?.(name) ?? (await import(/* @vite-ignore */ `${'node:'}${name}`));
}

async function readFileNode(url) {
  // process.getBuiltinModule keeps `node:` imports out of the source, which bundlers would
  // otherwise try to resolve for the browser.
  const fs = process.getBuiltinModule?.('fs') ?? (await import(/* @vite-ignore */ `${'node:'}fs`));
  return fs.readFileSync(url);
}

/**
 * Instantiates one build ('relaxed', 'simd', 'scalar', 'relaxed-threads', 'simd-threads', 'model',
 * 'model-relaxed', 'model-threads' or 'model-relaxed-threads') and returns the Emscripten module;
 * `extra` adds module arguments (a threaded build needs threaded.js's threadedModuleArgs).
 */
export async function instantiate(variant, extra = {}) {
  const build = builds[variant];
  const { default: createModule } = await build.factory();
  const moduleArgs = {
    print: () => {},
    printErr: (text) => console.warn(`attnlens: ${text}`),
    ...extra,
  };
  if (isNode) moduleArgs.wasmBinary = await readFileNode(build.wasm());
  return createModule(moduleArgs);
}
