// What an author gives a figure, checked and normalised. Three kinds (see "The JSON" in docs/figures.md):
//   vectors      tokens + Q, K, V (+ dK, heads)           → the engine's attention()
//   projections  tokens + X + W_Q, W_K, W_V[, W_O] + heads → the engine's multiHead()
//   attention    tokens + precomputed [layers][heads][n][n] weights
// plus `model` + `text` (a model run by the model add-on). Every error is a DataError whose
// message names the field, so the element can show it as it is.

export const MAX_TOKENS = 4096;
/** Precomputed weights need no engine work: figures that can draw them may allow this many. */
export const MAX_PRECOMPUTED_TOKENS = 8192;

export class DataError extends Error {
  constructor(message) {
    super(message);
    this.name = 'DataError';
  }
}

const fail = (message) => { throw new DataError(message); };

function describe(value) {
  if (value === null) return 'null';
  if (value === undefined) return 'missing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `the text ${JSON.stringify(value.length > 24 ? `${value.slice(0, 24)}…` : value)}`;
  if (typeof value === 'object') return 'an object';
  return String(value);
}

// First of several accepted spellings (Q, q; W_Q, wQ, w_q) present in the object.
function pick(obj, ...names) {
  for (const name of names) if (obj[name] !== undefined && obj[name] !== null) return [name, obj[name]];
  return [names[0], undefined];
}

export function parseTokens(value, maxTokens = MAX_TOKENS) {
  let tokens = value;
  if (typeof tokens === 'string') tokens = tokens.trim() ? tokens.trim().split(/\s+/u) : [];
  if (!Array.isArray(tokens)) fail(`tokens must be a list of words (got ${describe(value)})`);
  if (tokens.length === 0) fail('tokens is empty: give at least one token');
  if (tokens.length > maxTokens)
    fail(`${tokens.length} tokens is more than this figure can show (at most ${maxTokens})`);
  return tokens.map((t, i) => {
    if (typeof t === 'string') return t;
    if (typeof t === 'number' && Number.isFinite(t)) return String(t);
    return fail(`tokens[${i}] must be text (got ${describe(t)})`);
  });
}

/**
 * A nested list (or a typed array / flat list) of finite numbers → { shape, values: Float32Array }.
 * The nesting must be rectangular; errors name the first bad entry, e.g. `Q[3][1]`.
 */
export function tensor(name, value, maxValues = 64 * 2 ** 20) {
  if (value instanceof Float32Array || value instanceof Float64Array) return flatTensor(name, value, maxValues);
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) value = Array.from(value);
  if (!Array.isArray(value)) fail(`${name} must be a list of numbers (got ${describe(value)})`);
  const shape = [];
  for (let level = value; Array.isArray(level); level = level[0]) {
    if (level.length === 0) fail(`${name}${'[0]'.repeat(shape.length)} is an empty list`);
    shape.push(level.length);
  }
  const total = shape.reduce((a, b) => a * b, 1);
  if (total > maxValues) fail(`${name} has ${total} numbers, more than a figure can take`);
  const values = new Float32Array(total);
  let at = 0;
  const walk = (node, depth, path) => {
    if (depth === shape.length) {
      if (typeof node !== 'number' || !Number.isFinite(node))
        fail(`${path} must be a finite number (got ${describe(node)})`);
      values[at++] = node;
      // Finite as a double but not as the float32 the engine computes in (e.g. 1e39).
      if (!Number.isFinite(values[at - 1])) fail(`${path} is ${node}: beyond float32's range (±3.4e38), in which attnlens computes`);
      return;
    }
    if (!Array.isArray(node)) fail(`${path} must be a list (got ${describe(node)})`);
    if (node.length !== shape[depth])
      fail(`${path} has ${node.length} entries but ${name}${'[0]'.repeat(depth)} has ${shape[depth]}`);
    for (let i = 0; i < node.length; i++) walk(node[i], depth + 1, `${path}[${i}]`);
  };
  walk(value, 0, name);
  return { shape, values };
}

// A flat typed array (e.g. 8192² weights from script): copied as float32 without a detour through
// a JS array, checked for finiteness.
function flatTensor(name, value, maxValues) {
  if (value.length === 0) fail(`${name} is an empty list`);
  if (value.length > maxValues) fail(`${name} has ${value.length} numbers, more than a figure can take`);
  // The typed-array constructor, not Float32Array.from: a block copy (a Float32Array's is a
  // memcpy) rather than an iterator step per value (8192² values: ~3 s → tens of ms).
  const values = new Float32Array(value);
  for (let i = 0; i < values.length; i++)
    if (!Number.isFinite(values[i])) fail(`${name}[${i}] must be a finite number (got ${describe(values[i])})`);
  return { shape: [values.length], values };
}

