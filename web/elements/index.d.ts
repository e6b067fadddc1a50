// attnlens figures: importing the module registers <attn-bars>, <attn-heatmap>, <attn-pipeline>,
// <attn-heads>, <attn-lines>, <attn-compare>, <attn-generate> and <attn-text>.
export { AttnBars } from './attn-bars.js';
export { AttnHeatmap } from './attn-heatmap.js';
export type { HeatmapLayout, HeatmapView } from './attn-heatmap.js';
export { AttnPipeline } from './attn-pipeline.js';
export { AttnHeads } from './attn-heads.js';
export { AttnLines } from './attn-lines.js';
export { AttnCompare } from './attn-compare.js';
export { AttnGenerate } from './attn-generate.js';
export type { GenerateChangeDetail, GenerateFrame } from './attn-generate.js';
export { AttnText } from './attn-text.js';
export type { TextDirection } from './attn-text.js';
export { AttnElement, loadEngine } from './lib/base.js';
export type {
  AttnChangeDetail, AttnData, AttnErrorDetail, AttnResult, AttnState, AttentionData, HeadChoice, LayerChoice, Mask, ModelData,
  ColorScale, Numbers, ProjectionData, Scale, Step, StandaloneOptions, VectorData,
} from './lib/base.js';

export declare class DataError extends Error {}
export declare const MAX_TOKENS: number;
/** Checks data as a figure would (throws DataError with a readable message). */
export declare function parseData(input: unknown, options?: { maxTokens?: number; maxPrecomputedTokens?: number }): Readonly<Record<string, unknown>>;
