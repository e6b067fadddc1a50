// One worker of the threaded engine builds' pthread pool, in browsers and (through
// node-worker.js) in Node. It does the job of the `*.worker.js` Emscripten 3.1.6 emits beside
// the glue — adapted from Emscripten's src/worker.js (MIT licence, © 2015 The Emscripten
// Authors) for a web, ES-module, Embind build — but it is started by web/engine/threads.js as
// `new Worker(new URL('./pthread-worker.js', import.meta.url), { type: 'module' })`, a form
// bundlers follow, and it imports the glue from the URL the main thread sends (the glue's own
// import.meta.url, i.e. wherever a bundler put it), not from a file name fixed at link time.
let Module = {};
let embindReady = false;

self.alert = (...text) => postMessage({ cmd: 'alert', text: text.join(' '), threadId: Module._pthread_self() });

// The glue instantiates the wasm module the main thread compiled, with the shared memory.
Module.instantiateWasm = (info, receiveInstance) => {
  const instance = new WebAssembly.Instance(Module.wasmModule, info);
  receiveInstance(instance);
  Module.wasmModule = null;
  return instance.exports;
};

function run(data) {
  Module.__performance_now_clock_drift = performance.now() - data.time;
  Module.__emscripten_thread_init(data.threadInfoStruct, 0, 0, 1);
  Module.establishStackSpace();
  Module.PThread.receiveObjectTransfer(data);
  Module.PThread.threadInit();
  if (!embindReady) {
    Module.___embind_register_native_and_builtin_types();
    embindReady = true;
  }
  try {
    const result = Module.invokeEntryPoint(data.start_routine, data.arg);
    if (Module.keepRuntimeAlive()) Module.PThread.setExitStatus(result);
    else Module.__emscripten_thread_exit(result);
  } catch (ex) {
    if (ex === 'unwind') return;
    if (!(ex instanceof Module.ExitStatus)) throw ex;
    if (!Module.keepRuntimeAlive()) Module.__emscripten_thread_exit(ex.status);
  }
}

self.onmessage = (e) => {
  const data = e.data;
  try {
    if (data.cmd === 'load') {
      Module.wasmModule = data.wasmModule;
      Module.wasmMemory = data.wasmMemory;
      Module.buffer = data.wasmMemory.buffer;
      Module.ENVIRONMENT_IS_PTHREAD = true;
      import(/* @vite-ignore */ data.urlOrBlob)
        .then((glue) => glue.default(Module))
        .then((instance) => { Module = instance; });
    } else if (data.cmd === 'run') {
      run(data);
    } else if (data.cmd === 'cancel') {
      if (Module._pthread_self()) Module.__emscripten_thread_exit(-1);
    } else if (data.cmd === 'processThreadQueue') {
      if (Module._pthread_self()) Module._emscripten_current_thread_process_queued_calls();
    } else if (data.cmd === 'processProxyingQueue') {
      if (Module._pthread_self()) Module._emscripten_proxy_execute_queue(data.queue);
    } else if (data.target !== 'setimmediate') {
      console.error(`attnlens worker: unknown command ${data.cmd}`);
    }
  } catch (ex) {
    console.error(`attnlens worker: ${ex?.stack ?? ex}`);
    Module.__emscripten_thread_crashed?.();
    throw ex;
  }
};