/**
 * Q, K or V as the engine lays it out, [heads, n, d] flat. Accepted: [n][d] (one head, or
 * heads·d columns split per head as after a linear layer), [heads][n][d], or flat in engine
 * order with `d` given.
 */
function headVectors(name, value, n, heads, d, flatWidth = d, what = 'tokens') {
  const { shape, values } = tensor(name, value);
  if (shape.length === 1) {
    d ??= flatWidth;
    if (!d) fail(`${name} is a flat list: give its width (dK for Q and K, dV for V)`);
    if (values.length !== heads * n * d)
      fail(`${name} has ${values.length} numbers; heads·tokens·width is ${heads}·${n}·${d} = ${heads * n * d}`);
    return { values, d };
  }
  if (shape.length === 3) {
    if (shape[0] !== heads) fail(`${name} has ${shape[0]} heads but heads is ${heads}`);
    if (shape[1] !== n) fail(`${name} has ${shape[1]} rows per head but there are ${n} ${what}`);
    if (d && shape[2] !== d) fail(`${name} rows have ${shape[2]} numbers but the width is ${d}`);
    return { values, d: shape[2] };
  }
  if (shape.length !== 2) fail(`${name} must be [tokens][width] or [heads][tokens][width] (got ${shape.length} levels)`);
  if (shape[0] !== n) fail(`${name} has ${shape[0]} rows but there are ${n} ${what}`);
  if (shape[1] % heads !== 0) fail(`${name} rows have ${shape[1]} numbers, not a multiple of heads (${heads})`);
  const width = shape[1] / heads;
  if (d && width !== d) fail(`${name} rows have ${shape[1]} numbers; heads·width is ${heads}·${d} = ${heads * d}`);
  if (heads === 1) return { values, d: width };
  const out = new Float32Array(values.length);  // [n][heads·d] → [heads][n][d]
  for (let h = 0; h < heads; h++)
    for (let i = 0; i < n; i++)
      for (let c = 0; c < width; c++) out[(h * n + i) * width + c] = values[i * shape[1] + h * width + c];
  return { values: out, d: width };
}

function positiveInt(name, value, fallback) {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'string' && /^\s*\d+\s*$/.test(value)) value = Number(value);
  if (!Number.isInteger(value) || value < 1) fail(`${name} must be a whole number ≥ 1 (got ${describe(value)})`);
  return value;
}

function keyMaskOf(raw, n) {
  if (raw === undefined || raw === null) return null;
  const { shape, values } = tensor('keyMask', raw);
  if (shape.length !== 1 || shape[0] !== n) fail(`keyMask must list one 1 (keep) or 0 (padding) per key token (${n})`);
  const mask = new Uint8Array(n);
  values.forEach((x, i) => {
    if (x !== 0 && x !== 1) fail(`keyMask[${i}] must be 1 (keep) or 0 (padding), got ${x}`);
    mask[i] = x;
  });
  return mask;
}

// One typed array per layer, each flat [heads·nQ·nK] (what a model's run gives, e.g. lm.run's
// layers[l].attention): Float32Arrays are taken as they are, other typed arrays converted.
function layerArraysOf(raw, n, headsGiven, nK) {
  const per = n * nK;
  const heads = headsGiven === undefined || headsGiven === null ? raw[0].length / per : positiveInt('heads', headsGiven, 1);
  if (!Number.isInteger(heads) || heads < 1)
    fail(`attention[0] has ${raw[0].length} numbers, not a multiple of nQ·nK = ${n}·${nK} = ${per}`);
  const weights = raw.map((layer, l) => {
    if (layer.length !== heads * per)
      fail(`attention[${l}] has ${layer.length} numbers; heads·nQ·nK is ${heads}·${n}·${nK} = ${heads * per}`);
    const values = layer instanceof Float32Array ? layer : Float32Array.from(layer);
    for (let i = 0; i < values.length; i++)
      if (!(values[i] >= 0 && values[i] <= 1 + 1e-4))
        fail(`attention[${l}][${i}] is ${values[i]}: weights lie between 0 and 1`);
    return values;
  });
  return { layers: raw.length, heads, weights };
}

// The first weight outside [0, 1] (NaN, ±∞ too), or −1; alone, V8 runs it ~3× faster.
function firstBadWeight(values) {
  for (let i = 0, end = values.length; i < end; i++) {
    const w = values[i];
    if (!(w >= 0 && w <= 1 + 1e-4)) return i;
  }
  return -1;
}

