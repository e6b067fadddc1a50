// <attn-heads>: a grid of small heatmaps, one per head (a row per layer). Choosing one (click,
// tap, or arrow keys + Enter) opens it in the linked heatmap below (which pins rows as bars),
// and in the element named by the `target` attribute, if any.
import { AttnHeatmap } from './attn-heatmap.js';
import { headPattern, isActivation, navigate } from './lib/a11y.js';
import { AttnElement } from './lib/base.js';
import { headMatrix, isAggregate } from './lib/compute.js';
import { selectionLabel } from './lib/selection.js';
import { h, sizeCanvas } from './lib/dom.js';
import { MatrixLayers, drawMatrix } from './lib/matrix-canvas.js';
import { headsSVG } from './svg/heads.js';

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
.detail { margin-top: 6px; border-top: 1px solid var(--attn-line); padding-top: 6px; }
.detail-title { font-weight: 600; }
attn-heatmap { --attn-padding: 0; }
attn-heatmap::part(toolbar) { display: none; }
`;

export class AttnHeads extends AttnElement {
  static styles = [STYLE];
  static pickers = false;

  #thumbs = null;
  #canvases = new MatrixLayers();  // one pixel canvas refilled for every thumbnail
  #focus = null;  // { layer, head } with the keyboard's tab stop

  setup(body) {
    this.grid = h('div', { class: 'grid', role: 'grid', 'aria-label': 'Attention heads: arrow keys move, Enter opens one' });
    this.detailTitle = h('div', { class: 'detail-title' });
    this.detail = new AttnHeatmap();
    this.detail.setAttribute('exportparts', 'plot');
    this.detail.addEventListener('change', (e) => {
      if (e.detail.name === 'query') this.setState('query', e.detail.value);
    });
    this.detail.addEventListener('error', (e) => e.stopPropagation());
    body.append(this.grid, h('div', { class: 'detail', part: 'detail' }, this.detailTitle, this.detail));
    this.grid.addEventListener('click', (e) => {
      const cell = e.target.closest('[role="gridcell"]');
      if (cell) this.#open(Number(cell.dataset.layer), Number(cell.dataset.head));
    });
    this.grid.addEventListener('keydown', (e) => this.#key(e));
  }

  static defaults = { query: -1 };

  /** The heatmap that shows the chosen head. */
  get heatmap() {
    return this.detail;
  }

  render(result) {
    const { n, layers, heads } = result, nK = result.nK ?? n;
    const theme = this.theme;
    const width = this.body.clientWidth || 600;
    const size = Math.max(36, Math.min(96, Math.floor((width - 70 - heads * 14) / heads)));
    const key = `${size}`;
    if (this.#thumbs?.result !== result || this.#thumbs.theme !== theme || this.#thumbs.key !== key) {
      const { masked, layer: mask } = this.#canvases.masks(result.masks, n, nK);
      const box = thumbBox(n, nK, size);
      this.grid.replaceChildren(...Array.from({ length: layers }, (_, l) => h('div', { class: 'layer', role: 'row' },
        h('span', { class: 'layer-label', role: 'rowheader' }, `Layer ${l + 1}`),
        Array.from({ length: heads }, (_, hd) => {
          const weights = headMatrix(result, l, hd);
          const canvas = h('canvas', { 'aria-hidden': 'true' });
          const ctx = sizeCanvas(canvas, size, size);
          drawMatrix(ctx, { cells: this.#canvases.cells(weights, n, theme.scale, masked, nK), mask, ...box, theme,
            ratio: globalThis.devicePixelRatio || 1, cache: this.#canvases.hatch });
          return h('div', {
            class: 'thumb', role: 'gridcell', 'data-layer': l, 'data-head': hd,
            'aria-label': `Layer ${l + 1}, head ${hd + 1}: ${nK === n ? headPattern(weights, n) : `${n} queries × ${nK} keys`}`,
          }, canvas, h('span', {}, `H${hd + 1}`));
        }))));
      this.#thumbs = { result, theme, key };
    }
    this.#select();
    this.#openDetail(result);
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

  #select() {
    const f = this.#focus ?? (isAggregate(this.layer, this.head) ? { layer: 0, head: 0 } : { layer: this.layer, head: this.head });
    for (const cell of this.#cells()) {
      const l = Number(cell.dataset.layer), hd = Number(cell.dataset.head);
      cell.setAttribute('aria-selected', String(!isAggregate(this.layer, this.head) && l === this.layer && hd === this.head));
      cell.tabIndex = l === f.layer && hd === f.head ? 0 : -1;
    }
  }

  #openDetail(result) {
    const { tokens } = result, keys = result.keyTokens ?? tokens;
    const label = selectionLabel(result, this.layer, this.head);
    this.detailTitle.textContent = label[0].toUpperCase() + label.slice(1);
    const matrix = this.weights;  // one head, or the engine's mean/max/rollout
    if (this.detail.shownMatrix !== matrix) {
      this.detail.shownMatrix = matrix;
      this.detail.mask = this.mask;  // draws the same masks (the weights already have them)
      const names = keys === tokens ? { tokens } : { queryTokens: tokens, keyTokens: keys };
      this.detail.data = { ...names, attention: matrix, keyMask: result.masks.keyMask ?? undefined };
    }
    this.detail.query = this.query;
  }

  #open(layer, head) {
    this.#focus = { layer, head };
    this.setState('layer', layer);
    this.setState('head', head);
    this.#select();
    const target = this.getAttribute('target');
    const linked = target && this.getRootNode().getElementById?.(target);
    if (linked) {
      linked.layer = layer;
      linked.head = head;
    }
    this.say(`Opened layer ${layer + 1}, head ${head + 1}.`);
  }

  #key(event) {
    const { layers, heads } = this.result ?? {};
    if (!layers) return;
    const f = this.#focus ?? (isAggregate(this.layer, this.head) ? { layer: 0, head: 0 } : { layer: this.layer, head: this.head });
    if (isActivation(event)) {
      event.preventDefault();
      this.#open(f.layer, f.head);
      return;
    }
    const to = navigate(event.key, f.layer * heads + f.head, layers * heads, { columns: heads, page: 1 });
    if (to === null) return;
    event.preventDefault();
    this.#focus = { layer: Math.floor(to / heads), head: to % heads };
    this.#select();
    this.#cells()[to].focus();
  }

  svg(result, theme, options) {
    return headsSVG(result, theme, { layer: this.layer, head: this.head }, options);
  }
}

// Where an nQ×nK thumbnail sits in a size×size square: the longer side fills it.
function thumbBox(nQ, nK, size) {
  const width = nK >= nQ ? size : size * nK / nQ, height = nQ >= nK ? size : size * nQ / nK;
  return { x: (size - width) / 2, y: (size - height) / 2, width, height };
}

if (globalThis.customElements && !customElements.get('attn-heads')) customElements.define('attn-heads', AttnHeads);
