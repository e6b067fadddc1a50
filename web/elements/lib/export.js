// Exporting a figure: SVG markup built as text (every token escaped, never parsed as markup),
// PNG by rasterising that SVG, and downloads through blob: URLs. No network.
import { css, hex } from './color.js';

const ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for SVG/XML content and attribute values (control characters dropped). */
export function esc(value) {
  return String(value)
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')  // not allowed in XML
    // A lone surrogate (half an emoji, or from the data) is not XML either: the replacement character.
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
    .replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

const round = (x) => (Number.isInteger(x) ? x : Math.round(x * 100) / 100);

/** `<name a="…">children</name>`; attribute values are escaped, children are markup. */
export function tag(name, attrs = {}, ...children) {
  let out = `<${name}`;
  for (const [key, value] of Object.entries(attrs))
    if (value !== undefined && value !== null && value !== false)
      out += ` ${key}="${esc(typeof value === 'number' ? round(value) : value)}"`;
  const body = children.flat(Infinity).join('');
  return body ? `${out}>${body}</${name}>` : `${out}/>`;
}

/** A text element whose content is `value` as text. */
export const text = (attrs, value) => tag('text', attrs, esc(value));

/** The tokens a figure draws, cut to `max` characters with an ellipsis. */
export function clip(token, max) {
  if (token.length <= max) return token;
  const end = /[\uD800-\uDBFF]/.test(token[max - 2]) ? max - 2 : max - 1;  // never half an emoji
  return `${token.slice(0, end)}…`;
}

/** A hatch pattern definition (masked cells) in the theme's mask colours. */
export function hatchDef(id, theme) {
  return tag('pattern', { id, width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
    tag('rect', { width: 6, height: 6, fill: hex(theme.maskBg) }),
    tag('line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: hex(theme.maskLine), 'stroke-width': 2 }));
}

/**
 * A horizontal colour legend (and a “masked” swatch) at (x, y): 0 … 1, or with `ticks` (from
 * color-scale.js legendTicks: [{ t, label }]) tick marks and labels below the ramp at each t.
 */
export function legendSVG(theme, x, y, { masked = false, hatchId = 'attn-hatch', ticks = null, id = 'attn-legend' } = {}) {
  const w = 120, h = 10;
  const font = { 'font-size': 11, fill: hex(theme.muted) };
  const ramp = [tag('defs', {}, tag('linearGradient', { id },
    tag('stop', { offset: 0, 'stop-color': hex(theme.low) }),
    tag('stop', { offset: 1, 'stop-color': hex(theme.high) })))];
  const swatch = (at) => (masked ? [tag('rect', { x: at, y: 0, width: h, height: h, fill: `url(#${hatchId})`, stroke: hex(theme.line) }),
    text({ x: at + h + 4, y: h, ...font }, 'masked')] : []);
  if (!ticks) {
    return tag('g', { transform: `translate(${x} ${y})` }, ramp,
      text({ x: 0, y: h, ...font }, '0'),
      tag('rect', { x: 12, y: 0, width: w, height: h, fill: `url(#${id})`, stroke: hex(theme.line) }),
      text({ x: w + 16, y: h, ...font }, '1'), swatch(w + 34));
  }
  const small = { 'font-size': 9, fill: hex(theme.muted) };
  return tag('g', { transform: `translate(${x} ${y})` }, ramp,
    tag('rect', { x: 0, y: 0, width: w, height: h, fill: `url(#${id})`, stroke: hex(theme.line) }),
    ticks.map((t, k) => [
      tag('rect', { x: t.t * w - 0.5, y: h, width: 1, height: 3, fill: hex(theme.muted), 'data-tick': t.t }),
      text({ x: t.t * w, y: h + 12, 'text-anchor': k === 0 ? 'start' : k === ticks.length - 1 ? 'end' : 'middle', ...small }, t.label)]),
    swatch(w + 24));
}

/** Checks an export's `width` option (undefined, or CSS pixels > 0) and returns it. */
export function checkWidth(width) {
  if (width !== undefined && !(typeof width === 'number' && Number.isFinite(width) && width > 0))
    throw new RangeError(`width must be a number > 0 (got ${typeof width === 'number' ? width : JSON.stringify(width)})`);
  return width;
}

/**
 * A complete standalone SVG document, `width`×`height` user units. `displayWidth` (optional)
 * sets the size it shows at (the height follows; the drawing scales through the viewBox).
 */
export function svgDocument({ width, height, title, theme, body, displayWidth }) {
  const w = Math.ceil(width), hgt = Math.ceil(height);
  checkWidth(displayWidth);
  const shown = displayWidth === undefined ? [w, hgt] : [displayWidth, (hgt * displayWidth) / w];
  return `<?xml version="1.0" encoding="UTF-8"?>\n${tag('svg', {
    xmlns: 'http://www.w3.org/2000/svg', width: shown[0], height: shown[1],
    viewBox: `0 0 ${w} ${hgt}`, role: 'img',
    'font-family': 'system-ui, -apple-system, Segoe UI, sans-serif',
  }, tag('title', {}, esc(title)), tag('rect', { width: '100%', height: '100%', fill: css(theme.bg) }), body)}`;
}

/** Rasterises an SVG document (a string) to a PNG Blob at `pixelRatio` (default 2). */
export async function svgToPNG(svg, { pixelRatio = 2 } = {}) {
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  try {
    const image = new Image();
    image.src = url;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = Math.max(1, Math.round(image.naturalWidth * pixelRatio));
    canvas.height = Math.max(1, Math.round(image.naturalHeight * pixelRatio));
    canvas.getContext('2d').drawImage(image, 0, 0, canvas.width, canvas.height);
    return await new Promise((resolve, reject) =>
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('PNG encoding failed'))), 'image/png'));
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** Saves a Blob under `filename` through a temporary blob: link. */
export function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Saves a figure's toSVG() or toPNG() as `<tag name>.svg|png`; a failure becomes its `error` event. */
export async function downloadFigure(figure, kind) {
  try {
    const blob = kind === 'svg' ? new Blob([figure.toSVG()], { type: 'image/svg+xml' })
      : kind === 'html' ? new Blob([await figure.toHTML()], { type: 'text/html' }) : await figure.toPNG();
    download(blob, `${figure.localName}.${kind}`);
  } catch (error) {
    figure.dispatchEvent(new CustomEvent('error', { bubbles: true, detail: { message: error.message, error } }));
  }
}