function attentionOf(raw, n, headsGiven, nK = n) {
  if (Array.isArray(raw) && raw.length > 0 && raw.every((x) => ArrayBuffer.isView(x) && !(x instanceof DataView)))
    return layerArraysOf(raw, n, headsGiven, nK);
  // A flat float array (8192² weights from script) is checked in one pass below; a Float32Array
  // is read as given, never written (a copy cost more than the whole draw may take).
  const flat = raw instanceof Float32Array || raw instanceof Float64Array;
  if (flat && raw.length === 0) fail('attention is an empty list');
  if (flat && raw.length > 256 * 2 ** 20) fail(`attention has ${raw.length} numbers, more than a figure can take`);
  let { shape, values } = flat ? { shape: [raw.length], values: raw instanceof Float32Array ? raw : new Float32Array(raw) }
    : tensor('attention', raw, 256 * 2 ** 20);
  if (shape.length === 1) {  // flat, row-major [heads·n·n]
    const heads = positiveInt('heads', headsGiven, 1);
    if (values.length !== heads * n * nK)
      fail(`attention is a flat list of ${values.length} numbers; heads·nQ·nK is ${heads}·${n}·${nK} = ${heads * n * nK}`);
    shape = [heads, n, nK];
  }
  const depth = shape.length;
  if (depth > 4) fail(`attention must be [layers][heads][n][n] (got ${depth} levels)`);
  const [layers, heads] = depth === 4 ? shape : depth === 3 ? [1, shape[0]] : [1, 1];
  const rows = shape[depth - 2], cols = shape[depth - 1];
  if (rows !== n || cols !== nK)
    fail(nK === n ? `attention matrices are ${rows}×${cols} but there are ${n} tokens (need ${n}×${n})`
      : `attention matrices are ${rows}×${cols} but there are ${n} query and ${nK} key tokens (need ${n}×${nK})`);
  const i = firstBadWeight(values);
  if (i >= 0) {
    const at = [];
    for (let r = i, d = depth - 1; d >= 0; d--) { at.unshift(r % shape[d]); r = Math.floor(r / shape[d]); }
    const where = `attention${flat ? `[${i}]` : at.map((x) => `[${x}]`).join('')}`;
    if (!Number.isFinite(values[i])) fail(`${where} must be a finite number (got ${describe(values[i])})`);
    fail(`${where} is ${values[i]}: weights lie between 0 and 1`);
  }
  const per = heads * n * nK;
  return { layers, heads, weights: Array.from({ length: layers }, (_, l) => values.subarray(l * per, (l + 1) * per)) };
}

/**
 * Checks `input` and returns a frozen description of the data. `maxTokens` is the figure's own
 * limit (a pipeline of numbers is readable for fewer tokens than a heatmap).
 */
