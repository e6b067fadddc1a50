// attnlens: attention computed by a C++/WebAssembly SIMD engine.
//   import { init } from 'attnlens';
//   const lens = await init();
//   const { weights, output } = lens.attention(q, k, v, { dK: 64 });
import { Lens } from './engine/lens.js';
import { ENGINE_BUILDS, instantiate, relaxedSimdSupported, simdSupported } from './engine/load.js';
import { threadsOption, threadsSupported } from './engine/threads.js';

export { Lens, relaxedSimdSupported, simdSupported, threadsSupported };

const instances = new Map();
const KNOWN = ['build', 'simd', 'threads'];
// SIMD flavours that have a threaded build (the scalar one has none).
const THREADED = ['relaxed', 'simd'];
const BUILD_NAMES = ['relaxed', 'simd', 'scalar'];

/** Whether this runtime can run `build` (and this loader has it). */
function runs(build) {
  if (!ENGINE_BUILDS.includes(build)) return false;
  if (build === 'relaxed') return relaxedSimdSupported();
  if (build === 'simd') return simdSupported();
  return true;
}

function chooseBuild(options) {
  if (options.simd !== undefined && typeof options.simd !== 'boolean')
    throw new TypeError('init options.simd must be true or false');
  if (options.build !== undefined) {
    if (typeof options.build !== 'string')
      throw new TypeError(`init options.build must be a string (one of ${BUILD_NAMES.join(', ')})`);
    if (!BUILD_NAMES.includes(options.build))
      throw new RangeError(`init options.build must be one of ${BUILD_NAMES.join(', ')} (got '${options.build}')`);
    if (options.simd !== undefined && options.simd !== (options.build !== 'scalar'))
      throw new RangeError(`init options.simd: ${options.simd} contradicts options.build '${options.build}'`);
    return options.build;
  }
  if (options.simd === false) return 'scalar';
  // The fastest build this runtime runs; simd: true asks for one of the SIMD builds.
  const best = ENGINE_BUILDS.find(runs);
  if (options.simd === true && best === 'scalar') return 'simd';  // rejected below, with a reason
  return best;
}

const UNSUPPORTED = {
  relaxed: 'this runtime does not support WebAssembly relaxed SIMD (in Node 20 run node with ' +
    '--experimental-wasm-relaxed-simd; Safari has none)',
  simd: 'this runtime does not support WebAssembly SIMD128',
};

/**
 * Loads the engine once per build and returns it; later calls return the same instance.
 * Default: the fastest build the runtime runs (relaxed SIMD, then SIMD128, then scalar);
 * `build` forces one, `simd: false` means build 'scalar'.
 */
export function init(options = {}) {
  if (options === null || typeof options !== 'object')
    throw new TypeError(`init options must be an object (got ${options === null ? 'null' : typeof options})`);
  for (const key of Object.keys(options))
    if (!KNOWN.includes(key)) throw new TypeError(`init has an unknown option '${key}' (known: ${KNOWN.join(', ')})`);
  const build = chooseBuild(options);
  const threads = threadsOption(options.threads);
  if (!runs(build))
    return Promise.reject(new Error(ENGINE_BUILDS.includes(build) ? UNSUPPORTED[build]
      : `this copy of attnlens has no '${build}' build (it has ${ENGINE_BUILDS.join(', ')})`));
  // Threads: the -pthread build of the same SIMD flavour where the runtime has shared memory
  // (Node, cross-origin-isolated pages); elsewhere, quietly, the single-thread build.
  if (threads !== 1 && THREADED.includes(build) && threadsSupported()) return initThreaded(build, threads);
  if (!instances.has(build)) {
    const pending = instantiate(build).then((module) => new Lens(module, build !== 'scalar', build));
    pending.catch(() => instances.delete(build));  // a failed load may be retried
    instances.set(build, pending);
  }
  return instances.get(build);
}

// One instance per (build, thread count); `requested` 0 means the default count (threaded.js).
function initThreaded(build, requested) {
  const key = `${build}-threads:${requested}`;
  if (!instances.has(key)) {
    const pending = import('./engine/threaded.js').then((t) => t.startThreaded(build, requested, {
      instantiate, Lens, withThreads: initThreaded, single: () => init({ build, threads: false }),
    }));
    pending.catch(() => instances.delete(key));
    instances.set(key, pending);
  }
  return instances.get(key);
}
