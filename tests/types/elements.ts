// The figures, `attnlens/elements` (registers all four) and one element on its own.
import 'attnlens/elements';
import { AttnBars, AttnElement, AttnHeads, AttnHeatmap, AttnLines, AttnPipeline, DataError, MAX_TOKENS, loadEngine, parseData } from 'attnlens/elements';
import type { AttnData, AttnState, StandaloneOptions } from 'attnlens/elements';
import { AttnHeatmap as SameHeatmap } from 'attnlens/elements/attn-heatmap.js';
import 'attnlens/elements/attn-bars.js';
import 'attnlens/elements/attn-pipeline.js';
import 'attnlens/elements/attn-heads.js';
import { AttnLines as SameLines } from 'attnlens/elements/attn-lines.js';
import { AttnCompare } from 'attnlens/elements/attn-compare.js';
import { AttnGenerate } from 'attnlens/elements/attn-generate.js';
import type { GenerateFrame } from 'attnlens/elements';
import type { Lens } from 'attnlens';

const heatmap: AttnHeatmap = document.createElement('attn-heatmap');
const same: SameHeatmap = heatmap;
const bars: AttnBars = document.createElement('attn-bars');
const pipeline: AttnPipeline = document.createElement('attn-pipeline');
const heads: AttnHeads = document.createElement('attn-heads');
const base: AttnElement = heads;

const data: AttnData = { tokens: ['a', 'b'], Q: [[1, 0], [0, 1]], K: [[1, 0], [0, 1]] };
heatmap.data = data;
bars.data = { tokens: 'a b', attention: [[1, 0], [0.5, 0.5]] };
pipeline.data = { tokens: ['a'], X: [[1, 2]], W_Q: [[1, 0], [0, 1]], W_K: [[1, 0], [0, 1]], W_V: [[1, 0], [0, 1]] };
heatmap.query = 'b';
heatmap.query = 1;
heatmap.mask = 'causal padding';
heatmap.scale = 'auto';
heatmap.scale = 0.5;
pipeline.step = 'softmax';
const state: AttnState = heatmap.state;
const drawn: Promise<boolean> = heatmap.updateComplete;
const message: string | null = heatmap.error;
const svg: string = bars.toSVG();
const narrow: string = bars.toSVG({ width: 320 });
const png: Promise<Blob> = bars.toPNG({ pixelRatio: 2 });
const html: Promise<string> = heatmap.toHTML({ theme: 'dark', title: 'Figure 1' });
const standalone: StandaloneOptions = {};
const sized: Promise<string> = bars.toHTML({ width: 360 });
const htmlDefault: Promise<string> = heads.toHTML(standalone);
heatmap.addEventListener('change', (event) => { const user: boolean = event.detail.user; });
heatmap.addEventListener('error', (event) => { const text: string = event.detail.message; });
const engine: Promise<Lens> = loadEngine();
const limit: number = MAX_TOKENS;
try { parseData({ tokens: [] }); } catch (e) { if (e instanceof DataError) e.message; }

