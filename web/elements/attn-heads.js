// <attn-heads>: a grid of small heatmaps, one per head (a row per layer). Choosing one (click,
// tap, or arrow keys + Enter) opens it in the linked heatmap below (which pins rows as bars),
// and in the element named by the `target` attribute, if any.
import { AttnHeatmap } from './attn-heatmap.js';
import { headPattern, isActivation, navigate } from './lib/a11y.js';
import { AttnElement, loadEngine } from './lib/base.js';
import { colorPositions } from './lib/color-scale.js';
import { computeWeights, isAggregate, selectedMatrix } from './lib/compute.js';
import { rowSumNote, selectionLabel } from './lib/selection.js';
import { HEAD_AGGREGATES } from './lib/state.js';
import { h, sizeCanvas } from './lib/dom.js';
import { MatrixLayers, drawMatrix } from './lib/matrix-canvas.js';
import { eagerRollout, headsSVG } from './svg/heads.js';

const STYLE = `
.grid { overflow-x: auto; padding: 3px; }
.layer { display: flex; gap: 6px; align-items: center; margin-bottom: 6px; width: max-content; }
.layer-label { width: 4.5em; flex: none; color: var(--attn-muted); }
.thumb {
  display: flex; flex-direction: column; align-items: center; gap: 2px; padding: 3px;
  border: 2px solid transparent; border-radius: 4px; cursor: pointer; color: var(--attn-muted); font-size: 11px;
}
.thumb:hover { border-color: var(--attn-line); }
.thumb[aria-selected="true"] { border-color: var(--attn-accent); color: var(--attn-fg); font-weight: 600; }
.thumb canvas { display: block; border: 1px solid var(--attn-line); }
.thumb.aggregate { font-style: italic; }
.thumb.aggregate canvas { border-style: dashed; }
.detail { margin-top: 6px; border-top: 1px solid var(--attn-line); padding-top: 6px; }
.detail-title { font-weight: 600; }
attn-heatmap { --attn-padding: 0; }
@media (forced-colors: active) {
  .thumb { forced-color-adjust: none; color: CanvasText; border-color: Canvas; }
  .thumb[aria-selected="true"] { border-color: Highlight; }
}
attn-heatmap::part(toolbar) { display: none; }
`;

export class AttnHeads extends AttnElement {
  static styles = [STYLE];
  static pickers = false;

  #thumbs = null;  // what the tiles show: { result, theme, key }
  #tiles = null;   // the tiles' elements: { shape, list: [{ cell, canvas, layer, head, visible }] }
  #canvases = new MatrixLayers();  // one pixel canvas refilled for every thumbnail
  #focus = null;  // { layer, head } with the keyboard's tab stop
  #engine = null; // for the mean/max/rollout tiles of precomputed weights