export function parseData(input, { maxTokens = MAX_TOKENS, maxPrecomputedTokens = maxTokens } = {}) {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    fail(`data must be an object with tokens (got ${describe(input)})`);
  if (input.model !== undefined) {
    if (typeof input.model !== 'string' || !input.model) fail(`model must be a model name or a model folder's URL (got ${describe(input.model)})`);
    if (typeof input.text !== 'string' || !input.text.trim()) fail('text must be the text to run the model on');
    return Object.freeze({ kind: 'model', model: input.model, text: input.text });
  }
  const { tokens, keyTokens, cross } = tokensOf(input, input.attention !== undefined ? maxPrecomputedTokens : maxTokens);
  const n = tokens.length, nK = keyTokens.length;
  const keyMask = keyMaskOf(input.keyMask ?? input.key_mask, nK);
  if (input.causal !== undefined && typeof input.causal !== 'boolean') fail('causal must be true or false');
  const common = { tokens, n, nQ: n, nK, queryTokens: tokens, keyTokens, cross, keyMask, causal: input.causal === true };

  if (input.attention !== undefined)
    return Object.freeze({ kind: 'attention', ...common, ...attentionOf(input.attention, n, input.heads, nK) });

  const heads = positiveInt('heads', input.heads, 1);
  const [xName, x] = pick(input, 'X', 'x');
  if (x !== undefined) {
    const X = tensor(xName, x);
    const dModel = positiveInt('dModel', input.dModel, X.shape.length === 2 ? X.shape[1] : undefined);
    if (!dModel) fail(`${xName} is a flat list: give dModel`);
    if (X.values.length !== n * dModel)
      fail(`${xName} must have one row of ${dModel} numbers per token (${n} tokens); got ${X.values.length} numbers`);
    if (dModel % heads !== 0) fail(`heads (${heads}) must divide the width of ${xName} (${dModel})`);
    const matrix = (names, size, optional) => {
      const [name, raw] = pick(input, ...names);
      if (raw === undefined) return optional ? null : fail(`${name} is missing (needed with ${xName})`);
      const { values } = tensor(name, raw);
      if (values.length !== size)
        fail(`${name} must be ${size === dModel ? `${dModel} numbers` : `${dModel}×${dModel}`} (got ${values.length} numbers)`);
      return values;
    };
    const [xKVName, xKVRaw] = pick(input, 'X_KV', 'XKV', 'xKV', 'x_kv');
    let xKV = null;
    if (xKVRaw !== undefined) {
      if (!cross) fail(`${xKVName} (cross-attention) needs keyTokens, one per row`);
      xKV = tensor(xKVName, xKVRaw).values;
      if (xKV.length !== nK * dModel)
        fail(`${xKVName} must have one row of ${dModel} numbers per key token (${nK} keyTokens); got ${xKV.length} numbers`);
    } else if (cross) fail(`${xName} with keyTokens needs X_KV: the key/value rows (one per key token)`);
    const sq = dModel * dModel;
    const out = {
      kind: 'projections', ...common, heads, dModel, x: X.values, xKV,
      wQ: matrix(['W_Q', 'wQ', 'w_q'], sq), wK: matrix(['W_K', 'wK', 'w_k'], sq),
      wV: matrix(['W_V', 'wV', 'w_v'], sq), wO: matrix(['W_O', 'wO', 'w_o'], sq, true),
      bQ: matrix(['b_Q', 'bQ', 'b_q'], dModel, true), bK: matrix(['b_K', 'bK', 'b_k'], dModel, true),
      bV: matrix(['b_V', 'bV', 'b_v'], dModel, true), bO: matrix(['b_O', 'bO', 'b_o'], dModel, true),
    };
    if (out.bO && !out.wO) fail('b_O needs W_O');
    return Object.freeze(out);
  }

  const [qName, qRaw] = pick(input, 'Q', 'q');
  const [kName, kRaw] = pick(input, 'K', 'k');
  const [vName, vRaw] = pick(input, 'V', 'v');
  if (qRaw === undefined && kRaw === undefined)
    fail('data needs Q, K and V, or X with W_Q, W_K, W_V, or precomputed attention');
  const dKGiven = positiveInt('dK', input.dK ?? input.d_k, undefined);
  const q = headVectors(qName, qRaw, n, heads, dKGiven);
  const k = headVectors(kName, kRaw, nK, heads, q.d, q.d, 'key tokens');
  const v = vRaw === undefined ? { values: k.values, d: q.d }  // no V: the keys stand in (weights only)
    : headVectors(vName, vRaw, nK, heads, positiveInt('dV', input.dV ?? input.d_v, undefined), q.d, 'key tokens');
  return Object.freeze({ kind: 'vectors', ...common, heads, dK: q.d, dV: v.d, q: q.values, k: k.values, v: v.values });
}

/**
 * The query and key tokens: `tokens` (self-attention), or `queryTokens` and `keyTokens`
 * (cross-attention, e.g. a decoder attending to an encoder; either may be missing: `tokens`
 * stands in). Each list has at most `maxTokens`.
 */
function tokensOf(input, maxTokens) {
  const queries = input.queryTokens ?? input.query_tokens, keys = input.keyTokens ?? input.key_tokens;
  if (queries === undefined && keys === undefined) {
    const tokens = parseTokens(input.tokens, maxTokens);
    return { tokens, keyTokens: tokens, cross: false };
  }
  const named = (name, value) => {
    try {
      return parseTokens(value, maxTokens);
    } catch (error) {
      throw new DataError(error.message.startsWith('tokens') ? error.message.replace(/^tokens/, name) : `${name}: ${error.message}`);
    }
  };
  const tokens = queries !== undefined ? named('queryTokens', queries) : named('tokens', input.tokens);
  const keyTokens = keys !== undefined ? named('keyTokens', keys) : tokens;
  return { tokens, keyTokens, cross: keys !== undefined };
}

/** Tokens that look like padding ([PAD], <pad>): used when no keyMask is given. */
export function paddingGuess(tokens) {
  const mask = Uint8Array.from(tokens, (t) => (/^(\[pad\]|<pad>)$/i.test(t.trim()) ? 0 : 1));
  return mask.includes(0) ? mask : null;
}
