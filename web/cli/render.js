// Rendering a figure without a browser (the command line's engine room, also usable from Node):
// the same data checks (parseData), the same computation (the element's compute(), the wasm
// engine) and the same pure SVG functions as the elements, so the SVG equals what the element's
// toSVG() gives for the same state, and the HTML equals its toHTML().
import { readFile } from 'node:fs/promises';

import { init } from '../attnlens.js';
import { AttnElement } from '../elements/lib/base.js';
import { computeWeights, isAggregate, runModel, selectedMatrix } from '../elements/lib/compute.js';
import { DataError, parseData, parseTokens } from '../elements/lib/data.js';
import { applyFilter } from '../elements/lib/filter.js';
import { exportableData, standaloneHTML, stateAttributes } from '../elements/lib/standalone.js';
import { DEFAULTS, STATE } from '../elements/lib/state.js';
import { themeFor } from '../elements/lib/theme.js';
import { OWN_OPTIONS, figures, notRenderable } from './figures.js';

export const FORMATS = ['svg', 'html', 'png'];

/** Bad options (as opposed to bad data): the command line prints its usage with these. */
export class OptionError extends RangeError {
  constructor(message) {
    super(message);
    this.name = 'OptionError';
  }
}

let lens = null;
const engine = () => (lens ??= init());

/** The names of the figures that can be rendered. */
export async function figureNames() {
  return Object.keys(await figures());
}

async function figureNamed(name) {
  const all = await figures();
  if (notRenderable(name)) throw new OptionError(`the ${name} figure cannot be rendered from one data file: ${notRenderable(name)}`);
  if (!Object.hasOwn(all, name))
    throw new OptionError(`unknown figure ${JSON.stringify(name)}: the figures are ${Object.keys(all).join(', ')}`);
  return all[name];
}

// The element's state for this data: its defaults, overridden by the options (parsed as the
// attributes are), then checked against what the result has (an element would clamp silently;
// here an out-of-range value is an error the author should see).
function stateFor(figure, data, given) {
  const defaults = { ...DEFAULTS, ...figure.element.defaults };
  defaults.mask = [data.causal && 'causal', data.keyMask && 'padding'].filter(Boolean).join(' ') || 'none';
  const state = {};
  for (const name of Object.keys(STATE)) {
    const value = given[name];
    try {
      state[name] = value === undefined || value === null ? defaults[name] : STATE[name].parse(value);
    } catch (error) {
      throw new OptionError(`--${name}: ${error.message}`);
    }
  }
  return state;
}

function checkState(state, result, figure) {
  const range = (name, count, what) => {
    if (state[name] >= count) throw new OptionError(`--${name} ${state[name]} is out of range: the data has ${count} ${what} (0–${count - 1})`);
  };
  range('layer', result.layers, 'layer(s)');
  range('head', result.heads, 'head(s)');
  if (typeof state.query === 'string') {
    const found = result.tokens.findIndex((t) => t.trim() === state.query.trim());
    if (found < 0) throw new OptionError(`--query ${JSON.stringify(state.query)} is not one of the tokens`);
    state.query = found;
  }
  const lowest = figure.element.defaults.query === -1 ? -1 : 0;
  if (state.query < lowest || state.query >= result.n)
    throw new OptionError(`--query ${state.query} is out of range: there are ${result.n} tokens (0–${result.n - 1})`);
}

// A token text in --hide that no token has (the element ignores it, as one hide list may serve
// several data; here it is most likely a typo).
function checkHidden(hide, result) {
  if (!Array.isArray(result?.weights)) return;
  const { queryTokens = result.tokens, keyTokens = result.tokens } = result;
  const texts = new Set([...queryTokens, ...keyTokens].map((t) => t.trim()));
  const missing = hide.find((item) => typeof item === 'string' && !texts.has(item.trim()));
  if (missing !== undefined) throw new OptionError(`--hide ${JSON.stringify(missing)} is not one of the tokens`);
}

async function readBundle() {
  const url = new URL('../dist/attnlens-single.js', import.meta.url);
  try {
    return await readFile(url, 'utf8');
  } catch (error) {
    throw new Error(`--format html needs the single-file bundle ${url.pathname} (${error.code ?? error.message}); build it with node scripts/build-single.mjs`);
  }
}

async function rasterise(svg, pixelRatio) {
  let Resvg;
  try {
    ({ Resvg } = await import('@resvg/resvg-js'));
  } catch {
    throw new Error('--format png needs the optional dependency @resvg/resvg-js (npm install @resvg/resvg-js); ' +
      'or write --format svg and rasterise it elsewhere');
  }
  return new Uint8Array(new Resvg(svg, { fitTo: { mode: 'zoom', value: pixelRatio }, font: { loadSystemFonts: true } }).render().asPng());
}

