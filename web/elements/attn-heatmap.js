// <attn-heatmap>: the nQ×nK weight table (rows = queries, columns = keys) on canvas. The cells are
// drawn once into a layer; hovering or moving the keyboard cursor redraws only a transparent
// overlay (the crosshair), so it stays fluid at n = 4096. Click (or Enter) pins a row, shown
// below as bars. `query` is the pinned row (−1: none). Wheel, pinch, drag and +/−/0 zoom and
// pan a window of the table (lib/zoom.js); a minimap shows where the window is. Past 1024
// tokens the table is drawn from block maxima, a zoomed window cell by cell (lib/overview.js).
import { describeRow, fmt, isActivation, quote } from './lib/a11y.js';
import { AttnElement } from './lib/base.js';
import { css } from './lib/color.js';
import { isAggregate } from './lib/compute.js';
import { MAX_PRECOMPUTED_TOKENS } from './lib/data.js';
import { h, sizeCanvas } from './lib/dom.js';
import { drawCrosshair } from './lib/crosshair.js';
import { clip } from './lib/export.js';
import { PixelMatrix, cellsLayer, drawMatrix, hatch, maskLayer } from './lib/matrix-canvas.js';
import { OVERVIEW, blockPositions, rowTops } from './lib/overview.js';
import { drawScaleLegend } from './lib/scale-legend.js';
import { rowSumNote, selectionLabel } from './lib/selection.js';
import { ZoomView, zoomGestures } from './lib/zoom.js';
import { heatmapSVG } from './svg/heatmap.js';

const MAX_CELL = 40, LABEL_CELL = 8, FONT = 11, CHART = 84;
// Zoom stops when a cell is this many CSS pixels; the minimap's longer side.
const ZOOM_CELL = 48, MINIMAP = 96;
// Zoomed into a table of blocks, windows of at most this many cells are drawn cell by cell.
const WINDOW_CELLS = 2 ** 21;

const STYLE = `
.plot { position: relative; width: max-content; max-width: 100%; touch-action: manipulation; cursor: crosshair; border-radius: 2px; }
.plot.zoomable { touch-action: pan-x pan-y; }
.plot.zoomed { touch-action: none; cursor: grab; }
.zoombar { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 8px; margin: 4px 0; color: var(--attn-muted); font-size: 11px; }
.plot .minimap { position: absolute; top: 4px; right: 4px; border: 1px solid var(--attn-line); outline: 2px solid var(--attn-bg); cursor: pointer; opacity: 0.92; }
.plot .minimap[hidden] { display: none; }
.plot .minimap .viewport { position: absolute; box-sizing: border-box; min-width: 4px; min-height: 4px; border: 2px solid var(--attn-focus); outline: 1px solid var(--attn-bg); pointer-events: none; }
.plot canvas { display: block; }
.plot .overlay { position: absolute; inset: 0; pointer-events: none; }
.readout { min-height: 1.4em; margin: 4px 0; color: var(--attn-muted); overflow-wrap: anywhere; }
.readout .value { color: var(--attn-fg); }
.legend { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 6px; color: var(--attn-muted); font-size: 11px; }
.legend canvas { display: block; border: 1px solid var(--attn-line); }
.legend .gap { width: 10px; }
.legend .scale { display: contents; }
.pinned { margin-top: 8px; }
.pinned-title { margin-bottom: 2px; overflow-wrap: anywhere; }
.pinned canvas { display: block; }
.legend .note { flex-basis: 100%; }
`;

export class AttnHeatmap extends AttnElement {
  static styles = [STYLE];
  static defaults = { query: -1 };
  /** Precomputed weights may have up to 8192 tokens (computed ones stay at 4096). */
  static maxPrecomputedTokens = MAX_PRECOMPUTED_TOKENS;

