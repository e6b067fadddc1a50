// The threaded engine builds: when they can run, how many threads to use, and what Emscripten's
// pthread glue needs from the JS layer (a Worker class under Node, fresh heap views).
import { isNode } from './runtime.js';

/** Whether this runtime can run a -pthread build: shared memory (Node; pages with crossOriginIsolated). */
export function threadsSupported() {
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics !== 'object') return false;
  if (isNode) return true;
  // Browsers define SharedArrayBuffer only in cross-origin-isolated pages, but check the flag too.
  return globalThis.crossOriginIsolated === true && typeof Worker === 'function';
}

/** Threads used when `threads: true` (or omitted): the cores the runtime reports, at most 8. */
export async function defaultThreads() {
  let cores = 1;
  if (isNode) {
    const os = process.getBuiltinModule?.('os') ?? (await import(/* @vite-ignore */ `${'node:'}os`));
    cores = os.availableParallelism?.() ?? os.cpus().length;
  } else {
    cores = globalThis.navigator?.hardwareConcurrency ?? 1;
  }
  return Math.max(1, Math.min(8, cores | 0));
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

/**
 * Module arguments for a threaded build with `threads` threads: the caller plus `threads − 1`
 * pool workers, started before the module resolves.
 */
export async function threadedModuleArgs(threads) {
  const args = {
    attnlensWorkers: threads - 1,
    // The glue warns once when the calling thread waits for the workers; that wait is the design
    // (the caller computes its share, then waits for the rest), so the warning is not passed on.
    printErr: (text) => {
      if (!/^Blocking on the main thread/.test(text)) console.warn(`attnlens: ${text}`);
    },
  };
  // The glue's `new Worker(url of its own *.worker.js)` is answered with our worker script
  // (pthread-worker.js): a constructor that returns an object makes `new` return that object.
  args.attnlensWorker = isNode ? await nodeWorkerClass() : function PoolWorker() {
    return new Worker(new URL('./pthread-worker.js', import.meta.url), { type: 'module' });
  };
  return args;
}

// A Web Worker face over worker_threads: what the pthread glue uses (onmessage, onerror,
// postMessage, terminate). Each worker is unref'd once it has loaded, so that an idle pool never
// keeps Node running: a script ends when its own work does.
async function nodeWorkerClass() {
  const threads = process.getBuiltinModule?.('worker_threads') ??
    (await import(/* @vite-ignore */ `${'node:'}worker_threads`));
  const bootstrap = new URL('./node-worker.js', import.meta.url);
  const script = new URL('./pthread-worker.js', import.meta.url).href;
  return class NodeWorker {
    #thread;
    constructor() {
      this.#thread = new threads.Worker(bootstrap, { workerData: { script } });
      this.#thread.on('message', (data) => {
        if (data?.cmd === 'loaded') this.#thread.unref();
        this.onmessage?.({ data });
      });
      this.#thread.on('error', (error) => this.onerror?.(error));
    }
    postMessage(message, transfer) {
      this.#thread.postMessage(message, transfer);
    }
    terminate() {
      return this.#thread.terminate();
    }
  };
}

const VIEWS = {
  HEAP8: Int8Array, HEAPU8: Uint8Array, HEAP16: Int16Array, HEAPU16: Uint16Array,
  HEAP32: Int32Array, HEAPU32: Uint32Array, HEAPF32: Float32Array, HEAPF64: Float64Array,
};

/**
 * The module with heap views that follow memory growth. In a -pthread build a worker thread may
 * grow the shared memory (its scratch), which the glue's HEAP* views on this thread do not see.
 */
export function withFreshViews(module) {
  const memory = module.wasmMemory;
  let buffer = null;
  const views = {};
  return new Proxy(module, {
    get(target, name, receiver) {
      if (!Object.hasOwn(VIEWS, name)) return Reflect.get(target, name, receiver);
      if (memory.buffer !== buffer) {
        buffer = memory.buffer;
        for (const key of Object.keys(views)) delete views[key];
      }
      return (views[name] ??= new VIEWS[name](buffer));
    },
  });
}
