// The programmatic command-line renderer, `attnlens/cli` (Node only).
import { DataError, FORMATS, OptionError, figureNames, render } from 'attnlens/cli';
import type { Format, RenderOptions } from 'attnlens/cli';

const data = { tokens: ['a', 'b'], attention: [[1, 0], [0.5, 0.5]] };
const svg: Promise<string> = render(data, { figure: 'bars', query: 'b', theme: 'dark', width: 320 });
const html: Promise<string> = render(data, { format: 'html', title: 'Figure 2' });
const png: Promise<Uint8Array> = render(data, { format: 'png', pixelRatio: 3 });
const options: RenderOptions = { layer: 0, head: 0, mask: 'causal', scale: 'auto', step: 'softmax' };
const narrowHTML: Promise<string> = render(data, { format: 'html', width: 360, hide: ['[CLS]', 0], renormalize: true });
const lines: Promise<string> = render(data, { figure: 'lines', heads: [0, 2], key: 'b', threshold: 0.05, query: -1 });
const prose: Promise<string> = render(data, { figure: 'text', direction: 'from', 'color-scale': 'sqrt', query: 1 });
const scaled: Promise<string> = render(data, { colorScale: 'row' });
const names: Promise<string[]> = figureNames();
const formats: Format[] = FORMATS;
const isOption = (e: unknown): boolean => e instanceof OptionError || e instanceof DataError;

// @ts-expect-error not a format
render(data, { format: 'gif' });
// @ts-expect-error not a theme
render(data, { theme: 'sepia' });
// @ts-expect-error renormalize is a switch
render(data, { renormalize: 'maybe' });

export { svg, html, png, options, names, formats, isOption, narrowHTML, lines };