/**
 * Renders `input` (the figures' JSON data, parsed) as `format`: a string for svg and html, a
 * Uint8Array for png. `options`: figure (default heatmap), format (svg), theme ('light' |
 * 'dark'; svg/png default light, html default: the reader's), width (the figure's width in CSS
 * pixels: the SVG's display width, the PNG's width / pixelRatio, the figure's width in the HTML),
 * pixelRatio (png, default 2), title (html), and any state: layer, head, query, step, scale,
 * temperature, mask, hide, renormalize, 'color-scale' (or colorScale). Throws OptionError for bad options, DataError for bad data.
 */
export async function render(input, { figure: figureName = 'heatmap', format = 'svg', theme, width, pixelRatio = 2, title, ...given } = {}) {
  if (!FORMATS.includes(format)) throw new OptionError(`unknown format ${JSON.stringify(format)}: the formats are ${FORMATS.join(', ')}`);
  if (theme !== undefined && theme !== 'light' && theme !== 'dark') throw new OptionError(`--theme must be light or dark (got ${JSON.stringify(theme)})`);
  const number = (name, value) => {
    const x = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    if (typeof x !== 'number' || !Number.isFinite(x) || x <= 0) throw new OptionError(`--${name} must be a number > 0 (got ${typeof value === 'number' ? value : JSON.stringify(value)})`);
    return x;
  };
  if (width !== undefined) width = number('width', width);
  pixelRatio = number('pixel-ratio', pixelRatio);
  if ('colorScale' in given) {  // the property's name, from Node
    given['color-scale'] ??= given.colorScale;
    delete given.colorScale;
  }
  const figure = await figureNamed(figureName);
  const { element } = figure;
  const own = Object.fromEntries(Object.entries(given).filter(([k]) => OWN_OPTIONS.includes(k)));
  for (const k of Object.keys(own)) delete given[k];
  const unknown = [...Object.keys(given).filter((k) => !Object.hasOwn(STATE, k)),
    ...Object.keys(own).filter((k) => !figure.own?.options.includes(k))];
  if (unknown.length) throw new OptionError(`unknown option ${unknown.map((k) => `--${k}`).join(', ')} for the ${figure.name} figure`);

  if (given.renormalize !== undefined && ![true, false, 'true', 'false', ''].includes(given.renormalize))
    throw new OptionError(`--renormalize must be true or false (got ${JSON.stringify(given.renormalize)})`);

  let data = parseData(input, { maxTokens: element.maxTokens });
  if (data.kind === 'model') data = await runModel(await engine(), data, (tokens) => parseTokens(tokens, element.maxTokens));
  const state = stateFor(figure, data, given);
  if (isAggregate(state.layer, state.head) && !element.aggregates)  // as the element refuses it
    throw new OptionError(`the ${figure.name} figure shows one head at a time: --layer and --head must be indices ` +
      `(got --layer ${state.layer}, --head ${state.head})`);
  let result;
  try {
    // The element's compute step without an element: the base one (computeWeights; the element's
    // version only adds its buffer pool) or the figure's own, which needs no instance.
    const compute = element.prototype.compute === AttnElement.prototype.compute ? computeWeights : element.prototype.compute;
    result = compute.call(element.prototype, data.kind === 'attention' ? null : await engine(), data, state);
    checkHidden(state.hide, result);
    result = applyFilter(result, state);
  } catch (error) {
    if (error instanceof RangeError && /^hide/.test(error.message)) throw new OptionError(`--${error.message}`);
    if (error instanceof RangeError && /^options\.scale/.test(error.message))
      throw new OptionError(`--scale ÷ --temperature gives a scale the engine cannot use: ${error.message}`);
    throw error;
  }
  checkState(state, result, figure);
  // What the elements pass their SVG function besides the state: the matrix shown (aggregated by
  // the engine for head="mean"/"max" or layer="rollout") and the query's row of it.
  let weights;
  try {
    weights = Array.isArray(result.weights) && selectedMatrix(isAggregate(state.layer, state.head) ? await engine() : null, result, state.layer, state.head);
  } catch (error) {
    throw error instanceof RangeError && /^layer="rollout"/.test(error.message) ? new OptionError(`--layer rollout: ${error.message}`) : error;
  }
  const nK = result.nK ?? result.n;
  let svgState = { ...state, weights: weights || undefined, row: weights && state.query >= 0 ? weights.subarray(state.query * nK, (state.query + 1) * nK) : undefined };
  try {
    if (figure.own) svgState = await figure.own.svgState(result, state, own, isAggregate(state.layer, state.head) ? await engine() : null);
  } catch (error) {
    throw error instanceof RangeError ? new OptionError(error.message.startsWith('--') ? error.message : `--${error.message}`) : error;
  }

  if (format === 'html') {
    const attributes = [...stateAttributes(state), ...Object.entries(own).map(([k, v]) => [k, String(v)]).sort((a, b) => (a[0] < b[0] ? -1 : 1))];
    return standaloneHTML({ tag: figure.tag, attributes, data: exportableData(input, data), bundle: await readBundle(), theme, title, width });
  }
  const svg = figure.svg(result, themeFor(theme ?? 'light'), svgState, { width });
  return format === 'svg' ? svg : rasterise(svg, pixelRatio);
}

export { DataError };
