// The figures' state: layer, head, query, step, scale, temperature, mask, hide, renormalize.
// Each has a parser (attribute text or property value → value, RangeError when invalid) and says
// whether a change means computing again (otherwise only the view is redrawn). `format`
// (optional) turns a value back into attribute text (null: remove the attribute).
import { formatHide, parseHide } from './filter.js';

export const STEPS = ['scores', 'scale', 'mask', 'softmax', 'weights', 'output'];
const MASKS = ['none', 'causal', 'padding', 'causal padding'];

function index(name, value) {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`${name} must be a whole number ≥ 0 (got ${JSON.stringify(value)})`);
  return n;
}

// Aggregates a figure can show instead of one layer or head (compute.js selectedMatrix).
export const HEAD_AGGREGATES = ['mean', 'max'];
export const LAYER_AGGREGATES = ['rollout'];

// An index, or one of the named aggregates (case and spaces ignored).
function indexOr(name, value, named) {
  const word = typeof value === 'string' ? value.trim().toLowerCase() : null;
  if (named.includes(word)) return word;
  try {
    return index(name, value);
  } catch {
    throw new RangeError(`${name} must be a whole number ≥ 0 or ${named.map((w) => `"${w}"`).join(' or ')} (got ${JSON.stringify(value)})`);
  }
}

export const STATE = {
  layer: { parse: (v) => indexOr('layer', v, LAYER_AGGREGATES) },
  head: { parse: (v) => indexOr('head', v, HEAD_AGGREGATES) },
  query: {
    parse(v) {
      if (v === null || v === 'none' || v === -1 || v === '-1' || v === '') return -1;
      if (typeof v === 'number' || /^\s*\d+\s*$/.test(v)) return index('query', v);
      if (typeof v === 'string') return v;  // a token's text, found once the tokens are known
      throw new RangeError(`query must be a token index or a token's text (got ${typeof v})`);
    },
  },
  step: {
    parse(v) {
      const name = typeof v === 'number' ? STEPS[v] : String(v).trim();
      if (!STEPS.includes(name)) throw new RangeError(`step must be one of ${STEPS.join(', ')} (got ${JSON.stringify(v)})`);
      return name;
    },
  },
  scale: {
    recompute: true,
    parse(v) {
      if (v === 'auto' || v === 'none') return v;
      const x = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
      if (typeof x !== 'number' || !Number.isFinite(x) || x <= 0)
        throw new RangeError(`scale must be "auto" (1/√d_k), "none" (1) or a number > 0 (got ${JSON.stringify(v)})`);
      return x;
    },
  },
  temperature: {
    recompute: true,
    parse(v) {
      const x = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
      if (typeof x !== 'number' || !Number.isFinite(x) || x <= 0)
        throw new RangeError(`temperature must be a number > 0 (got ${JSON.stringify(v)})`);
      return x;
    },
  },
  mask: {
    recompute: true,
    parse(v) {
      const words = new Set(String(v).toLowerCase().split(/[\s,+]+/).filter(Boolean));
      if (words.has('both')) words.add('causal').add('padding');
      const name = words.has('none') || words.size === 0 ? 'none'
        : ['causal', 'padding'].filter((w) => words.has(w)).join(' ');
      if (!MASKS.includes(name) || [...words].some((w) => !['none', 'causal', 'padding', 'both'].includes(w)))
        throw new RangeError(`mask must be none, causal, padding or "causal padding" (got ${JSON.stringify(v)})`);
      return name;
    },
  },
};
// Token hiding (filter.js): which tokens to leave out, and whether the kept weights are renormalised.
STATE.hide = { recompute: true, parse: parseHide, format: formatHide };
STATE.renormalize = {
  recompute: true,
  parse: (v) => v !== false && v !== 'false',
  format: (v) => (v ? '' : null),
};

export const DEFAULTS = { layer: 0, head: 0, query: 0, step: 'weights', scale: 'auto', temperature: 1, mask: null };
Object.assign(DEFAULTS, { hide: Object.freeze([]), renormalize: false });