  setup(body) {
    this.grid = h('div', { class: 'grid', role: 'grid', 'aria-label': 'Attention heads: arrow keys move, Enter opens one' });
    this.detailTitle = h('div', { class: 'detail-title' });
    this.detail = new AttnHeatmap();
    // The detail draws weights this grid already computed (masked, hidden, aggregated) as they
    // are, with the grid's masks: re-weighting them for a mask would renormalise max rows and
    // rows left after hiding.
    this.detail.compute = (lens, data, state) => {
      const shown = computeWeights(lens, data, { ...state, mask: 'none', temperature: 1 });
      return { ...shown, masks: this.result?.masks ?? shown.masks };
    };
    this.detail.setAttribute('exportparts', 'plot');
    this.detail.addEventListener('change', (e) => {
      if (e.detail.name === 'query') this.setState('query', e.detail.value);
    });
    this.detail.addEventListener('error', (e) => e.stopPropagation());
    body.append(this.grid, h('div', { class: 'detail', part: 'detail' }, this.detailTitle, this.detail));
    this.grid.addEventListener('click', (e) => {
      const cell = e.target.closest('[role="gridcell"]');
      if (cell) this.#open(parseCell(cell.dataset.layer), parseCell(cell.dataset.head));
    });
    this.grid.addEventListener('keydown', (e) => this.#key(e));
  }

  static defaults = { query: -1 };

  /** The heatmap that shows the chosen head. */
  get heatmap() {
    return this.detail;
  }

  render(result) {
    const { n, heads } = result, nK = result.nK ?? n;
    const theme = this.theme;
    const width = this.body.clientWidth || 600;
    const { heads: named, rollout } = this.#aggregates(result);
    const extra = named.length;
    const smallest = width < 480 ? 24 : 36;  // a phone fits a layer of 4 heads with Mean and Max
    const size = Math.max(smallest, Math.min(96, Math.floor((width - 84 - (heads + extra) * 16) / (heads + extra))));
    const engine = this.lens ?? this.#engine;
    // The rollout costs 2·n³ per layer: drawn up front only when cheap, else once opened.
    const rolled = rollout && (eagerRollout(result) || this.layer === 'rollout') ? selectedMatrix(engine, result, 'rollout', 0) : null;
    const colorScale = this.colorScale;
    const key = `${size}|${rolled ? 1 : 0}|${colorScale}`;
    if (this.#thumbs?.result !== result || this.#thumbs.theme !== theme || this.#thumbs.key !== key) {
      const { masked, layer: mask } = this.#canvases.masks(result.masks, n, nK);
      const box = thumbBox(n, nK, size);
      const ratio = globalThis.devicePixelRatio || 1;
      for (const { cell, canvas, layer, head, visible } of this.#tileList(result, named, rollout, size)) {
        const weights = layer === 'rollout' ? rolled : selectedMatrix(engine, result, layer, head);
        const ctx = sizeCanvas(canvas, size, size, ratio);
        clear(ctx);  // a kept canvas: the last picture goes, as if new
        if (weights) drawMatrix(ctx, { cells: this.#canvases.cells(colorPositions(colorScale, weights, n, nK, masked), n, theme.scale, masked, nK), mask, ...box, theme,
          ratio, cache: this.#canvases.hatch });
        const one = typeof head === 'number' && typeof layer === 'number';  // one head, not an aggregate
        const name = one ? `layer ${layer + 1}, head ${head + 1}` : layer === 'rollout' ? selectionLabel(result, 'rollout') : selectionLabel(result, layer, head);
        const text = one ? null : layer === 'rollout' ? rowSumNote('rollout') : rowSumNote(layer, head);
        // The accessible name starts with the visible text (WCAG 2.5.3, label in name).
        const label = `${visible}, ${name}: ${!weights ? 'computed when opened' : nK === n && head !== 'max' ? headPattern(weights, n) : `${n} queries × ${nK} keys`}`;
        cell.setAttribute('aria-label', text ? `${label}; ${text}` : label);
      }
      this.#thumbs = { result, theme, key };
    }
    this.#select();
    this.#openDetail(result);
  }

  // The tiles' elements, made again only when the grid's shape changes (layers, heads, the
  // aggregate tiles, the tile size): a new text keeps them (and the keyboard focus), so a redraw
  // repaints 169 canvases of GPT-2 small instead of building them (their first context alone
  // took ~30 ms of a ~50 ms redraw). A row per layer: its heads, then its mean and max; the
  // rollout alone in the last row.
  #tileList(result, named, rollout, size) {
    const shape = `${result.layers}|${result.heads}|${named.join(',')}|${rollout}|${size}`;
    if (this.#tiles?.shape === shape) return this.#tiles.list;
    const list = [];
    const tile = (layer, head) => {
      const visible = typeof layer === 'string' ? 'Rollout' : typeof head === 'string' ? cap(head) : `H${head + 1}`;
      const canvas = h('canvas', { 'aria-hidden': 'true' });
      const cell = h('div', {
        class: typeof head === 'number' && typeof layer === 'number' ? 'thumb' : 'thumb aggregate',
        role: 'gridcell', 'data-layer': layer, 'data-head': head,
      }, canvas, h('span', {}, visible));
      list.push({ cell, canvas, layer, head, visible });
      return cell;
    };
    const rows = Array.from({ length: result.layers }, (_, l) => h('div', { class: 'layer', role: 'row' },
      h('span', { class: 'layer-label', role: 'rowheader' }, `Layer ${l + 1}`),
      Array.from({ length: result.heads }, (_, hd) => tile(l, hd)),
      named.map((mode) => tile(l, mode))));
    if (rollout) rows.push(h('div', { class: 'layer', role: 'row' },
      h('span', { class: 'layer-label', role: 'rowheader' }, 'All layers'), tile('rollout', 'mean')));
    this.grid.replaceChildren(...rows);
    this.#tiles = { shape, list };
    return list;
  }

  // The aggregate tiles this result gets: mean and max per layer (several heads), the rollout
  // (several layers of self-attention).
  #aggregates(result) {
    const nK = result.nK ?? result.n;
    return { heads: result.heads > 1 ? HEAD_AGGREGATES : [], rollout: result.layers > 1 && nK === result.n };
  }

  // Precomputed weights need the engine for the mean/max/rollout tiles: loaded with the data.
  async checkData(raw) {
    const data = await super.checkData(raw);
    this.#engine ??= await loadEngine();
    return data;
  }

  stateChanged(name) {
    if (name === 'query') {
      this.detail.query = this.query;
      return false;
    }
    return true;
  }

  #cells() {
    return [...this.grid.querySelectorAll('[role="gridcell"]')];
  }

  // The grid as rows of cells (the rollout row has one), for the arrow keys.
  #rows() {
    return [...this.grid.querySelectorAll('[role="row"]')].map((row) => [...row.querySelectorAll('[role="gridcell"]')]);
  }

