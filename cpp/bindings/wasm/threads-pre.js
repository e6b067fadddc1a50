// --pre-js of the threaded engine build (-pthread). Emscripten's glue starts its pthread pool with
// `new Worker(url)`; this declaration (hoisted over the whole module factory) lets the JS layer
// hand in a Worker class where the runtime has none: Node's worker_threads behind a Web Worker
// face (web/engine/node-worker.js). In browsers Module.attnlensWorker is unset: the page's Worker.
var Worker = Module['attnlensWorker'] || globalThis.Worker;
// The workers import this glue from its own URL (wherever a bundler put it): see
// web/engine/pthread-worker.js.
Module['mainScriptUrlOrBlob'] = Module['mainScriptUrlOrBlob'] || _scriptDir;
