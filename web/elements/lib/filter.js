// Hiding tokens ([CLS], [SEP], punctuation…) from a computed result, for every figure: the
// hidden rows (as queries) and columns (as keys) are removed. With `renormalize` each remaining
// row is divided by its sum (it sums to 1 again); without it the weights are kept as computed,
// so a row sums to what the kept keys received (< 1). One pure function, applied by the base
// element to whatever a figure computed; DOM-free.
import { headMatrix } from './compute.js';
import { LazyWeights, lazyWeightsArray } from './lazy-weights.js';

/** A result's query/key shape, for self-attention (tokens, n) and cross-attention (nQ ≠ nK) alike. */
export function shapeOf(result) {
  const queryTokens = result.queryTokens ?? result.tokens, keyTokens = result.keyTokens ?? result.tokens;
  return { nQ: result.nQ ?? result.n, nK: result.nK ?? result.n, queryTokens, keyTokens };
}

/**
 * The `hide` attribute or property → a list of token texts (strings) and token indices (numbers).
 * Text: words separated by spaces, digits are indices (`hide="[CLS] [SEP]"`, `hide="0 5"`), or a
 * JSON list for texts with spaces (`hide='["a b", 3]'`: strings are texts, numbers indices).
 */
export function parseHide(value) {
  if (value === undefined || value === null) return [];
  let list = value;
  if (typeof value === 'string') {
    const text = value.trim();
    list = null;
    if (isJSONList(text)) list = JSON.parse(text);  // "[CLS] [SEP]" is words, not JSON
    list ??= text ? text.split(/\s+/u).map((w) => (/^\d+$/.test(w) ? Number(w) : w)) : [];
  } else if (typeof value === 'number') list = [value];
  if (!Array.isArray(list)) throw new TypeError(`hide must be token texts or indices (got ${typeof value})`);
  return Object.freeze(list.map((item, i) => {
    if (typeof item === 'string') return item;
    if (typeof item === 'number') {
      if (!Number.isInteger(item) || item < 0) throw new RangeError(`hide[${i}] must be a token index ≥ 0 or a token's text (got ${item})`);
      return item;
    }
    throw new TypeError(`hide[${i}] must be a token's text or index (got ${item === null ? 'null' : typeof item})`);
  }));
}

/** `hide` as attribute text (JSON when a text has a space or looks like an index). */
export function formatHide(list) {
  if (list.length === 0) return null;
  const words = list.join(' ');
  const plain = list.every((x) => typeof x === 'number' || (!/\s/u.test(x) && !/^\d+$/.test(x) && x !== ''));
  return plain && !isJSONList(words) ? words : JSON.stringify(list);
}

function isJSONList(text) {
  try {
    return text.startsWith('[') && Array.isArray(JSON.parse(text));
  } catch {
    return false;
  }
}

/** The positions of `tokens` that stay: not listed by index nor by text (texts compared trimmed). */
function kept(tokens, indices, texts) {
  const out = [];
  for (let i = 0; i < tokens.length; i++) if (!indices.has(i) && !texts.has(tokens[i].trim())) out.push(i);
  return out;
}

// Rows `keepQ` and columns `keepK` of one head's matrix (rows of nK) into `out`, rows
// renormalised if asked.
function select(matrix, nK, keepQ, keepK, renormalize, out) {
  const cols = keepK.length;
  for (let r = 0; r < keepQ.length; r++) {
    const from = keepQ[r] * nK, to = r * cols;
    let sum = 0;
    for (let c = 0; c < cols; c++) sum += (out[to + c] = matrix[from + keepK[c]]);
    if (renormalize && sum > 0) for (let c = 0; c < cols; c++) out[to + c] /= sum;
  }
  return out;
}

/**
 * `result` without the hidden tokens (`options.hide`, see parseHide; indices count from 0 in the
 * tokens as given). Adds `hidden` = { count, queries, keys (original indices), renormalized }
 * and `kept` = { queries, keys } (original index of each remaining row/column). Results that are
 * not per-layer weight tables (the pipeline's steps) and results with nothing to hide come back
 * as they are (with `hidden.count` 0 for weight tables).
 */