  // Which tile shows the current layer/head ('rollout' is one tile whatever the head).
  #isCurrent(cell) {
    const l = parseCell(cell.dataset.layer), hd = parseCell(cell.dataset.head);
    return l === 'rollout' ? this.layer === 'rollout' : l === this.layer && hd === this.head;
  }

  #select() {
    const cells = this.#cells();
    const f = this.#focus && cells.find((c) => c.dataset.layer === String(this.#focus.layer) && c.dataset.head === String(this.#focus.head));
    const stop = f ?? cells.find((c) => this.#isCurrent(c)) ?? cells[0];
    for (const cell of cells) {
      cell.setAttribute('aria-selected', String(this.#isCurrent(cell)));
      cell.tabIndex = cell === stop ? 0 : -1;
    }
  }

  #openDetail(result) {
    const { tokens } = result, keys = result.keyTokens ?? tokens;
    const label = selectionLabel(result, this.layer, this.head);
    this.detailTitle.textContent = isAggregate(this.layer, this.head) ? `${cap(label)} (${rowSumNote(this.layer, this.head)})` : cap(label);
    const matrix = this.weights;  // one head, or the engine's mean/max/rollout
    if (this.detail.shownMatrix !== matrix) {
      this.detail.shownMatrix = matrix;
      this.detail.mask = this.mask;  // draws the same masks (the weights already have them)
      const names = keys === tokens ? { tokens } : { queryTokens: tokens, keyTokens: keys };
      this.detail.data = { ...names, attention: matrix, keyMask: result.masks.keyMask ?? undefined };
    }
    this.detail.query = this.query;
    this.detail.colorScale = this.colorScale;  // the opened head is coloured as its tile
  }

  #open(layer, head) {
    this.#focus = { layer, head };
    this.setState('layer', layer);
    if (layer !== 'rollout') this.setState('head', head);
    this.#select();
    const target = this.getAttribute('target');
    const linked = target && this.getRootNode().getElementById?.(target);
    if (linked && (!isAggregate(layer, head) || linked.constructor.aggregates !== false)) {
      linked.layer = layer;
      if (layer !== 'rollout') linked.head = head;
    }
    this.say(`Opened ${selectionLabel(this.result, layer, head)}.`);
  }

  #key(event) {
    const rows = this.#rows();
    if (rows.length === 0) return;
    const current = event.target.closest?.('[role="gridcell"]') ?? this.#cells().find((c) => c.tabIndex === 0);
    let r = Math.max(0, rows.findIndex((row) => row.includes(current)));
    let c = Math.max(0, rows[r].indexOf(current));
    if (isActivation(event)) {
      event.preventDefault();
      this.#open(parseCell(rows[r][c].dataset.layer), parseCell(rows[r][c].dataset.head));
      return;
    }
    const last = rows.length - 1;
    switch (event.key) {
      case 'ArrowRight': c++; break;
      case 'ArrowLeft': c--; break;
      case 'ArrowDown': r = Math.min(last, r + 1); break;
      case 'ArrowUp': r = Math.max(0, r - 1); break;
      case 'Home': c = 0; if (event.ctrlKey) r = 0; break;
      case 'End': c = Infinity; if (event.ctrlKey) r = last; break;
      case 'PageDown': r = last; break;
      case 'PageUp': r = 0; break;
      default: return;
    }
    event.preventDefault();
    const cell = rows[r][Math.max(0, Math.min(rows[r].length - 1, c))];
    this.#focus = { layer: parseCell(cell.dataset.layer), head: parseCell(cell.dataset.head) };
    this.#select();
    cell.focus();
  }

  svg(result, theme, options) {
    const { heads: named, rollout } = this.#aggregates(result);
    const engine = this.lens ?? this.#engine;
    const aggregate = (layer, head) => ((layer === 'rollout' ? rollout && (eagerRollout(result) || this.layer === 'rollout') : named.includes(head)) && engine
      ? selectedMatrix(engine, result, layer, head) : null);
    return headsSVG(result, theme, { layer: this.layer, head: this.head, aggregate, 'color-scale': this.colorScale }, options);
  }
}

// A tile's data-layer / data-head: an index, or 'mean' / 'max' / 'rollout'.
const parseCell = (value) => (/^\d+$/.test(value) ? Number(value) : value);
const cap = (text) => text[0].toUpperCase() + text.slice(1);

// Clears a kept canvas whole (in device pixels, whatever the transform).
function clear(ctx) {
  ctx.save();
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, ctx.canvas.width, ctx.canvas.height);
  ctx.restore();
}

// Where an nQ×nK thumbnail sits in a size×size square: the longer side fills it.
function thumbBox(nQ, nK, size) {
  const width = nK >= nQ ? size : size * nK / nQ, height = nQ >= nK ? size : size * nQ / nK;
  return { x: (size - width) / 2, y: (size - height) / 2, width, height };
}

if (globalThis.customElements && !customElements.get('attn-heads')) customElements.define('attn-heads', AttnHeads);
