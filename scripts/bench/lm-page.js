// The language-model benchmark in the browser: scripts/bench/lm.mjs --browser opens this page.
import { init } from '../../web/attnlens.js';
import { benchLanguageModel } from './lm.js';

// One result per engine build (its model module): options.build 'relaxed' or 'simd'.
window.attnlensLmBench = async ({ build, ...options }) => {
  const lens = await init({ build });
  const lm = await lens.loadModel('stories260K');
  return { ...benchLanguageModel(lm, options), build: lm.info.build, userAgent: navigator.userAgent };
};
window.attnlensBenchReady = true;  // what bench-page.mjs waits for
