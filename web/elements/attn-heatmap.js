// <attn-heatmap>: the n×n weight table (rows = queries, columns = keys) on canvas. The cells are
// drawn once into a layer; hovering or moving the keyboard cursor redraws only a transparent
// overlay (the crosshair), so it stays fluid at n = 2048. Click (or Enter) pins a row, shown
// below as bars. `query` is the pinned row (−1: none).
import { describeRow, fmt, isActivation, quote } from './lib/a11y.js';
import { AttnElement } from './lib/base.js';
import { css, hex } from './lib/color.js';
import { headMatrix, maskMatrix } from './lib/compute.js';
import { h, sizeCanvas } from './lib/dom.js';
import { canvasDataURL, clip, hatchDef, legendSVG, svgDocument, tag, text } from './lib/export.js';
import { MatrixLayers, cellsLayer, drawMatrix, hatch, maskLayer } from './lib/matrix-canvas.js';

const MAX_CELL = 40, LABEL_CELL = 11, FONT = 11, CHART = 84;

const STYLE = `
.plot { position: relative; width: max-content; max-width: 100%; touch-action: manipulation; cursor: crosshair; border-radius: 2px; }
.plot canvas { display: block; }
.plot .overlay { position: absolute; inset: 0; pointer-events: none; }
.readout { min-height: 1.4em; margin: 4px 0; color: var(--attn-muted); overflow-wrap: anywhere; }
.readout .value { color: var(--attn-fg); }
.legend { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 6px; color: var(--attn-muted); font-size: 11px; }
.legend canvas { display: block; border: 1px solid var(--attn-line); }
.legend .gap { width: 10px; }
.pinned { margin-top: 8px; }
.pinned-title { margin-bottom: 2px; overflow-wrap: anywhere; }
.pinned canvas { display: block; }
`;

export class AttnHeatmap extends AttnElement {
  static styles = [STYLE];
  static defaults = { query: -1 };

  #layout = null;       // { gutter, cell, plot, n, labels }
  #layers = null;       // { key, cells, mask, masked }
  #canvases = new MatrixLayers();  // reused by every redraw: no n²-sized allocation
  #legendKey = null;
  #cursor = null;       // { i, j } under the pointer or keyboard
  #pointer = false;
  #frame = 0;
  /** How often each layer was drawn (for tests: hovering must not redraw the cells). */
  renderStats = { cells: 0, overlay: 0 };

