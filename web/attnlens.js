// attnlens: attention computed by a C++/WebAssembly SIMD engine.
//   import { init } from 'attnlens';
//   const lens = await init();
//   const { weights, output } = lens.attention(q, k, v, { dK: 64 });
import { Lens } from './engine/lens.js';
import { instantiate, simdSupported } from './engine/load.js';

export { Lens, simdSupported };

const instances = new Map();

/**
 * Loads the engine once per build and returns it; later calls return the same instance.
 * `simd: false` forces the scalar build (default: SIMD when the runtime supports it).
 */
export function init(options = {}) {
  if (options === null || typeof options !== 'object')
    throw new TypeError(`init options must be an object (got ${options === null ? 'null' : typeof options})`);
  for (const key of Object.keys(options))
    if (key !== 'simd') throw new TypeError(`init has an unknown option '${key}' (known: simd)`);
  if (options.simd !== undefined && typeof options.simd !== 'boolean')
    throw new TypeError('init options.simd must be true or false');
  const simd = options.simd ?? simdSupported();
  if (simd && !simdSupported())
    return Promise.reject(new Error('this runtime does not support WebAssembly SIMD128'));
  const variant = simd ? 'simd' : 'scalar';
  if (!instances.has(variant)) {
    const pending = instantiate(variant).then((module) => new Lens(module, simd));
    pending.catch(() => instances.delete(variant));  // a failed load may be retried
    instances.set(variant, pending);
  }
  return instances.get(variant);
}
