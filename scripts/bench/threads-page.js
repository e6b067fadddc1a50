// The browser side of the threads section (threads-browser.mjs): ours threaded vs one thread vs
// onnxruntime-web with the same number of threads, in a cross-origin-isolated page (threads.js).
import { init } from '/web/attnlens.js';
import { ortPeers } from './peers.js';
import { runThreads, threadPeers } from './threads.js';

const status = (s) => { document.getElementById('status').textContent = s; };
const fromBase64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

window.attnlensThreadsBench = async (options, models, threads) => {
  status('running…');
  const peers = await threadPeers(init, threads);
  const ort = await import('/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs');
  const bytes = (h, d) => {
    const m = models[`${h},${d}`];
    return { plain: fromBase64(m.plain), mha: fromBase64(m.mha), attention23: fromBase64(m.attention23) };
  };
  peers.push(...ortPeers(ort, bytes, { threads }));
  const records = await runThreads({ options, peers, log: (s) => console.log(`[bench threads] ${s}`) });
  status('done');
  return { records, isolated: crossOriginIsolated, userAgent: navigator.userAgent };
};
window.attnlensBenchReady = true;
status('ready');