  #layout = null;       // { gutter, cell, plot, n, labels }
  #layers = null;       // { result, key, theme, weights, overview, kQ, kK, tops, top, cells, mask, minimap }
  // Pixel canvases reused by every redraw (no n²-sized allocation).
  #pixels = { cells: new PixelMatrix(), mask: new PixelMatrix(), windowCells: new PixelMatrix(), windowMask: new PixelMatrix(), minimap: new PixelMatrix() };
  #window = null;       // the zoom window's image: { layers, cells, mask, i0, i1, j0, j1 }
  #hatch = {};          // drawMatrix's cache
  #legendKey = null;    // the theme the legend's ramp was drawn with
  #cursor = null;       // { i, j } under the pointer or keyboard
  #pointer = false;
  #press = null;  // where the last press was (fractional pixels), for the click that follows
  #frame = 0;
  #view = new ZoomView();
  #viewFrame = 0;
  #gestures = null;
  #viewKey = '';         // the table size the view belongs to
  #labelWidth = null;    // { tokens, keys, width }: the longest label, measured once per token list
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
    this.linearLegend = [h('span', {}, '0'), this.ramp, h('span', {}, '1')];
    this.scaleLegend = h('span', { class: 'scale' }, ...this.linearLegend);
    this.legend = h('div', { class: 'legend', part: 'legend', 'aria-hidden': 'true' },
      this.scaleLegend, h('span', { class: 'gap' }), this.swatch, this.swatchLabel);
    this.pinTitle = h('div', { class: 'pinned-title' });
    this.chart = h('canvas', { 'aria-hidden': 'true' });
    this.pinned = h('div', { class: 'pinned', part: 'pinned', hidden: true }, this.pinTitle, this.chart);
    this.legendNote = h('span', { class: 'note', hidden: true });
    this.legend.append(this.legendNote);
    // The whole table and a frame where the window is (keyboard users read the zoom bar).
    this.minimapImage = h('canvas', { 'aria-hidden': 'true' });
    this.viewport = h('div', { class: 'viewport' });
    this.minimap = h('div', { class: 'minimap', part: 'minimap', 'aria-hidden': 'true', title: 'Click to move the zoomed window' },
      this.minimapImage, this.viewport);
    this.zoomText = h('span', { class: 'zoom-level' });
    this.minimap.hidden = true;
    this.plot.append(this.minimap);  // over the plot's top-right corner, in view while zooming
    this.zoombar = h('div', { class: 'zoombar', part: 'zoombar', hidden: true }, this.zoomText);
    const zoomButton = (cls, label, text, run) => h('button', { type: 'button', class: cls, 'aria-label': label, title: label, onclick: run }, text);
    this.zoomInButton = zoomButton('zoom-in', 'Zoom in (+)', '+', () => this.zoomBy(2));
    this.zoomOutButton = zoomButton('zoom-out', 'Zoom out (−)', '−', () => this.zoomBy(0.5));
    this.zoomResetButton = zoomButton('zoom-reset', 'Reset zoom (0)', 'Reset', () => this.resetZoom());
    this.zoomControls = h('span', { class: 'zoom-controls', hidden: true }, this.zoomInButton, this.zoomOutButton, this.zoomResetButton);
    this.controls.append(this.zoomControls);
    body.append(this.plot, this.zoombar, this.readout, this.legend, this.pinned);
    // A press on the minimap centres the window there; it is not a pick or a pan of the plot.
    this.minimap.addEventListener('pointerdown', (e) => {
      e.stopPropagation();
      const r = this.minimap.getBoundingClientRect();
      this.#view.centreOn((e.clientY - r.top) / r.height * this.#view.rows, (e.clientX - r.left) / r.width * this.#view.cols);
      this.#viewChanged();
    });
    for (const name of ['click', 'pointermove']) this.minimap.addEventListener(name, (e) => e.stopPropagation());

