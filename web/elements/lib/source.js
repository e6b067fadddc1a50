// Where a figure's raw data comes from, first match wins:
//   1. the `data` property (set from script),
//   2. `src`: "#id" of a <script type="application/json"> in the same document, or a same-site URL,
//   3. a child <script type="application/json"> (not executed, so any CSP allows it),
//   4. `model` + `text` attributes (the model add-on),
//   5. attributes: tokens, q, k, v, x, w-q, w-k, w-v, w-o, d-k, heads, attention, key-mask
//      (and query-tokens, key-tokens, x-kv for cross-attention).
import { DataError } from './data.js';

/** Attributes that carry data (JSON lists, except tokens which may be plain words). */
export const DATA_ATTRIBUTES = {
  tokens: 'tokens', q: 'Q', k: 'K', v: 'V', x: 'X', 'w-q': 'W_Q', 'w-k': 'W_K', 'w-v': 'W_V',
  'w-o': 'W_O', 'd-k': 'dK', heads: 'heads', attention: 'attention', 'key-mask': 'keyMask',
};
// Cross-attention from attributes: query and key tokens (words or a JSON list), X for the keys.
Object.assign(DATA_ATTRIBUTES, { 'query-tokens': 'queryTokens', 'key-tokens': 'keyTokens', 'x-kv': 'X_KV' });
const WORDS = new Set(['tokens', 'query-tokens', 'key-tokens']);
export const SOURCE_ATTRIBUTES = ['src', 'model', 'text', ...Object.keys(DATA_ATTRIBUTES)];

function parseJSON(text, where) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new DataError(`${where} is not valid JSON: ${error.message}`);
  }
}

function jsonScript(script, where) {
  if (!script) throw new DataError(`${where} does not name a <script type="application/json"> in this page`);
  if (script.localName !== 'script' || script.type !== 'application/json')
    throw new DataError(`${where} must be a <script type="application/json"> (got <${script.localName}>)`);
  return parseJSON(script.textContent, where);
}

export async function fetchSource(src, element, signal) {
  if (src.startsWith('#')) {
    const root = element.getRootNode();
    const id = src.slice(1);
    const found = root.getElementById?.(id) ?? document.getElementById(id);
    return jsonScript(found, `src="${src}"`);
  }
  let url;
  try {
    url = new URL(src, document.baseURI);
  } catch {
    throw new DataError(`src="${src}" is not a URL`);
  }
  if (url.origin !== location.origin)
    throw new DataError(`src must be on the same site as the page (${location.origin}); got ${url.origin}`);
  const response = await fetch(url, { credentials: 'same-origin', signal });
  if (!response.ok) throw new DataError(`src="${src}" could not be loaded (HTTP ${response.status})`);
  return parseJSON(await response.text(), `src="${src}"`);
}

function fromAttributes(element) {
  const out = {};
  for (const [attr, key] of Object.entries(DATA_ATTRIBUTES)) {
    const value = element.getAttribute(attr);
    if (value === null || element.constructor.ownAttributes?.includes(attr)) continue;  // e.g. <attn-lines heads="0 2">
    const trimmed = value.trim();
    out[key] = WORDS.has(attr) && !trimmed.startsWith('[') ? trimmed
      : attr === 'd-k' || attr === 'heads' ? Number(trimmed)
        : parseJSON(trimmed, `the ${attr} attribute`);
  }
  return out;
}

/** The raw (unchecked) data for `element`, or null when it has none yet. */
export async function readSource(element, property, signal) {
  if (property !== undefined) return property;
  const src = element.getAttribute('src');
  if (src) return fetchSource(src.trim(), element, signal);
  const script = element.querySelector(':scope > script[type="application/json"]');
  if (script) return jsonScript(script, 'the <script type="application/json"> inside the figure');
  if (element.hasAttribute('model'))
    return { model: element.getAttribute('model'), text: element.getAttribute('text') ?? '' };
  // Any data attribute (even without tokens: then parseData says what is missing).
  if (Object.keys(DATA_ATTRIBUTES).some((a) => element.hasAttribute(a) && !element.constructor.ownAttributes?.includes(a)))
    return fromAttributes(element);
  return null;
}