export function applyFilter(result, { hide = [], renormalize = false } = {}, pool = null) {
  if (!result || !Array.isArray(result.weights) || result.hidden) return result;
  const { queryTokens, keyTokens } = shapeOf(result);
  const plan = hidePlan(result, hide, renormalize);
  if (!plan) return { ...result, hidden: NOTHING_HIDDEN };
  const { keepQ, keepK, self, hidden } = plan;
  const { masks } = result;
  // A causal mask keeps meaning "key after query" in the original positions: when rows and
  // columns lose different positions (cross-attention), shown row r and column c are compared
  // through the positions they came from (compute.js isMasked / maskMatrix read them).
  const sameOrder = self || keepQ.every((q, r) => keepK.every((k, c) => (k > q) === (c > r)));
  const filteredMasks = masks && {
    ...masks,
    causal: Boolean(masks.causal),
    keyMask: masks.keyMask ? Uint8Array.from(keepK, (j) => masks.keyMask[j]) : null,
    ...(masks.causal && !sameOrder ? causalPositions(masks, keepQ, keepK) : {}),
  };
  const qTokens = keepQ.map((i) => queryTokens[i]);
  const kTokens = self ? qTokens : keepK.map((j) => keyTokens[j]);
  return {
    ...result,
    tokens: qTokens, n: keepQ.length, nQ: keepQ.length, nK: keepK.length,
    queryTokens: qTokens, keyTokens: kTokens,
    masks: filteredMasks,
    weights: filteredWeights(result, keepQ, keepK, renormalize, pool),
    hidden, kept: { queries: keepQ, keys: keepK },
  };
}

// Each head's kept rows and columns, selected when the head is first read (lazy-weights.js), from
// the head of the unfiltered result (itself computed on demand); into `pool`'s arrays if given.
function filteredWeights(result, keepQ, keepK, renormalize, pool) {
  const { nK } = shapeOf(result);
  const size = keepQ.length * keepK.length, length = result.heads * size;
  const lazy = new LazyWeights({
    layers: result.layers, heads: result.heads, size,
    provide: (layer) => (pool ? pool.take(`hidden/${layer}`, length) : new Float32Array(length)),
    compute: (layer, first, count, target) => {
      for (let h = first; h < first + count; h++)
        select(headMatrix(result, layer, h), nK, keepQ, keepK, renormalize, target.subarray((h - first) * size, (h - first + 1) * size));
    },
  });
  return lazyWeightsArray(lazy, result.layers);
}

// The original positions of the kept rows and columns, composed with positions an earlier
// filter already recorded (so a causal mask always compares the data's own positions).
function causalPositions(masks, keepQ, keepK) {
  const from = (positions, keep) => Int32Array.from(keep, (i) => (positions ? positions[i] : i));
  return { queryPositions: from(masks.queryPositions, keepQ), keyPositions: from(masks.keyPositions, keepK) };
}

export const NOTHING_HIDDEN = Object.freeze({ count: 0, queries: [], keys: [], renormalized: false });

/**
 * Which rows and columns `hide` keeps, for a result's shape (see shapeOf): { keepQ, keepK (kept
 * original indices), self, hidden: { count, queries, keys, renormalized } }, or null when nothing
 * is hidden. RangeError for an index past the last token or for hiding every query or key.
 */
export function hidePlan(shape, hide, renormalize = false) {
  const { nQ, nK, queryTokens, keyTokens } = shapeOf(shape);
  if (hide.length === 0) return null;
  const indices = new Set(), texts = new Set();
  for (const item of hide) {
    if (typeof item === 'number') {
      if (item >= Math.max(nQ, nK))
        throw new RangeError(`hide: token index ${item} is past the last token (${Math.max(nQ, nK) - 1})`);
      indices.add(item);
    } else texts.add(item.trim());
  }
  const keepQ = kept(queryTokens, indices, texts), keepK = kept(keyTokens, indices, texts);
  if (keepQ.length === nQ && keepK.length === nK) return null;
  if (keepQ.length === 0 || keepK.length === 0)
    throw new RangeError(`hide removes every ${keepQ.length === 0 ? 'query' : 'key'} token: at least one must stay`);
  const self = nQ === nK && (queryTokens === keyTokens || queryTokens.every((t, i) => t === keyTokens[i]));
  const gone = (list, n) => Array.from({ length: n }, (_, i) => i).filter((i) => !list.includes(i));
  const hidden = {
    queries: gone(keepQ, nQ), keys: gone(keepK, nK), renormalized: Boolean(renormalize),
  };
  hidden.count = self ? hidden.queries.length : hidden.queries.length + hidden.keys.length;
  return { keepQ, keepK, self, hidden };
}

/** Rows `rows` and columns `cols` (all when null) of a row-major matrix `width` wide. */
export function pickCells(values, width, rows, cols = null) {
  const w = cols ? cols.length : width;
  const out = new values.constructor(rows.length * w);
  rows.forEach((i, r) => {
    if (!cols) out.set(values.subarray(i * width, (i + 1) * width), r * w);
    else for (let c = 0; c < w; c++) out[r * w + c] = values[i * width + cols[c]];
  });
  return out;
}

/** "2 tokens hidden; rows renormalised" (or "…; rows sum to less than 1"), or '' when none is. */
export function hiddenNote(hidden) {
  if (!hidden || hidden.count === 0) return '';
  const count = `${hidden.count} token${hidden.count === 1 ? '' : 's'} hidden`;
  return `${count}; ${hidden.renormalized ? 'rows renormalised to sum to 1' : 'rows sum to less than 1 (not renormalised)'}`;
}
