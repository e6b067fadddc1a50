// One self-contained HTML file showing a figure: the single-file bundle (engine, wasm, every
// figure) inlined as a module script, the data as the figure's JSON child, the state as its
// attributes, a Content-Security-Policy that allows nothing but the inlined script (so the
// file makes no request at all), opening from file:// or any static host. Pure: the element's
// toHTML() and the command-line renderer build the same bytes from the same input.
import { checkWidth, esc } from './export.js';
import { base64 } from './png.js';
import { sha256 } from './sha256.js';
import { themeFor } from './theme.js';
import { hex } from './color.js';
import { STATE } from './state.js';

/** The shortest decimal text that reads back to the same float32. */
function float32Text(x) {
  if (!Number.isFinite(x)) return 'null';
  for (let digits = 1; digits < 9; digits++) {
    const text = String(Number(x.toPrecision(digits)));
    if (Math.fround(Number(text)) === x) return text;
  }
  return String(Number(x.toPrecision(9)));
}

/** JSON text of `value`, typed arrays written as lists (float32 ones as short as they round-trip). */
export function jsonText(value) {
  if (value instanceof Float32Array) return `[${Array.from(value, float32Text).join(',')}]`;
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) return `[${Array.from(value, (x) => JSON.stringify(Number(x))).join(',')}]`;
  if (Array.isArray(value)) return `[${value.map((x) => (x === undefined ? 'null' : jsonText(x))).join(',')}]`;
  if (value && typeof value === 'object') {
    if (typeof value.toJSON === 'function') return jsonText(value.toJSON());
    return `{${Object.entries(value).filter(([, v]) => v !== undefined && typeof v !== 'function')
      .map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * What the standalone file carries as data: the author's input as given, except a model run
 * (`model` + `text`), which becomes its computed weights (`checked` is the parsed data); a
 * pair (attn-compare's A and B) side by side.
 */
export function exportableData(raw, checked) {
  if (checked?.kind === 'pair')  // attn-compare: A and B (one data for both when they share it)
    return raw.a === raw.b ? exportableData(raw.a, checked.a) : { a: exportableData(raw.a, checked.a), b: exportableData(raw.b, checked.b) };
  if (checked?.kind !== 'attention' || raw?.model === undefined) return raw;
  const { n, heads } = checked;
  const rows = checked.nQ ?? n, cols = checked.nK ?? n;
  const out = {
    tokens: checked.tokens,
    attention: checked.weights.map((w) => Array.from({ length: heads }, (_, h) =>
      Array.from({ length: rows }, (_, i) => w.subarray((h * rows + i) * cols, (h * rows + i + 1) * cols)))),
  };
  if (checked.queryTokens && checked.queryTokens !== checked.tokens) out.queryTokens = checked.queryTokens;
  if (checked.keyTokens && checked.keyTokens !== checked.tokens) out.keyTokens = checked.keyTokens;
  if (checked.causal) out.causal = true;
  if (checked.keyMask) out.keyMask = checked.keyMask;
  return out;
}

/** The state as attributes, [name, text] in STATE's order (as the element reflects them; none when unset). */
export function stateAttributes(state) {
  return Object.keys(STATE).flatMap((name) => {
    const text = STATE[name].format ? STATE[name].format(state[name]) : String(state[name]);
    return text === null || text === undefined ? [] : [[name, text]];
  });
}

const hashOf = (text) => `'sha256-${base64(sha256(new TextEncoder().encode(text)))}'`;
let lastBundle = null;  // [text, escaped, hash]: the bundle is the same for every file of a page

function scriptBody(bundle) {
  if (lastBundle?.[0] !== bundle) {
    // "<!--" (written so that this check does not contain it) would change how HTML ends a script.
    if (/<[!]--/.test(bundle)) throw new Error('the single-file bundle contains an HTML comment opener, which cannot be inlined in a <script>');
    const escaped = bundle.replace(/<\/(script)/gi, '<\\/$1');
    lastBundle = [bundle, escaped, hashOf(escaped)];
  }
  return lastBundle.slice(1);
}

function pageCSS(theme, tag, width) {
  const rule = (t) => `body { background: ${hex(t.bg)}; color: ${hex(t.fg)}; }`;
  // `width`: the figure's width in CSS pixels (as toSVG()'s width is the picture's), never wider
  // than the window; the figure lays itself out for it.
  const base = 'body { margin: 0; padding: 16px; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }' +
    (width === undefined ? '' : `\n${tag} { width: ${width}px; max-width: 100%; }`);
  if (theme === 'light' || theme === 'dark') return `:root { color-scheme: ${theme}; }\n${base}\n${rule(themeFor(theme))}\n`;
  return `:root { color-scheme: light dark; }\n${base}\n${rule(themeFor('light'))}\n@media (prefers-color-scheme: dark) { ${rule(themeFor('dark'))} }\n`;
}

/**
 * The standalone HTML document (a string). `tag`: the figure's element name; `attributes`:
 * [name, value] pairs in order (state first); `data`: the figure's data (JSON-able, typed
 * arrays allowed); `bundle`: the text of web/dist/attnlens-single.js; `theme`: 'light',
 * 'dark' or undefined (follow the reader's colour scheme); `title`: the document's title;
 * `width`: the figure's width in CSS pixels (default: the page's width).
 */
export function standaloneHTML({ tag, attributes = [], data, bundle, theme, title, width }) {
  if (!/^attn-[a-z][a-z0-9-]*$/.test(tag)) throw new RangeError(`tag must be an attnlens element name (got ${JSON.stringify(tag)})`);
  if (typeof bundle !== 'string' || !bundle) throw new TypeError('bundle must be the text of web/dist/attnlens-single.js');
  checkWidth(width);
  const [script, scriptHash] = scriptBody(bundle);
  const css = pageCSS(theme, tag, width);
  const csp = `default-src 'none'; script-src ${scriptHash} 'wasm-unsafe-eval'; style-src ${hashOf(css)}; img-src data: blob:; base-uri 'none'; form-action 'none'`;
  const attrs = [...attributes, ...(theme ? [['theme', theme]] : [])]
    .map(([name, value]) => ` ${name}${value === '' ? '' : `="${esc(value)}"`}`).join('');
  const json = jsonText(data).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${esc(csp)}">
<title>${esc(title ?? `attnlens: ${tag}`)}</title>
<link rel="icon" href="data:,">
<style>${css}</style>
<script type="module" id="attnlens-bundle">${script}</script>
</head>
<body>
<${tag}${attrs}><script type="application/json">${json}</script></${tag}>
</body>
</html>
`;
}
