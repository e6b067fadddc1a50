// <attn-compare>: two attention tables, A and B, side by side and as a difference A − B on a
// diverging scale. A and B are two sentences, two models on one text, or two heads/layers of the
// same data. The crosshair is shared: hovering a cell in any panel shows A, B and A − B there.
// Cells are drawn with the heatmap's canvas code (matrix-canvas.js), once per data and view;
// moving the crosshair redraws only transparent overlays.
import { fmt, isActivation, quote } from './lib/a11y.js';
import { AttnElement } from './lib/base.js';
import { css } from './lib/color.js';
import { VIEWS, comparePanels, parseView } from './lib/compare-model.js';
import { drawCrosshair, gridMove } from './lib/crosshair.js';
import { DataError } from './lib/data.js';
import { signed } from './lib/difference.js';
import { h, sizeCanvas } from './lib/dom.js';
import { selectedMatrix } from './lib/compute.js';
import { clip } from './lib/export.js';
import { applyFilter } from './lib/filter.js';
import { cellsLayer, drawMatrix, maskLayer } from './lib/matrix-canvas.js';
import { fetchSource, readSource } from './lib/source.js';
import { drawScaleLegend } from './lib/scale-legend.js';
import { STATE } from './lib/state.js';
import { compareSVG } from './svg/compare.js';

const STYLE = `
.panels { display: flex; flex-wrap: wrap; gap: 12px 18px; align-items: flex-start; touch-action: manipulation; border-radius: 2px; }
.panel { margin: 0; min-width: 0; }
.panel figcaption { font-weight: 600; margin-bottom: 2px; overflow-wrap: anywhere; }
.plot { position: relative; width: max-content; max-width: 100%; cursor: crosshair; }
.plot canvas { display: block; }
.plot .overlay { position: absolute; inset: 0; pointer-events: none; }
.legend { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 6px; margin-top: 4px; color: var(--attn-muted); font-size: 11px; }
.legend canvas { display: block; border: 1px solid var(--attn-line); }
.readout { min-height: 1.4em; margin: 6px 0 0; color: var(--attn-muted); overflow-wrap: anywhere; }
.readout .value { color: var(--attn-fg); }
`;

const MAX_CELL = 32, LABEL_CELL = 11, FONT = 11, SIDES = ['a', 'b'];
const SIDE_ATTRIBUTES = ['src', 'model', 'text', 'head', 'layer', 'label'].flatMap((a) => SIDES.map((s) => `${a}-${s}`));

export class AttnCompare extends AttnElement {
  static styles = [STYLE];
  static defaults = { query: -1 };
  static get observedAttributes() {
    return [...super.observedAttributes, 'view', ...SIDE_ATTRIBUTES];
  }

  #view = 'side-by-side';
  #model = null;       // comparePanels(...) of the current render
  #drawn = null;       // [{ panel, layout, cells, mask, canvas, overlay }]
  #cursor = null;      // { i, j }
  #frame = 0;

