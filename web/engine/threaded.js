// Starting a threaded engine build: how many threads by default, and what Emscripten's pthread
// glue needs from the JS layer (a Worker class, fresh heap views). Imported by init() only when a
// threaded build is chosen, so single-thread pages never load it.
import { isNode } from './runtime.js';

/**
 * A Lens on the threaded build of `build` with `requested` threads (0: the default count, which
 * shares the instance of that explicit count through `withThreads`). A build that fails to
 * start (e.g. a CSP that refuses workers) gives the single-thread Lens (`single()`), with a warning.
 */
export async function startThreaded(build, requested, { instantiate, Lens, withThreads, single }) {
  if (requested === 0) return withThreads(build, await defaultThreads());
  if (requested === 1) return single();
  const { args, failed, stop } = await threadedModuleArgs(requested);
  try {
    const module = withFreshViews(await Promise.race([instantiate(`${build}-threads`, args), failed]));
    module.setThreads(requested);
    return new Lens(module, true, build, requested);
  } catch (error) {
    stop();
    console.warn(`attnlens: the threaded build did not start (${error?.message ?? error}); using one thread`);
    return single();
  }
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
 * Module arguments for a threaded build with `threads` threads (the caller plus `threads − 1`
 * pool workers, started before the module resolves), and `failed`: a promise that rejects when a
 * worker cannot start (a CSP without workers, a missing file), where the glue would wait forever.
 * `stop()` terminates the workers started so far.
 */
export async function threadedModuleArgs(threads) {
  let fail;
  const failed = new Promise((_, reject) => { fail = reject; });
  failed.catch(() => {});
  const started = [];
  const PoolWorker = poolWorkerClass(isNode ? await nodeThreadStarter() : browserThreadStarter, started, fail);
  const args = {
    attnlensWorkers: threads - 1,
    // The glue's `new Worker(url of its own *.worker.js)` gets a PoolWorker instead: our worker
    // script (pthread-worker.js) behind the Web Worker face the glue uses.
    attnlensWorker: PoolWorker,
    // The glue warns once when the calling thread waits for the workers; that wait is the design
    // (the caller computes its share, then waits for the rest), so the warning is not passed on.
    printErr: (text) => {
      if (!/^Blocking on the main thread/.test(text)) console.warn(`attnlens: ${text}`);
    },
  };
  return { args, failed, stop: () => started.forEach((w) => w.terminate()) };
}

// What the pthread glue uses of a worker: onmessage, onerror, postMessage, terminate. An error
// before the worker has loaded is a failed start (reported through `fail`, not to the glue). In
// Node each worker is unref'd once loaded, so that an idle pool never keeps the process running.
function poolWorkerClass(startThread, started, fail) {
  return class PoolWorker {
    #thread;
    #loaded = false;
    constructor() {
      this.#thread = startThread({
        message: (data) => {
          if (data?.cmd === 'loaded' && !this.#loaded) {
            this.#loaded = true;
            this.#thread.unref?.();
          }
          this.onmessage?.({ data });
        },
        error: (error) => {
          if (this.#loaded) this.onerror?.(error);
          else fail(new Error(`a worker did not start: ${error?.message ?? 'refused (Content-Security-Policy worker-src?)'}`));
        },
      });
      started.push(this);
    }
    postMessage(message, transfer) {
      this.#thread.postMessage(message, transfer);
    }
    terminate() {
      return this.#thread.terminate();
    }
  };
}

// Browsers: a module worker from a URL literal next to this file, a form bundlers follow.
function browserThreadStarter(on) {
  const worker = new Worker(new URL('./pthread-worker.js', import.meta.url), { type: 'module' });
  worker.addEventListener('message', (e) => on.message(e.data));
  worker.addEventListener('error', (e) => { e.preventDefault(); on.error(e); });
  return worker;
}

// Node: a worker_threads thread running node-worker.js, which gives pthread-worker.js the Web
// Worker globals it expects.
async function nodeThreadStarter() {
  const threads = process.getBuiltinModule?.('worker_threads') ??
    (await import(/* @vite-ignore */ `${'node:'}worker_threads`));
  const bootstrap = new URL('./node-worker.js', import.meta.url);
  const script = new URL('./pthread-worker.js', import.meta.url).href;
  return (on) => {
    const thread = new threads.Worker(bootstrap, { workerData: { script } });
    thread.on('message', on.message);
    thread.on('error', on.error);
    return thread;
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
