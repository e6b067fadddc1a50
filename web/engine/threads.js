// The threaded engine builds: whether they can run here, and the `threads` option. What starting
// one takes is in threaded.js, imported only when a threaded build is chosen.
import { isNode } from './runtime.js';

/** Whether this runtime can run a -pthread build: shared memory (Node; pages with crossOriginIsolated). */
export function threadsSupported() {
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics !== 'object') return false;
  if (isNode) return true;
  // Browsers define SharedArrayBuffer only in cross-origin-isolated pages, but check the flag too.
  return globalThis.crossOriginIsolated === true && typeof Worker === 'function';
}

/**
 * The validated `threads` option: false → 1; true/undefined → 0 (meaning "the default");
 * an integer ≥ 1 → itself.
 */
export function threadsOption(value) {
  if (value === undefined || value === true) return 0;
  if (value === false) return 1;
  if (typeof value !== 'number')
    throw new TypeError(`init options.threads must be a boolean or a number of threads (got ${value === null ? 'null' : typeof value})`);
  if (!Number.isInteger(value) || value < 1 || value > MAX_THREADS)
    throw new RangeError(`init options.threads must be an integer from 1 to ${MAX_THREADS} (got ${value})`);
  return value;
}

/** The engine's cap (cpp/src/parallel.cpp kMaxThreads). */
export const MAX_THREADS = 16;

