// The language-model benchmark in the browser: scripts/bench/lm.mjs --browser opens this page.
import { init } from '../../web/attnlens.js';
import { benchLanguageModel } from './lm.js';

window.attnlensLmBench = async (options) => {
  const lens = await init();
  const lm = await lens.loadModel('stories260K');
  return { ...benchLanguageModel(lm, options), userAgent: navigator.userAgent };
};
window.attnlensLmBenchReady = true;
