// Node only: one pthread worker of the threaded engine build, run in a worker_threads thread.
// Emscripten's worker script (web/dist/*-threads.worker.js) is written for Web Workers: it sets
// self.onmessage and calls postMessage(). This gives it those globals, then loads it; messages
// that arrive while it loads are kept and handed over in order.
import { parentPort, workerData } from 'node:worker_threads';

const early = [];
globalThis.self = globalThis;
globalThis.postMessage = (message, transfer) => parentPort.postMessage(message, transfer);
parentPort.on('message', (data) => (typeof self.onmessage === 'function' ? self.onmessage({ data }) : early.push(data)));
await import(workerData.script);
for (const data of early.splice(0)) self.onmessage({ data });