  setup(body) {
    this.canvas = h('canvas', { class: 'cells', 'aria-hidden': 'true' });
    this.overlay = h('canvas', { class: 'overlay', 'aria-hidden': 'true' });
    this.plot = h('div', {
      class: 'plot', part: 'plot', tabindex: 0, role: 'application',
      'aria-roledescription': 'attention heatmap',
    }, this.canvas, this.overlay);
    this.readout = h('div', { class: 'readout', 'aria-hidden': 'true' });
    this.ramp = h('canvas', { width: 120, height: 10 });
    this.swatch = h('canvas', { width: 10, height: 10 });
    this.swatchLabel = h('span', {}, 'masked');
    this.legend = h('div', { class: 'legend', part: 'legend', 'aria-hidden': 'true' },
      h('span', {}, '0'), this.ramp, h('span', {}, '1'), h('span', { class: 'gap' }), this.swatch, this.swatchLabel);
    this.pinTitle = h('div', { class: 'pinned-title' });
    this.chart = h('canvas', { 'aria-hidden': 'true' });
    this.pinned = h('div', { class: 'pinned', part: 'pinned', hidden: true }, this.pinTitle, this.chart);
    body.append(this.plot, this.readout, this.legend, this.pinned);

    this.plot.addEventListener('pointermove', (e) => this.#hover(e));
    this.plot.addEventListener('pointerleave', () => {
      this.#pointer = false;
      if (this.shadowRoot.activeElement !== this.plot) this.#moveCursor(null);
    });
    this.plot.addEventListener('click', (e) => {
      const cell = this.#cellAt(e);
      if (!cell) return;
      this.#moveCursor(cell);
      this.setState('query', this.query === cell.i ? -1 : cell.i);
    });
    this.plot.addEventListener('keydown', (e) => this.#key(e));
    this.plot.addEventListener('focus', () => {
      if (!this.#cursor && this.result) this.#moveCursor({ i: Math.max(0, this.query), j: 0 });
    });
    this.plot.addEventListener('blur', () => { if (!this.#pointer) this.#moveCursor(null); });
  }

  render(result) {
    const { n, tokens } = result;
    const theme = this.theme;
    const key = `${this.layer}/${this.head}`;
    if (this.#layers?.result !== result || this.#layers.key !== key || this.#layers.theme !== theme) {
      const weights = headMatrix(result, this.layer, this.head);
      const { masked, layer } = this.#canvases.masks(result.masks, n);
      this.#layers = { result, key, theme, weights, masked,
        cells: this.#canvases.cells(weights, n, theme.scale, masked), mask: layer };
    }
    this.#layout = this.#measure(result, this.body.clientWidth || 600, theme);
    this.#drawCells(tokens, theme);
    this.#drawLegend(theme);
    this.plot.setAttribute('aria-label',
      `Attention weights of ${n} tokens${result.layers > 1 || result.heads > 1 ? `, layer ${this.layer + 1}, head ${this.head + 1}` : ''}: ` +
      'rows are queries, columns are keys. Arrow keys move, Enter pins a row.');
    if (this.#cursor) this.#cursor = { i: Math.min(this.#cursor.i, n - 1), j: Math.min(this.#cursor.j, n - 1) };
    this.#drawOverlay();
    this.#drawPinned(theme);
  }

  stateChanged(name) {
    if (name !== 'query') return true;
    this.#drawOverlay();
    this.#drawPinned(this.theme);
    if (this.query >= 0) {
      const row = this.#row(this.query);
      this.say(`Pinned. ${describeRow(this.tokens, this.query, row, (j) => this.isMasked(this.query, j))}`);
    }
    return false;
  }

  /** Where cell (query i, key j) is, in CSS pixels relative to the element's top-left corner. */
  cellBox(i, j) {
    const l = this.#layout;
    if (!l) return null;
    const a = this.canvas.getBoundingClientRect(), b = this.getBoundingClientRect();
    return { x: a.left - b.left + l.gutter + j * l.cell, y: a.top - b.top + l.gutter + i * l.cell, width: l.cell, height: l.cell };
  }

  /** The canvas layout (CSS pixels within the cells canvas): { gutter, cell, plot, labels }. */
  get layout() {
    return this.#layout && { ...this.#layout };
  }

  // ——— drawing ———

  #measure(result, width, theme) {
    const ctx = this.canvas.getContext('2d');
    ctx.font = `${FONT}px ${theme.fontFamily}`;
    let label = 0;
    if ((width - 40) / result.n >= LABEL_CELL)
      for (const t of result.tokens) label = Math.max(label, ctx.measureText(clip(t, 16)).width);
    let gutter = Math.round(Math.min(Math.max(label + 10, 24), 110, width * 0.3));
    let cell = Math.min(MAX_CELL, (width - gutter - 2) / result.n);
    let labels = cell >= LABEL_CELL;
    if (!labels) {
      gutter = 0;
      cell = Math.min(MAX_CELL, (width - 2) / result.n);
    }
    if (cell >= 4) cell = Math.floor(cell);
    return { gutter, cell, plot: cell * result.n, labels, n: result.n };
  }

  #drawCells(tokens, theme) {
    const { gutter, plot, labels, n, cell } = this.#layout;
    const size = gutter + plot;
    const ratio = globalThis.devicePixelRatio || 1;
    const ctx = sizeCanvas(this.canvas, size, size, ratio);
    sizeCanvas(this.overlay, size, size, ratio);
    ctx.fillStyle = css(theme.bg);
    ctx.fillRect(0, 0, size, size);
    drawMatrix(ctx, { cells: this.#layers.cells, mask: this.#layers.mask, x: gutter, y: gutter, size: plot, theme, ratio, cache: this.#canvases.hatch });
    if (labels) {
      ctx.fillStyle = css(theme.fg);
      ctx.font = `${FONT}px ${theme.fontFamily}`;
      ctx.textBaseline = 'middle';
      tokens.forEach((t, i) => {
        const label = clip(t, 16), c = gutter + i * cell + cell / 2;
        ctx.textAlign = 'right';
        ctx.fillText(label, gutter - 5, c, gutter - 7);
        ctx.save();
        ctx.translate(c, gutter - 5);
        ctx.rotate(-Math.PI / 2);
        ctx.textAlign = 'left';
        ctx.fillText(label, 0, 0, gutter - 7);
        ctx.restore();
      });
    }
    this.renderStats.cells++;
  }

  #drawLegend(theme) {
    const masked = this.#layers.masked !== null;
    if (this.#legendKey?.theme === theme && this.#legendKey.masked === masked) return;
    this.#legendKey = { theme, masked };
    const ramp = this.ramp.getContext('2d');
    for (let x = 0; x < 120; x++) {
      ramp.fillStyle = theme.scale.css(x / 119);
      ramp.fillRect(x, 0, 1, 10);
    }
    const swatch = this.swatch.getContext('2d');
    swatch.fillStyle = hatch(swatch, theme);
    swatch.fillRect(0, 0, 10, 10);
    this.swatch.hidden = !masked;
    this.swatchLabel.hidden = !masked;
  }

  #drawOverlay() {
    cancelAnimationFrame(this.#frame);
    this.#frame = 0;
    const l = this.#layout;
    if (!l) return;
    const ctx = this.overlay.getContext('2d');
    const ratio = this.overlay.width / (l.gutter + l.plot);
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, l.gutter + l.plot, l.gutter + l.plot);
    const theme = this.theme;
    const { gutter: g, cell, plot } = l;
    const q = this.query;
    if (q >= 0) {  // the pinned row: a band across the plot and a marker in the gutter
      ctx.strokeStyle = css(theme.accent);
      ctx.lineWidth = 2;
      ctx.strokeRect(g - 1, g + q * cell - 1, plot + 2, cell + 2);
      ctx.fillStyle = css(theme.accent);
      ctx.fillRect(Math.max(0, g - 4), g + q * cell, 3, Math.max(cell, 2));
    }
    const c = this.#cursor;
    if (c) {
      ctx.fillStyle = `rgba(${theme.fg.join(',')}, 0.10)`;
      ctx.fillRect(g, g + c.i * cell, plot, Math.max(cell, 1));
      ctx.fillRect(g + c.j * cell, g, Math.max(cell, 1), plot);
      const m = Math.max(cell, 6), x = g + c.j * cell + cell / 2 - m / 2, y = g + c.i * cell + cell / 2 - m / 2;
      ctx.lineWidth = 2;
      ctx.strokeStyle = css(theme.bg);
      ctx.strokeRect(x - 1, y - 1, m + 2, m + 2);
      ctx.strokeStyle = css(theme.focus);
      ctx.strokeRect(x, y, m, m);
    }
    this.#showReadout();
    this.renderStats.overlay++;
  }

  #showReadout() {
    const c = this.#cursor;
    if (!c) {
      this.readout.replaceChildren(this.query >= 0 ? 'Click the pinned row again (or press Escape) to release it.'
        : 'Hover, tap or use the arrow keys for exact values; click to pin a row.');
      return;
    }
    const { tokens } = this.result;
    const value = this.#layers.weights[c.i * this.result.n + c.j];
    const masked = this.isMasked(c.i, c.j);
    this.readout.replaceChildren(
      h('span', { class: 'tok' }, quote(tokens[c.i])), ' → ', h('span', { class: 'tok' }, quote(tokens[c.j])), ': ',
      h('span', { class: 'value num' }, masked ? 'masked (0)' : String(value)),
      ` · row ${c.i + 1}, column ${c.j + 1}`);
  }

  #row(i) {
    const n = this.result.n;
    return this.#layers.weights.subarray(i * n, (i + 1) * n);
  }

  #drawPinned(theme) {
    const q = this.query, l = this.#layout;
    this.pinned.hidden = q < 0 || !l;
    if (this.pinned.hidden) return;
    const row = this.#row(q);
    const masked = (j) => this.isMasked(q, j);
    this.pinTitle.replaceChildren('Pinned row as bars: ', describeRow(this.tokens, q, row, masked));
    const width = l.gutter + l.plot;
    const ctx = sizeCanvas(this.chart, width, CHART);
    ctx.clearRect(0, 0, width, CHART);
    const base = CHART - 2, top = 6, span = base - top;
    ctx.fillStyle = css(theme.muted);
    ctx.font = `10px ${theme.fontFamily}`;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    if (l.gutter >= 20) {
      ctx.fillText('1', l.gutter - 5, top);
      ctx.fillText('0', l.gutter - 5, base);
    }
    ctx.fillStyle = `rgba(${theme.line.join(',')}, 1)`;
    ctx.fillRect(l.gutter, top, l.plot, 1);
    const pattern = hatch(ctx, theme);
    const w = l.cell > 4 ? l.cell - 1 : Math.max(l.cell, 1);
    for (let j = 0; j < row.length; j++) {
      const x = l.gutter + j * l.cell;
      if (masked(j)) {
        ctx.fillStyle = pattern;
        ctx.fillRect(x, top, w, span);
      } else {
        ctx.fillStyle = css(theme.accent);
        const hgt = row[j] * span;
        ctx.fillRect(x, base - hgt, w, hgt);
      }
    }
    ctx.fillStyle = css(theme.line);
    ctx.fillRect(l.gutter, base, l.plot, 1);
  }

  // ——— interaction ———

  #cellAt(event) {
    const l = this.#layout;
    if (!l) return null;
    const rect = this.canvas.getBoundingClientRect();
    const x = event.clientX - rect.left - l.gutter, y = event.clientY - rect.top - l.gutter;
    const i = Math.floor(y / l.cell), j = Math.floor(x / l.cell);
    if (i < 0 || i >= l.n) return null;
    if (j >= l.n) return null;
    return { i, j: Math.max(j, 0), label: j < 0 };
  }

  #moveCursor(cell) {
    const same = cell && this.#cursor && cell.i === this.#cursor.i && cell.j === this.#cursor.j;
    if (same || (!cell && !this.#cursor)) return;
    this.#cursor = cell && { i: cell.i, j: cell.j };
    // One overlay redraw per frame, however many pointer events arrive.
    this.#frame ||= requestAnimationFrame(() => this.#drawOverlay());
  }

  #hover(event) {
    this.#pointer = true;
    const cell = this.#cellAt(event);
    if (cell) this.#moveCursor(cell);
  }

  #key(event) {
    if (!this.result) return;
    const n = this.result.n, c = this.#cursor ?? { i: Math.max(0, this.query), j: 0 };
    let { i, j } = c;
    const k = event.key;
    if (k === 'ArrowUp') i--;
    else if (k === 'ArrowDown') i++;
    else if (k === 'ArrowLeft') j--;
    else if (k === 'ArrowRight') j++;
    else if (k === 'PageUp') i -= 10;
    else if (k === 'PageDown') i += 10;
    else if (k === 'Home') { j = 0; if (event.ctrlKey || event.metaKey) i = 0; }
    else if (k === 'End') { j = n - 1; if (event.ctrlKey || event.metaKey) i = n - 1; }
    else if (isActivation(event)) {
      event.preventDefault();
      this.setState('query', this.query === i ? -1 : i);
      return;
    } else if (k === 'Escape' && this.query >= 0) {
      event.preventDefault();
      this.setState('query', -1);
      return;
    } else return;
    event.preventDefault();
    i = Math.max(0, Math.min(n - 1, i));
    j = Math.max(0, Math.min(n - 1, j));
    this.#moveCursor({ i, j });
    const { tokens } = this.result;
    const value = this.isMasked(i, j) ? 'masked' : fmt(this.#layers.weights[i * n + j], 4);
    if (this.query >= 0 && i !== this.query) this.setState('query', i);  // a pinned row follows the cursor
    this.say(`Row ${quote(tokens[i])}, column ${quote(tokens[j])}: ${value}`);
  }

  // ——— export ———

  svg(result, theme) {
    const { n, tokens } = result;
    const weights = headMatrix(result, this.layer, this.head);
    const masked = maskMatrix(result.masks, n);
    const labels = n <= 256;
    const cell = labels ? Math.max(4, Math.min(28, Math.floor(560 / n))) : 560 / n;
    const gutter = labels ? 90 : 10, plot = cell * n;
    const font = { 'font-size': Math.min(11, Math.max(5, cell - 2)), fill: hex(theme.fg) };
    const parts = [tag('defs', {}, hatchDef('attn-hatch', theme))];
    if (labels)
      tokens.forEach((t, i) => {
        const c = gutter + i * cell + cell / 2;
        parts.push(text({ x: gutter - 4, y: c, 'text-anchor': 'end', 'dominant-baseline': 'middle', ...font }, clip(t, 16)));
        parts.push(text({ x: c, y: gutter - 4, transform: `rotate(-90 ${c} ${gutter - 4})`, 'dominant-baseline': 'middle', ...font }, clip(t, 16)));
      });
    if (n <= 64) {
      for (let i = 0; i < n; i++)
        for (let j = 0; j < n; j++) {
          const m = masked?.[i * n + j];
          parts.push(tag('rect', {
            x: gutter + j * cell, y: gutter + i * cell, width: cell, height: cell,
            fill: m ? 'url(#attn-hatch)' : theme.scale.css(weights[i * n + j]),
            'data-weight': m ? 'masked' : weights[i * n + j],
          }));
        }
    } else {
      const image = document.createElement('canvas');
      const px = Math.min(2048, Math.max(n, Math.ceil(plot * 2)));
      image.width = px;
      image.height = px;
      drawMatrix(image.getContext('2d'), {
        cells: cellsLayer(weights, n, theme.scale, masked), mask: maskLayer(masked, n), x: 0, y: 0, size: px, theme,
      });
      parts.push(tag('image', { x: gutter, y: gutter, width: plot, height: plot, href: canvasDataURL(image), preserveAspectRatio: 'none' }));
    }
    parts.push(tag('rect', { x: gutter, y: gutter, width: plot, height: plot, fill: 'none', stroke: hex(theme.line) }));
    let y = gutter + plot + 14;
    parts.push(legendSVG(theme, gutter, y, { masked: masked !== null }));
    y += 24;
    const q = this.query;
    if (q >= 0) {
      const row = weights.subarray(q * n, (q + 1) * n);
      parts.push(text({ x: gutter, y: y + 10, 'font-size': 11, fill: hex(theme.fg) }, `Row ${quote(clip(tokens[q], 40))} as bars`));
      const base = y + 70;
      for (let j = 0; j < n; j++)
        parts.push(masked?.[q * n + j]
          ? tag('rect', { x: gutter + j * cell, y: base - 50, width: Math.max(cell - 1, 0.5), height: 50, fill: 'url(#attn-hatch)' })
          : tag('rect', { x: gutter + j * cell, y: base - row[j] * 50, width: Math.max(cell - 1, 0.5), height: row[j] * 50, fill: hex(theme.accent) }));
      y = base + 8;
    }
    const title = `Attention weights of ${n} tokens (rows: queries, columns: keys)`;
    return svgDocument({ width: gutter + plot + 20, height: y + 6, title, theme, body: parts.join('') });
  }
}

if (globalThis.customElements && !customElements.get('attn-heatmap')) customElements.define('attn-heatmap', AttnHeatmap);
