// The figures the command line can render, found rather than listed: every module in
// web/elements/svg/ that exports `<name>SVG(result, theme, state, options)` and has an element
// web/elements/attn-<name>.js (whose class gives the data limits, defaults and compute step).
// A new figure plugs in by adding those two files.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { AttnElement } from '../elements/lib/base.js';
import { selectedMatrix } from '../elements/lib/compute.js';
import { shapeOf } from '../elements/lib/filter.js';
import { DEFAULT_THRESHOLD, headsToDraw, parseHeadList } from '../elements/lib/lines-layout.js';
import { STATE } from '../elements/lib/state.js';

/**
 * Figures whose SVG needs more than the shared state (their own attributes): the options they
 * take (named as the attributes) and how the element turns those into its SVG state (`lens`:
 * the engine, for aggregates).
 */
const OWN_STATE = {
  lines: {
    options: ['heads', 'key', 'threshold'],
    async svgState(result, state, given, lens) {
      const { parseThreshold } = await import('../elements/attn-lines.js');
      let key = given.key === undefined ? -1 : STATE.query.parse(given.key);
      if (typeof key === 'string') {
        const text = key;
        key = shapeOf(result).keyTokens.findIndex((t) => t.trim() === text.trim());
        if (key < 0) throw new RangeError(`--key ${JSON.stringify(text)} is not one of the tokens`);
      }
      if (key >= shapeOf(result).nK) throw new RangeError(`--key ${key} is out of range: there are ${shapeOf(result).nK} keys`);
      const list = parseHeadList(given.heads ?? null);
      const outside = Array.isArray(list) && list.find((h) => h >= result.heads);
      if (Array.isArray(list) && outside !== undefined)
        throw new RangeError(`--heads ${outside} is out of range: the data has ${result.heads} head(s) (0–${result.heads - 1})`);
      const focus = state.query >= 0 ? { side: 'query', index: state.query } : key >= 0 ? { side: 'key', index: key } : null;
      const heads = headsToDraw(list, result, state.head, state.layer);
      return {
        // As the element: each head's matrix as shown (an aggregate computed by the engine).
        layer: state.layer, heads, focus, weights: heads.map((hd) => selectedMatrix(lens, result, state.layer, hd)),
        threshold: given.threshold === undefined ? DEFAULT_THRESHOLD : parseThreshold(given.threshold),
        'color-scale': state['color-scale'],
      };
    },
  },
};

// <attn-heads>: the grid's mean/max tiles and the rollout tile, from the engine (as the element).
OWN_STATE.heads = {
  options: [],
  async svgState(result, state) {
    const { init } = await import('../attnlens.js');
    const { selectedMatrix } = await import('../elements/lib/compute.js');
    const { eagerRollout } = await import('../elements/svg/heads.js');
    const lens = result.heads > 1 || result.layers > 1 ? await init() : null;
    const self = (result.nK ?? result.n) === result.n;
    const rollout = result.layers > 1 && self && (eagerRollout(result) || state.layer === 'rollout');
    const aggregate = (layer, head) => (lens && (layer === 'rollout' ? rollout : result.heads > 1)
      ? selectedMatrix(lens, result, layer, head) : null);
    return { ...state, aggregate };
  },
};

// <attn-text>: its `direction`, and the matrix shown (mean/max/rollout from the engine).
OWN_STATE.text = {
  options: ['direction'],
  async svgState(result, state, given, lens) {
    const { parseDirection } = await import('../elements/svg/text.js');
    return { ...state, query: Math.max(0, state.query), direction: parseDirection(given.direction), weights: selectedMatrix(lens, result, state.layer, state.head) };
  },
};

/** Figures the command line cannot draw from one data file, and why. */
const NOT_HERE = {
  compare: 'it compares two data sources (its a-/b- attributes); use the element and its toSVG()',
  generate: 'it runs a language model token by token in the page; use the element and its toSVG()',
};

/** Every option some figure takes beyond the shared state. */
export const OWN_OPTIONS = [...new Set(Object.values(OWN_STATE).flatMap((f) => f.options))];

/** Why `name` cannot be rendered here, or undefined. */
export const notRenderable = (name) => NOT_HERE[name];

const SVG_DIR = new URL('../elements/svg/', import.meta.url);
const ELEMENTS = new URL('../elements/', import.meta.url);

let found = null;

/** { name → { name, tag, svg, element } }, loaded once. */
export async function figures() {
  found ??= (async () => {
    const out = {};
    const files = readdirSync(fileURLToPath(SVG_DIR)).filter((f) => /^[a-z][a-z0-9-]*\.js$/.test(f)).sort();
    for (const file of files) {
      const name = file.slice(0, -3);
      const svg = (await import(new URL(file, SVG_DIR).href))[`${name.replace(/-([a-z])/g, (_, c) => c.toUpperCase())}SVG`];
      if (typeof svg !== 'function') continue;  // a helper module (e.g. matrix-image.js)
      const tag = `attn-${name}`;
      let module;
      try {
        module = await import(new URL(`${tag}.js`, ELEMENTS).href);
      } catch (error) {
        if (error?.code === 'ERR_MODULE_NOT_FOUND') continue;
        throw error;
      }
      const element = Object.values(module).find((v) => typeof v === 'function' && v.prototype instanceof AttnElement);
      if (element && !NOT_HERE[name]) out[name] = { name, tag, svg, element, own: OWN_STATE[name] };
    }
    return out;
  })();
  return found;
}
