// attnlens figures: importing this module registers <attn-bars>, <attn-heatmap>,
// <attn-pipeline>, <attn-heads>, <attn-lines>, <attn-compare>, <attn-generate> and <attn-text>.
// Each can also be imported on its own (e.g. './attn-heatmap.js'). No network, no global
// styles, works under a strict CSP.
export { AttnBars } from './attn-bars.js';
export { AttnHeatmap } from './attn-heatmap.js';
export { AttnPipeline } from './attn-pipeline.js';
export { AttnHeads } from './attn-heads.js';
export { AttnLines } from './attn-lines.js';
export { AttnCompare } from './attn-compare.js';
export { AttnGenerate } from './attn-generate.js';
export { AttnText } from './attn-text.js';
export { AttnElement, loadEngine } from './lib/base.js';
export { DataError, MAX_TOKENS, parseData } from './lib/data.js';
