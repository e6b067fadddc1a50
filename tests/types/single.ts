// The single-file build, `attnlens/single`: the engine API and every figure from one module.
import { AttnHeatmap, init, parseData, simdSupported } from 'attnlens/single';
import type { AttentionOptions, Lens } from 'attnlens/single';

const lens: Lens = await init();
const options: AttentionOptions = { dK: 2 };
const weights: Float32Array = lens.attention(new Float32Array(4), new Float32Array(4), new Float32Array(4), options).weights;
const heatmap: AttnHeatmap = document.createElement('attn-heatmap');
const supported: boolean = simdSupported();

// @ts-expect-error dK is a number
lens.attention(new Float32Array(4), new Float32Array(4), new Float32Array(4), { dK: '2' });

export { weights, heatmap, supported, parseData };