    this.plot.addEventListener('pointermove', (e) => this.#hover(e));
    this.plot.addEventListener('pointerleave', () => {
      this.#pointer = false;
      if (this.shadowRoot.activeElement !== this.plot) this.#moveCursor(null);
    });
    // A click's coordinates are whole pixels, its press's are not: at 4096 tokens (0.2 px cells
    // before zooming) the press says which row.
    this.plot.addEventListener('pointerdown', (e) => { this.#press = { clientX: e.clientX, clientY: e.clientY }; });
    this.plot.addEventListener('click', (e) => {
      if (this.#gestures?.dragged()) return;  // the end of a pan, not a pick
      const p = this.#press;
      this.#press = null;
      const cell = this.#cellAt(p && Math.abs(p.clientX - e.clientX) < 1 && Math.abs(p.clientY - e.clientY) < 1 ? p : e);
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

  connectedCallback() {
    super.connectedCallback();
    // Here, not in setup(): setup runs inside the base constructor, before this class's fields exist.
    this.#gestures ??= zoomGestures(this.plot, this.#view, {
      cellSize: () => (this.#layout?.cell ?? 1) * this.#view.zoom,
      origin: () => {
        const r = this.canvas.getBoundingClientRect(), g = this.#layout?.gutter ?? 0;
        return { x: r.left + g, y: r.top + g };
      },
      changed: () => this.#viewChanged(),
    });
  }

  render(result) {
    const { n } = result, nK = result.nK ?? n;
    const theme = this.theme;
    const colorScale = this.colorScale;
    const key = `${this.layer}/${this.head}/${colorScale}`;
    let layers = this.#layers;
    if (layers?.result !== result || layers.key !== key) {
      const weights = this.weights, masks = result.masks;
      const kQ = Math.ceil(n / OVERVIEW), kK = Math.ceil(nK / OVERVIEW);
      const tops = { rows: colorScale === 'row' ? rowTops(weights, n, nK, masks) : null };
      const overview = blockPositions(weights, nK, { i1: n, kQ, kK }, colorScale, masks, tops);
      layers = this.#layers = { result, key, weights, colorScale, overview, kQ, kK, tops: { ...tops, top: overview.top },
        top: colorScale === 'max' ? overview.top : 1, anyMasked: !!(masks.causal || masks.keyMask) };
    }
    if (layers.theme !== theme || !layers.cells) {
      const { positions, masked, rows, cols } = layers.overview;
      layers.theme = theme;
      layers.cells = cellsLayer(positions, rows, theme.scale, masked, cols, this.#pixels.cells);
      layers.mask = maskLayer(masked, rows, cols, this.#pixels.mask);
      const k = Math.ceil(Math.max(rows, cols) / MINIMAP), small = blockPositions(positions, cols, { i1: rows, kQ: k, kK: k });
      layers.minimap = cellsLayer(small.positions, small.rows, theme.scale, null, small.cols, this.#pixels.minimap);
      this.#hatch.stale = true;
      this.#window = null;
    }
    if (this.#viewKey !== `${n}×${nK}`) {  // new table size: start unzoomed
      this.#viewKey = `${n}×${nK}`;
      this.#view.reset();
    }
    this.#drawLegend(theme);
    const self = nK === n && result.keyTokens === result.tokens;
    const shape = self ? `${n} tokens` : `${n} query tokens × ${nK} key tokens`;
    const what = result.layers > 1 || result.heads > 1 || isAggregate(this.layer, this.head)
      ? `, ${selectionLabel(result, this.layer, this.head)}` : '';
    this.plot.setAttribute('aria-label', `Attention weights of ${shape}${what}: rows are queries, columns are keys. ` +
      'Arrow keys move (with Shift, by a window), Enter pins a row, + and − zoom, 0 resets the zoom.');
    if (this.#cursor) this.#cursor = { i: Math.min(this.#cursor.i, n - 1), j: Math.min(this.#cursor.j, nK - 1) };
    this.#drawView();
  }

  // Cells, labels, overlay, pinned row and minimap for the current zoom window.
  #drawView() {
    cancelAnimationFrame(this.#viewFrame);
    this.#viewFrame = 0;
    const result = this.result;
    if (!result || !this.#layers) return;
    const theme = this.theme;
    this.#layout = this.#measure(result, this.body.clientWidth || 600, theme);
    this.#drawCells(theme);
    this.#drawOverlay();
    this.#drawPinned(theme);
    this.#drawZoombar(theme);
  }

  // A gesture or key moved the window: redraw once per frame.
  #viewChanged() {
    this.#viewFrame ||= requestAnimationFrame(() => {
      this.#drawView();
      this.dispatchEvent(new CustomEvent('zoom', { bubbles: true, detail: this.view }));
    });
  }

  /**
   * The zoom window: { zoom, row, col, rows, cols } (first visible row and column, how many are
   * visible; fractional), and maxZoom.
   */
  get view() {
    return { ...this.#view.state, maxZoom: this.#view.maxZoom };
  }

  /** Zooms to `zoom` (1 = the whole table), centred on cell (row, col) when given. Redraws at once. */
  zoomTo(zoom, { row, col } = {}) {
    if (typeof zoom !== 'number' || !Number.isFinite(zoom) || zoom <= 0)
      throw new RangeError(`zoom must be a number > 0 (got ${JSON.stringify(zoom)})`);
    this.#view.zoomTo(zoom);
    if (row !== undefined || col !== undefined)
      this.#view.centreOn(row ?? this.#view.y + this.#view.visibleRows / 2, col ?? this.#view.x + this.#view.visibleCols / 2);
    this.#drawView();
    this.dispatchEvent(new CustomEvent('zoom', { bubbles: true, detail: this.view }));
  }

  /** Multiplies the zoom by `factor` around the keyboard cursor (or the window's centre). */
  zoomBy(factor) {
    const c = this.#cursor, v = this.#view;
    const fx = c ? (c.j + 0.5 - v.x) / v.visibleCols : 0.5, fy = c ? (c.i + 0.5 - v.y) / v.visibleRows : 0.5;
    v.zoomTo(v.zoom * factor, Math.min(1, Math.max(0, fx)), Math.min(1, Math.max(0, fy)));
    if (c) v.reveal(c.i, c.j);
    this.#drawView();
    this.dispatchEvent(new CustomEvent('zoom', { bubbles: true, detail: this.view }));
    this.say(`Zoom ${fmtZoom(v.zoom)}: rows ${Math.floor(v.y) + 1}–${Math.ceil(v.y + v.visibleRows)}, ` +
      `columns ${Math.floor(v.x) + 1}–${Math.ceil(v.x + v.visibleCols)}`);
  }

  /** Back to the whole table. */
  resetZoom() {
    this.zoomTo(1);
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

  /**
   * Where cell (query i, key j) is, in CSS pixels relative to the element's top-left corner, at
   * the current zoom (outside the plot when the window does not show it).
   */
  cellBox(i, j) {
    const l = this.#layout;
    if (!l) return null;
    const a = this.canvas.getBoundingClientRect(), b = this.getBoundingClientRect();
    const v = this.#view, s = l.cell * v.zoom;
    return { x: a.left - b.left + l.gutter + (j - v.x) * s, y: a.top - b.top + l.gutter + (i - v.y) * s, width: s, height: s };
  }

  /**
   * The canvas layout at zoom 1 (CSS pixels within the cells canvas): { gutter, cell, plot
   * (= plotWidth), plotWidth, plotHeight, labels, n (= nQ), nQ, nK }; `view` has the zoom.
   */
  get layout() {
    return this.#layout && { ...this.#layout };
  }

  // ——— drawing ———

  // Square cells: the columns fill the width; a tall table (nQ ≫ nK) is also kept within
  // max(width, 640) pixels of height. The label gutter is always there (a table too fine to label
  // can be zoomed until it is, and the plot must not move under the pointer when labels appear);
  // labels are drawn once the cells, at the current zoom, are big enough to read them.
  #measure(result, width, theme) {
    const nQ = result.n, nK = result.nK ?? nQ, zoom = this.#view.zoom;
    const gutter = Math.round(Math.min(Math.max(this.#longestLabel(result, theme) + 10, 24), 110, width * 0.3));
    let cell = Math.min(MAX_CELL, (width - gutter - 2) / nK, (Math.max(width, 640) - gutter - 2) / nQ);
    if (cell >= 4) cell = Math.floor(cell);
    const labels = cell * zoom >= LABEL_CELL;
    const maxZoom = cell * 2 <= ZOOM_CELL ? ZOOM_CELL / cell : 1;  // small tables are already readable
    this.#view.resize(nQ, nK, maxZoom);
    return { gutter, cell, plot: cell * nK, plotWidth: cell * nK, plotHeight: cell * nQ, labels, n: nQ, nQ, nK };
  }

  #longestLabel(result, theme) {
    const keys = result.keyTokens ?? result.tokens;
    const m = this.#labelWidth;
    if (m?.tokens === result.tokens && m.keys === keys && m.font === theme.fontFamily) return m.width;
    const ctx = this.canvas.getContext('2d');
    ctx.font = `${FONT}px ${theme.fontFamily}`;
    let width = 0;
    for (const list of keys === result.tokens ? [keys] : [result.tokens, keys])
      for (const t of list) width = Math.max(width, ctx.measureText(clip(t, 16)).width);
    this.#labelWidth = { tokens: result.tokens, keys, font: theme.fontFamily, width };
    return width;
  }

  #drawCells(theme) {
    const { gutter, plotWidth, plotHeight, labels, nQ, nK, cell } = this.#layout;
    const v = this.#view, s = cell * v.zoom;
    const width = gutter + plotWidth, height = gutter + plotHeight;
    const ratio = globalThis.devicePixelRatio || 1;
    const ctx = sizeCanvas(this.canvas, width, height, ratio);
    sizeCanvas(this.overlay, width, height, ratio);
    ctx.fillStyle = css(theme.bg);
    ctx.fillRect(0, 0, width, height);
    const { cells, mask, source } = this.#visibleImage(nQ, nK);
    drawMatrix(ctx, { cells, mask, x: gutter, y: gutter, width: plotWidth, height: plotHeight, source, theme, ratio, cache: this.#hatch });
    if (labels) {
      const { tokens } = this.result, keys = this.result.keyTokens ?? tokens;
      ctx.fillStyle = css(theme.fg);
      ctx.font = `${Math.min(FONT, Math.floor(s))}px ${theme.fontFamily}`;  // 8 px rows: 8 px text
      ctx.textBaseline = 'middle';
      const visible = (first, count, total) => [Math.max(0, Math.floor(first)), Math.min(total, Math.ceil(first + count))];
      const [i0, i1] = visible(v.y, v.visibleRows, nQ), [j0, j1] = visible(v.x, v.visibleCols, nK);
      ctx.textAlign = 'right';
      for (let i = i0; i < i1; i++) ctx.fillText(clip(tokens[i], 16), gutter - 5, gutter + (i - v.y) * s + s / 2, gutter - 7);
      for (let j = j0; j < j1; j++) {
        const c = gutter + (j - v.x) * s + s / 2;
        ctx.save();
        ctx.translate(c, gutter - 5);
        ctx.rotate(-Math.PI / 2);
        ctx.textAlign = 'left';
        ctx.fillText(clip(keys[j], 16), 0, 0, gutter - 7);
        ctx.restore();
      }
    }
    this.renderStats.cells++;
  }

  // The overview's blocks, or zoomed into a table of blocks, its visible cells one by one, with a
  // margin of an eighth of the window per side, so that small pans reuse the image.
  #visibleImage(nQ, nK) {
    const v = this.#view, l = this.#layers, { kQ, kK } = l;
    if ((kQ > 1 || kK > 1) && v.visibleRows * v.visibleCols <= WINDOW_CELLS) {
      let w = this.#window;
      const fits = w?.layers === l && v.y >= w.i0 && v.y + v.visibleRows <= w.i1 && v.x >= w.j0 && v.x + v.visibleCols <= w.j1
        && (w.i1 - w.i0) * (w.j1 - w.j0) <= 2 * v.visibleRows * v.visibleCols;  // not one of a lower zoom
      if (!fits) {
        const mr = Math.ceil(v.visibleRows / 8), mc = Math.ceil(v.visibleCols / 8);
        const i0 = Math.max(0, Math.floor(v.y) - mr), i1 = Math.min(nQ, Math.ceil(v.y + v.visibleRows) + mr);
        const j0 = Math.max(0, Math.floor(v.x) - mc), j1 = Math.min(nK, Math.ceil(v.x + v.visibleCols) + mc);
        const b = blockPositions(l.weights, nK, { i0, i1, j0, j1 }, l.colorScale, this.result.masks, l.tops);
        const theme = this.theme;
        w = this.#window = { layers: l, i0, i1, j0, j1,
          cells: cellsLayer(b.positions, b.rows, theme.scale, b.masked, b.cols, this.#pixels.windowCells),
          mask: maskLayer(b.masked, b.rows, b.cols, this.#pixels.windowMask) };
        this.#hatch.stale = true;
      }
      return { cells: w.cells, mask: w.mask, source: { x: v.x - w.j0, y: v.y - w.i0, width: v.visibleCols, height: v.visibleRows } };
    }
    return { cells: l.cells, mask: l.mask, source: { x: v.x / kK, y: v.y / kQ, width: v.visibleCols / kK, height: v.visibleRows / kQ } };
  }

  // The zoom buttons, and when zoomed the minimap: the whole table with the window outlined.
  #drawZoombar(theme) {
    const v = this.#view;
    this.zoomControls.hidden = !v.zoomable;
    this.zoomInButton.disabled = v.zoom >= v.maxZoom;
    this.zoomOutButton.disabled = this.zoomResetButton.disabled = !v.zoomed;
    this.plot.classList.toggle('zoomable', v.zoomable);
    this.plot.classList.toggle('zoomed', v.zoomed);
    this.zoombar.hidden = this.minimap.hidden = !v.zoomed;
    if (!v.zoomed) return;
    const { nQ, nK } = this.#layout;
    const scale = MINIMAP / Math.max(nQ, nK);
    const w = Math.max(8, nK * scale), hgt = Math.max(8, nQ * scale);
    drawMatrix(sizeCanvas(this.minimapImage, w, hgt), { cells: this.#layers.minimap, x: 0, y: 0, width: w, height: hgt, theme });
    const sx = w / nK, sy = hgt / nQ, box = this.viewport.style;
    box.left = `${v.x * sx}px`;
    box.top = `${v.y * sy}px`;
    box.width = `${v.visibleCols * sx}px`;
    box.height = `${v.visibleRows * sy}px`;
    this.zoomText.textContent = `Zoom ${fmtZoom(v.zoom)} · rows ${Math.floor(v.y) + 1}–${Math.ceil(v.y + v.visibleRows)}, ` +
      `columns ${Math.floor(v.x) + 1}–${Math.ceil(v.x + v.visibleCols)} of ${nQ}×${nK}`;
  }

  #drawLegend(theme) {
    const masked = this.#layers.anyMasked;
    const { colorScale, top } = this.#layers;
    if (colorScale === 'linear') {
      if (this.scaleLegend.firstChild !== this.linearLegend[0]) this.scaleLegend.replaceChildren(...this.linearLegend);
    } else drawScaleLegend(this.scaleLegend, theme, colorScale, top);
    if (this.#legendKey !== theme) {  // the ramp and swatch change with the theme only
      this.#legendKey = theme;
      const ramp = this.ramp.getContext('2d');
      for (let x = 0; x < 120; x++) {
        ramp.fillStyle = theme.scale.css(x / 119);
        ramp.fillRect(x, 0, 1, 10);
      }
      const swatch = this.swatch.getContext('2d');
      swatch.fillStyle = hatch(swatch, theme);
      swatch.fillRect(0, 0, 10, 10);
    }
    this.swatch.hidden = !masked;
    this.swatchLabel.hidden = !masked;
    const aggregate = isAggregate(this.layer, this.head);
    this.legendNote.hidden = !aggregate;
    this.legendNote.textContent = aggregate
      ? `${selectionLabel(this.result, this.layer, this.head)}: ${rowSumNote(this.layer, this.head)}` : '';
  }

  #drawOverlay() {
    cancelAnimationFrame(this.#frame);
    this.#frame = 0;
    const l = this.#layout;
    if (!l) return;
    const ctx = this.overlay.getContext('2d');
    const ratio = this.overlay.width / (l.gutter + l.plotWidth);
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, l.gutter + l.plotWidth, l.gutter + l.plotHeight);
    const theme = this.theme;
    const v = this.#view, cell = l.cell * v.zoom, g = l.gutter, plot = l.plotWidth, tall = l.plotHeight;
    const top = (i) => g + (i - v.y) * cell, left = (j) => g + (j - v.x) * cell;
    ctx.save();
    ctx.beginPath();  // under zoom, marks outside the window stay off the labels
    ctx.rect(0, g - 6, g + plot, tall + 12);
    ctx.rect(g - 6, 0, plot + 12, g);
    ctx.clip();
    const q = this.query;
    if (q >= 0) {  // the pinned row: a band across the plot and a marker in the gutter
      ctx.strokeStyle = css(theme.accent);
      ctx.lineWidth = 2;
      ctx.strokeRect(g - 1, top(q) - 1, plot + 2, cell + 2);
      ctx.fillStyle = css(theme.accent);
      ctx.fillRect(Math.max(0, g - 4), top(q), 3, Math.max(cell, 2));
    }
    const c = this.#cursor;
    if (c) {
      drawCrosshair(ctx, { x: left(0), y: top(0), cell, rows: l.nQ ?? l.n, cols: l.nK ?? l.n, i: c.i, j: c.j, theme,
        window: { x: g, y: g, width: plot, height: tall } });
    }
    ctx.restore();
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
    const { tokens } = this.result, keys = this.result.keyTokens ?? tokens;
    const value = this.#layers.weights[c.i * (this.result.nK ?? this.result.n) + c.j];
    const masked = this.isMasked(c.i, c.j);
    this.readout.replaceChildren(
      h('span', { class: 'tok' }, quote(tokens[c.i])), ' → ', h('span', { class: 'tok' }, quote(keys[c.j])), ': ',
      h('span', { class: 'value num' }, masked ? 'masked (0)' : String(value)),
      ` · row ${c.i + 1}, column ${c.j + 1}`);
  }

  #row(i) {
    const n = this.result.nK ?? this.result.n;
    return this.#layers.weights.subarray(i * n, (i + 1) * n);
  }

  #drawPinned(theme) {
    const q = this.query, l = this.#layout;
    this.pinned.hidden = q < 0 || !l;
    if (this.pinned.hidden) return;
    const row = this.#row(q);
    const masked = (j) => this.isMasked(q, j);
    this.pinTitle.replaceChildren('Pinned row as bars: ', describeRow(this.tokens, q, row, masked, this.result.keyTokens));
    const width = l.gutter + l.plotWidth;
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
    const v = this.#view, cell = l.cell * v.zoom;  // the columns of the zoom window, under the plot
    const w = cell > 4 ? cell - 1 : Math.max(cell, 1);
    const j0 = Math.max(0, Math.floor(v.x)), j1 = Math.min(row.length, Math.ceil(v.x + v.visibleCols));
    ctx.save();
    ctx.beginPath();
    ctx.rect(l.gutter, 0, l.plotWidth, CHART);
    ctx.clip();
    for (let j = j0; j < j1; j++) {
      const x = l.gutter + (j - v.x) * cell;
      if (masked(j)) {
        ctx.fillStyle = pattern;
        ctx.fillRect(x, top, w, span);
      } else {
        ctx.fillStyle = css(theme.accent);
        const hgt = row[j] * span;
        ctx.fillRect(x, base - hgt, w, hgt);
      }
    }
    ctx.restore();
    ctx.fillStyle = css(theme.line);
    ctx.fillRect(l.gutter, base, l.plot, 1);
  }

  // ——— interaction ———

  #cellAt(event) {
    const l = this.#layout;
    if (!l) return null;
    const rect = this.canvas.getBoundingClientRect();
    const x = event.clientX - rect.left - l.gutter, y = event.clientY - rect.top - l.gutter;
    if (y < 0 || y >= l.plotHeight || x >= l.plotWidth) return null;
    const v = this.#view, s = l.cell * v.zoom;
    const i = Math.floor(v.y + y / s), j = Math.floor(v.x + x / s);
    if (i < 0 || i >= l.nQ) return null;
    if (j >= l.nK) return null;
    return { i, j: x < 0 ? Math.max(0, Math.floor(v.x)) : Math.max(j, 0), label: x < 0 };
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
    const n = this.result.n, nK = this.result.nK ?? n, c = this.#cursor ?? { i: Math.max(0, this.query), j: 0 };
    let { i, j } = c;
    const k = event.key;
    if ((k === '+' || k === '=' || k === '-' || k === '_' || k === '0') && !event.ctrlKey && !event.metaKey && !event.altKey) {
      if (!this.#view.zoomable) return;
      event.preventDefault();
      if (!this.#cursor) this.#moveCursor(c);
      if (k === '0') this.resetZoom();
      else this.zoomBy(k === '-' || k === '_' ? 0.5 : 2);
      return;
    }
    // Shift+arrows move by a window: across 8192 tokens one cell is no pan.
    const rows = event.shiftKey ? Math.max(1, Math.floor(this.#view.visibleRows)) : 1;
    const cols = event.shiftKey ? Math.max(1, Math.floor(this.#view.visibleCols)) : 1;
    if (k === 'ArrowUp') i -= rows;
    else if (k === 'ArrowDown') i += rows;
    else if (k === 'ArrowLeft') j -= cols;
    else if (k === 'ArrowRight') j += cols;
    else if (k === 'PageUp') i -= 10;
    else if (k === 'PageDown') i += 10;
    else if (k === 'Home') { j = 0; if (event.ctrlKey || event.metaKey) i = 0; }
    else if (k === 'End') { j = nK - 1; if (event.ctrlKey || event.metaKey) i = n - 1; }
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
    j = Math.max(0, Math.min(nK - 1, j));
    this.#moveCursor({ i, j });
    if (this.#view.zoomed) {  // the window follows the cursor
      const { x, y } = this.#view;
      this.#view.reveal(i, j);
      if (x !== this.#view.x || y !== this.#view.y) this.#viewChanged();
    }
    const { tokens } = this.result, keys = this.result.keyTokens ?? tokens;
    const value = this.isMasked(i, j) ? 'masked' : fmt(this.#layers.weights[i * nK + j], 4);
    if (this.query >= 0 && i !== this.query) this.setState('query', i);  // a pinned row follows the cursor
    this.say(`Row ${quote(tokens[i])}, column ${quote(keys[j])}: ${value}`);
  }

  // ——— export ———

  svg(result, theme, options) {
    return heatmapSVG(result, theme, { layer: this.layer, head: this.head, query: this.query, weights: this.weights,
      'color-scale': this.colorScale }, options);
  }
}

const fmtZoom = (z) => `${z < 10 ? z.toFixed(1) : Math.round(z)}×`;

if (globalThis.customElements && !customElements.get('attn-heatmap')) customElements.define('attn-heatmap', AttnHeatmap);