  setup(body) {
    this.panelsBox = h('div', { class: 'panels', part: 'panels', tabindex: 0, role: 'application', 'aria-roledescription': 'attention comparison' });
    this.readout = h('p', { class: 'readout', 'aria-hidden': 'true' });
    body.append(this.panelsBox, this.readout);
    this.panelsBox.addEventListener('pointermove', (e) => this.#hover(e));
    this.panelsBox.addEventListener('click', (e) => this.#hover(e, true));
    this.panelsBox.addEventListener('pointerleave', () => {
      if (this.shadowRoot.activeElement !== this.panelsBox) this.#moveCursor(null);
    });
    this.panelsBox.addEventListener('keydown', (e) => this.#key(e));
    this.panelsBox.addEventListener('blur', () => this.#moveCursor(null));
  }

  attributeChangedCallback(name, old, value) {
    if (old === value) return;
    try {
      if (name === 'view') {
        this.#view = parseView(value);
        this.#again();
      } else if (/^(head|layer)-[ab]$/.test(name)) {
        if (value !== null) STATE[name.slice(0, -2)].parse(value);  // a clear error now, not at drawing
        this.#again();
      } else if (/^label-[ab]$/.test(name)) this.#again();
      else if (SIDE_ATTRIBUTES.includes(name)) {
        if (this.data === undefined) this.data = undefined;  // read the sources again
      } else return super.attributeChangedCallback(name, old, value);
      this.attributeError(name, null);
    } catch (error) {
      this.attributeError(name, error);  // shown above the figure, and fired as `error`
      if (/^(head|layer)-[ab]$/.test(name)) this.#again();  // that side falls back to the shared layer/head
    }
  }

  // Redraw; out of the error state (e.g. different tokens in the difference view) read again.
  #again() {
    if (this.error) this.data = this.data;
    else this.redraw();
  }

  /** The view: 'side-by-side' (A | B), 'difference' (A − B) or 'all'. Reflects to `view`. */
  get view() { return this.#view; }
  set view(value) { this.setAttribute('view', parseView(value)); }

  /** A's and B's matrices as drawn (nQ×nK, rows = queries), and A − B (null with different tokens). */
  get weightsA() { return this.#model?.a.values ?? null; }
  get weightsB() { return this.#model?.b.values ?? null; }
  get difference() { return this.#model?.diff?.values ?? null; }
  /** The largest |A − B| (the ends of the difference legend). */
  get maxDifference() { return this.#model?.diff?.max ?? null; }

  /** Where cell (i, j) of a panel ('a', 'b' or 'difference') is, in CSS pixels from the element's corner. */
  cellBox(panel, i, j) {
    const d = this.#drawn?.find((x) => x.panel.kind === panel);
    if (!d) return null;
    const a = d.canvas.getBoundingClientRect(), b = this.getBoundingClientRect(), l = d.layout;
    return { x: a.left - b.left + l.gutter + j * l.cell, y: a.top - b.top + l.gutter + i * l.cell, width: l.cell, height: l.cell };
  }

  /** Each panel's canvas layout: { kind, gutter, cell, rows, cols, labels }. */
  get layout() {
    return this.#drawn?.map((d) => ({ kind: d.panel.kind, ...d.layout })) ?? null;
  }

  // ——— data: two sources ———

  // { a, b } raw data: `data` = { a, b } or one data for both; src-a/src-b; model-a/model-b or
  // text-a/text-b (with model/text); else the usual source for both (two heads or layers).
  async readData(property, signal) {
    if (property !== undefined) {
      if (isPair(property)) return pair(property);
      return { a: property, b: property };
    }
    const side = async (s) => {
      const src = this.getAttribute(`src-${s}`);
      if (src) return fetchSource(src.trim(), this, signal);
      if (this.hasAttribute(`model-${s}`) || (this.hasAttribute('model') && this.hasAttribute(`text-${s}`)))
        return { model: this.getAttribute(`model-${s}`) ?? this.getAttribute('model'), text: this.getAttribute(`text-${s}`) ?? this.getAttribute('text') ?? '' };
      return null;
    };
    const [a, b] = await Promise.all(SIDES.map(side));
    if (a !== null && b !== null) return { a, b };
    const shared = await readSource(this, undefined, signal);
    if (shared === null || shared === undefined) return null;
    if (isPair(shared)) return pair(shared);
    return { a: a ?? shared, b: b ?? shared };
  }

  async checkData(raw) {
    const a = await super.checkData(raw.a);
    const b = raw.b === raw.a ? a : await super.checkData(raw.b);
    return Object.freeze({ kind: 'pair', a, b, causal: a.causal, keyMask: a.keyMask, tokens: a.tokens, n: a.n });
  }

  compute(lens, data, state) {
    const side = (d, s) => applyFilter(super.compute(lens, d, { ...state, ...this.#sideState(s, null) }), state);
    const a = side(data.a, 'a'), b = data.b === data.a ? a : side(data.b, 'b');
    return { ...a, kind: 'pair', a, b };
  }

  // Layer and head of a side (layer-a, head-a, …, else the shared layer/head), inside `result`.
  #sideState(s, result) {
    // A bad value (said above the figure by attributeChangedCallback) falls back to the shared one.
    const own = (name, shared) => {
      const text = this.getAttribute(`${name}-${s}`);
      try {
        return text === null ? [shared, false] : [STATE[name].parse(text), true];
      } catch {
        return [shared, false];
      }
    };
    let [layer, ownLayer] = own('layer', this.layer), [head, ownHead] = own('head', this.head);
    if (result) {
      // head-b="9" with 4 heads: the last head, and said so.
      const past = (name, value, count, given) => (given && value >= count
        ? new RangeError(`past the last ${name}: side ${s.toUpperCase()} has ${count} ${name}${count === 1 ? '' : 's'} (0 to ${count - 1}); showing ${name} ${count - 1}`) : null);
      if (typeof layer === 'number') {
        if (ownLayer) this.attributeError(`layer-${s}`, past('layer', layer, result.layers, ownLayer));
        layer = Math.min(layer, result.layers - 1);
      }
      if (typeof head === 'number') {
        if (ownHead) this.attributeError(`head-${s}`, past('head', head, result.heads, ownHead));
        head = Math.min(head, result.heads - 1);
      }
    }
    return { layer, head };
  }

  #sides(result) {
    const sides = {};
    const differ = (name) => this.hasAttribute(`${name}-a`) || this.hasAttribute(`${name}-b`);
    for (const s of SIDES) {
      const r = result[s], { layer, head } = this.#sideState(s, r);
      const details = [
        (this.getAttribute(`model-${s}`)),
        layer === 'rollout' ? 'rollout' : (differ('layer') || r.layers > 1) ? `layer ${layer + 1}` : null,
        layer === 'rollout' ? null : typeof head === 'string' ? `${head} of heads` : (differ('head') || r.heads > 1) ? `head ${head + 1}` : null,
      ].filter(Boolean);
      sides[s] = { layer, head, label: this.getAttribute(`label-${s}`) ?? (details.length ? `${s.toUpperCase()} (${details.join(', ')})` : s.toUpperCase()) };
    }
    return sides;
  }

  // ——— drawing ———

  render(result) {
    const theme = this.theme;
    const model = comparePanels(result, this.#sides(result), this.#view, theme, (r, l, hd) => selectedMatrix(this.lens, r, l, hd), this.colorScale);
    // A shared picker means nothing once both sides name their own head (or layer).
    if (this.hasAttribute('head-a') && this.hasAttribute('head-b')) this.headLabel.hidden = true;
    if (this.hasAttribute('layer-a') && this.hasAttribute('layer-b')) this.layerLabel.hidden = true;
    this.#model = model;
    const width = this.body.clientWidth || 600;
    const count = model.panels.length;
    const across = count > 1 && width >= count * 170 ? count : 1;
    const room = (width - (across - 1) * 18) / across;
    const key = `${this.#view}|${JSON.stringify(this.#sides(result))}|${Math.round(room)}|${this.colorScale}`;
    if (this.#drawn?.result !== result || this.#drawn.key !== key || this.#drawn.theme !== theme) {
      const drawn = model.panels.map((panel) => this.#drawPanel(panel, room, theme));
      drawn.result = result;
      drawn.key = key;
      drawn.theme = theme;
      this.#drawn = drawn;
      this.panelsBox.replaceChildren(...drawn.map((d) => d.figure));
    }
    if (this.#cursor) this.#cursor = { i: Math.min(this.#cursor.i, model.a.rows - 1), j: Math.min(this.#cursor.j, model.a.cols - 1) };
    const what = this.#view === 'difference' ? `the difference ${model.panels[0].title}` : `${model.a.title} and ${model.b.title}`;
    this.panelsBox.setAttribute('aria-label', `Attention weights of ${what}, ${model.a.rows} tokens: rows are queries, columns keys. ` +
      'Arrow keys move the crosshair and read A, B and their difference.');
    this.#drawOverlays();
  }

  #drawPanel(panel, room, theme) {
    const canvas = h('canvas', { class: 'cells', 'aria-hidden': 'true' });
    const overlay = h('canvas', { class: 'overlay', 'aria-hidden': 'true' });
    const ctx = canvas.getContext('2d');
    const n = Math.max(panel.rows, panel.cols);
    ctx.font = `${FONT}px ${theme.fontFamily}`;
    let label = 0;
    if ((room - 40) / n >= LABEL_CELL)
      for (const t of [...panel.queryTokens, ...panel.keyTokens]) label = Math.max(label, ctx.measureText(clip(t, 14)).width);
    let gutter = Math.round(Math.min(Math.max(label + 10, 24), 100, room * 0.3));
    let cell = Math.min(MAX_CELL, (room - gutter - 2) / n);
    const labels = cell >= LABEL_CELL;
    if (!labels) { gutter = 0; cell = Math.min(MAX_CELL, (room - 2) / n); }
    if (cell >= 4) cell = Math.floor(cell);
    const layout = { gutter, cell, rows: panel.rows, cols: panel.cols, labels };
    const w = gutter + cell * panel.cols, hgt = gutter + cell * panel.rows;
    const ratio = globalThis.devicePixelRatio || 1;
    const c = sizeCanvas(canvas, w, hgt, ratio);
    sizeCanvas(overlay, w, hgt, ratio);
    c.fillStyle = css(theme.bg);
    c.fillRect(0, 0, w, hgt);
    const cells = cellsLayer(panel.unit, panel.rows, panel.scale, panel.masked, panel.cols);
    drawMatrix(c, {
      cells, mask: maskLayer(panel.masked, panel.rows, panel.cols), x: gutter, y: gutter,
      width: cell * panel.cols, height: cell * panel.rows, theme, ratio,
    });
    if (labels) {
      c.fillStyle = css(theme.fg);
      c.textBaseline = 'middle';
      panel.queryTokens.forEach((t, i) => {
        c.textAlign = 'right';
        c.fillText(clip(t, 14), gutter - 5, gutter + (i + 0.5) * cell, gutter - 7);
      });
      panel.keyTokens.forEach((t, j) => {
        c.save();
        c.translate(gutter + (j + 0.5) * cell, gutter - 5);
        c.rotate(-Math.PI / 2);
        c.textAlign = 'left';
        c.fillText(clip(t, 14), 0, 0, gutter - 7);
        c.restore();
      });
    }
    const figure = h('figure', { class: 'panel', 'data-panel': panel.kind },
      h('figcaption', {}, panel.title), h('div', { class: 'plot', part: 'plot' }, canvas, overlay), this.#legend(panel, theme));
    return { panel, layout, canvas, overlay, figure };
  }

  #legend(panel, theme) {
    const ramp = h('canvas', { width: 120, height: 10 });
    const ctx = ramp.getContext('2d');
    for (let x = 0; x < 120; x++) {
      ctx.fillStyle = panel.scale.css(x / 119);
      ctx.fillRect(x, 0, 1, 10);
    }
    if (panel.kind !== 'difference' && this.colorScale !== 'linear') {
      const box = h('div', { class: 'legend', 'aria-hidden': 'true' });
      drawScaleLegend(box, theme, this.colorScale, panel.top, panel.scale);
      return box;
    }
    if (panel.kind !== 'difference') return h('div', { class: 'legend', 'aria-hidden': 'true' }, h('span', {}, '0'), ramp, h('span', {}, '1'));
    const max = this.#model.diff.max;
    return h('div', { class: 'legend', 'aria-hidden': 'true' }, h('span', {}, signed(-max)), ramp, h('span', {}, signed(max)),
      h('span', {}, `B larger ← 0 → A larger`));
  }

  #drawOverlays() {
    cancelAnimationFrame(this.#frame);
    this.#frame = 0;
    if (!this.#drawn) return;
    const theme = this.theme, c = this.#cursor;
    for (const d of this.#drawn) {
      const l = d.layout, w = l.gutter + l.cell * l.cols, hgt = l.gutter + l.cell * l.rows;
      const ctx = d.overlay.getContext('2d');
      const ratio = d.overlay.width / w;
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      ctx.clearRect(0, 0, w, hgt);
      if (!c || c.i >= l.rows || c.j >= l.cols) continue;
      drawCrosshair(ctx, { x: l.gutter, y: l.gutter, cell: l.cell, rows: l.rows, cols: l.cols, i: c.i, j: c.j, theme });
    }
    this.#showReadout();
  }

  /** A, B and A − B at cell (i, j), as text (what the readout and the live region say). */
  describeCell(i, j) {
    const m = this.#model;
    if (!m) return '';
    const value = (side) => (i < side.rows && j < side.cols ? fmt(side.values[i * side.cols + j], 4) : '—');
    const q = m.a.queryTokens[i] ?? m.b.queryTokens[i], k = m.a.keyTokens[j] ?? m.b.keyTokens[j];
    const diff = m.diff ? ` · A−B ${signed(m.diff.values[i * m.a.cols + j], 4)}` : '';
    return `${quote(q)} → ${quote(k)}: A ${value(m.a)} · B ${value(m.b)}${diff}`;
  }

  #showReadout() {
    const c = this.#cursor;
    if (!c) {
      this.readout.textContent = 'Hover, tap or use the arrow keys to read A, B and A − B at a cell.';
      return;
    }
    this.readout.replaceChildren(h('span', { class: 'value num' }, this.describeCell(c.i, c.j)));
  }

  // ——— interaction ———

  #cellAt(event) {
    for (const d of this.#drawn ?? []) {
      const r = d.canvas.getBoundingClientRect(), l = d.layout;
      const x = event.clientX - r.left - l.gutter, y = event.clientY - r.top - l.gutter;
      const i = Math.floor(y / l.cell), j = Math.floor(x / l.cell);
      if (x >= 0 && y >= 0 && i < l.rows && j < l.cols) return { i, j };
    }
    return null;
  }

  #hover(event, say = false) {
    const cell = this.#cellAt(event);
    if (!cell) return;
    this.#moveCursor(cell);
    if (say) this.say(this.describeCell(cell.i, cell.j));
  }

  #moveCursor(cell) {
    const same = cell && this.#cursor && cell.i === this.#cursor.i && cell.j === this.#cursor.j;
    if (same || (!cell && !this.#cursor)) return;
    this.#cursor = cell;
    this.#frame ||= requestAnimationFrame(() => this.#drawOverlays());
  }

  #key(event) {
    const m = this.#model;
    if (!m) return;
    const rows = Math.max(m.a.rows, m.b.rows), cols = Math.max(m.a.cols, m.b.cols);
    const c = this.#cursor;
    if (event.key === 'Escape' && c) {
      event.preventDefault();
      this.#moveCursor(null);
      return;
    }
    if (isActivation(event) && c) {
      event.preventDefault();
      this.say(this.describeCell(c.i, c.j));
      return;
    }
    // The first arrow shows the crosshair at the top-left cell.
    const to = c ? gridMove(event, c, rows, cols) : event.key.startsWith('Arrow') ? { i: 0, j: 0 } : null;
    if (!to) return;
    event.preventDefault();
    this.#moveCursor(to);
    this.say(this.describeCell(to.i, to.j));
  }

  // ——— export ———

  svg(result, theme) {
    const sides = this.#sides(result);
    const weights = { a: selectedMatrix(this.lens, result.a, sides.a.layer, sides.a.head), b: selectedMatrix(this.lens, result.b, sides.b.layer, sides.b.head) };
    return compareSVG(result, theme, { view: this.#view, sides, weights, 'color-scale': this.colorScale });
  }
}

const isPair = (x) => x !== null && typeof x === 'object' && !Array.isArray(x) && ('a' in x || 'b' in x) && !('tokens' in x);

function pair(x) {
  if (x.a === undefined || x.a === null || x.b === undefined || x.b === null)
    throw new DataError(`compare data needs both a and b (got only ${x.a ? 'a' : 'b'})`);
  return { a: x.a, b: x.b };
}

export { VIEWS };

if (globalThis.customElements && !customElements.get('attn-compare')) customElements.define('attn-compare', AttnCompare);