// Aggregates, cross-attention, zoom (C2).
heatmap.head = 'mean';
heatmap.head = 'max';
heatmap.layer = 'rollout';
const chosen: number | 'mean' | 'max' = heatmap.head;
heatmap.data = { queryTokens: ['le', 'chat'], keyTokens: ['the', 'cat', '.'], attention: [[0.9, 0.05, 0.05], [0.1, 0.8, 0.1]] };
bars.data = { queryTokens: ['x'], keyTokens: ['a', 'b'], X: [[1, 0]], X_KV: [[1, 0], [0, 1]], W_Q: [[1, 0], [0, 1]], W_K: [[1, 0], [0, 1]], W_V: [[1, 0], [0, 1]] };
const keyCount: number | undefined = heatmap.result?.nK;
const keyTokens: string[] | undefined = heatmap.result?.keyTokens;
heatmap.zoomTo(4, { row: 10, col: 3 });
heatmap.zoomBy(0.5);
heatmap.resetZoom();
const zoom: number = heatmap.view.zoom;
heatmap.addEventListener('zoom', (event) => { const rows: number = event.detail.rows; });
// @ts-expect-error head is an index, 'mean' or 'max'
heatmap.head = 'sum';
// @ts-expect-error layer is an index or 'rollout'
heatmap.layer = 'mean';
// @ts-expect-error the view is read-only
heatmap.view = { zoom: 1, row: 0, col: 0, rows: 1, cols: 1, maxZoom: 1 };
// @ts-expect-error not a theme
heatmap.toHTML({ theme: 'sepia' });
// @ts-expect-error the width is a number of CSS pixels
heatmap.toHTML({ width: '360px' });
const lines: AttnLines = document.createElement('attn-lines');
const sameLines: SameLines = lines;
lines.selectedHeads = 'all';
lines.selectedHeads = [0, 2];
const shown: number[] = lines.selectedHeads;
lines.key = 'cat';
lines.threshold = 0.05;
const focus = lines.focused;
if (focus) { const side: 'query' | 'key' = focus.side; }
const summary: string = lines.describe();
const loupe = lines.magnifier;
if (loupe) { const first: number = loupe.first; const side: 'query' | 'key' = loupe.side; }
const badAttributes: { name: string; message: string }[] = heatmap.attributeErrors;
// @ts-expect-error attributeErrors is read-only
heatmap.attributeErrors = [];
const compare: AttnCompare = document.createElement('attn-compare');
compare.data = { a: data, b: { tokens: ['a', 'b'], attention: [[1, 0], [0.5, 0.5]] } };
compare.data = data;
compare.view = 'difference';
const diff: Float32Array | null = compare.difference;
const readout: string = compare.describeCell(0, 1);
// @ts-expect-error not a view
compare.view = 'overlay';
heatmap.hide = ['[CLS]', 0];
heatmap.hide = '[CLS] [SEP]';
heatmap.renormalize = true;
const hiddenCount: number | undefined = heatmap.result?.hidden?.count;

// @ts-expect-error not a mask
heatmap.mask = 'sideways';
// @ts-expect-error not a step
pipeline.step = 'boil';
// @ts-expect-error error is read-only
heatmap.error = 'no';
// @ts-expect-error tokens must be text
heatmap.data = { tokens: [1, 2], Q: [[1]], K: [[1]] };
// @ts-expect-error weights are read-only
heatmap.weights = new Float32Array(4);

const writer: AttnGenerate = document.createElement('attn-generate');
writer.prompt = 'Once upon a time';
writer.head = 'mean';
writer.head = 3;
writer.topP = 0.9;
writer.current = -1;
writer.stepForward();
const frame: GenerateFrame | null = writer.frame;
writer.addEventListener('change', (event) => { const at: number | 'mean' = event.detail.value; });
writer.addEventListener('generate', (event) => { const ids: Int32Array = event.detail.generation.ids; });
// @ts-expect-error head is an index or 'mean'
writer.head = 'max';
// @ts-expect-error playing is read-only
writer.playing = true;

export { chosen, keyCount, keyTokens, zoom, frame, same, sameLines, diff, readout, shown, summary, hiddenCount, base, state, drawn, message, svg, png, engine, limit, sized };

// color-scale on every figure; <attn-text> from the index and its own entry.
import { AttnText } from 'attnlens/elements';
import { AttnText as SameText } from 'attnlens/elements/attn-text.js';
import type { ColorScale, TextDirection } from 'attnlens/elements';
const prose: SameText = document.createElement('attn-text');
const proseToo: AttnText = prose;
prose.data = { tokens: ['The', ' cat'], attention: [[1, 0], [0.5, 0.5]] };
prose.direction = 'from';
const way: TextDirection = prose.direction;
const tinted: Float32Array | null = prose.tints;
const scaleName: ColorScale = heatmap.colorScale;
heatmap.colorScale = 'log';
writer.colorScale = 'row';
prose.colorScale = 'max';
const stateScale: ColorScale = heatmap.state['color-scale'];
// @ts-expect-error not a colour scale
heatmap.colorScale = 'cubic';
// @ts-expect-error not a direction
prose.direction = 'sideways';
