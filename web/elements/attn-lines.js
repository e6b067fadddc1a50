// <attn-lines>: the two-column "head view". Queries on the left, keys on the right, one line per
// pair whose opacity and width follow the weight, for one head or several at once (one colour
// each). Hovering, tapping or the arrow keys focus a token and show only its lines; a token on
// the right shows who looks at it. Lines under a threshold are skipped and the rest are stroked
// in opacity buckets (one stroke per head and bucket); the picture of every line is drawn once
// into an offscreen layer, so moving the focus redraws only the focused token's lines.
import { isActivation } from './lib/a11y.js';
import { AttnElement } from './lib/base.js';
import { css } from './lib/color.js';
import { selectedMatrix } from './lib/compute.js';
import { h, sizeCanvas } from './lib/dom.js';
import { shapeOf } from './lib/filter.js';
import {
  BUCKETS, DEFAULT_THRESHOLD, bucketAlpha, describeFocus, eachLine, focusWeights, headLayers, headName,
  headsToDraw, hitTest, lineWidth, linesLayout, parseHeadList, rowY, weightNote,
} from './lib/lines-layout.js';
import { STATE } from './lib/state.js';
import { linesSVG } from './svg/lines.js';

const STYLE = `
.plot { position: relative; width: max-content; max-width: 100%; touch-action: manipulation; cursor: pointer; border-radius: 2px; }
.plot canvas { display: block; max-width: 100%; }
.legend { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 6px; margin: 0 0 6px; color: var(--attn-muted); font-size: 12px; }
.legend button, .legend .entry { display: inline-flex; gap: 5px; align-items: center; min-height: 26px; padding: 1px 7px; }
.legend button[aria-pressed="true"] { background: var(--attn-surface); color: var(--attn-fg); border-color: var(--attn-fg); }
.legend button[aria-pressed="false"] { color: var(--attn-muted); border-style: dashed; }  /* not opacity: its text must keep 4.5:1 */
.legend button[aria-pressed="false"] .swatch { background: transparent !important; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; border: 1px solid var(--attn-line); }
.hint { margin-left: 4px; }
.readout { min-height: 1.4em; margin: 4px 0 0; color: var(--attn-muted); overflow-wrap: anywhere; }
.loupe {
  position: absolute; z-index: 1; pointer-events: auto; min-width: 7em; max-width: 45%; padding: 2px 0; font-size: 12px; line-height: 18px;
  background: var(--attn-surface); color: var(--attn-fg); border: 1px solid var(--attn-line); border-radius: 4px;
  box-shadow: 0 2px 6px rgb(0 0 0 / 0.25);
}
.loupe-row { display: flex; gap: 6px; padding: 0 6px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.loupe-row .index { color: var(--attn-muted); font-variant-numeric: tabular-nums; }
.loupe-row .text { overflow: hidden; text-overflow: ellipsis; }
.loupe-row.on { background: var(--attn-accent); color: var(--attn-bg); }
.loupe-row.on .index { color: inherit; }
`;

// Rows thinner than this are too thin to point at: the loupe lists the tokens around the pointer.
const LOUPE_BELOW = 9;
const LOUPE_ROWS = 15, LOUPE_ROW_PX = 18;

const CHARS = 24;  // labels longer than this are cut (and then fitted to the column with …)

export class AttnLines extends AttnElement {
  static styles = [STYLE];
  static defaults = { query: -1 };
  /** `heads` here chooses the heads to draw (not the data's head count, as in other figures). */
  static ownAttributes = ['heads'];

  static get observedAttributes() {
    return [...super.observedAttributes, 'key', 'threshold'];
  }

  #headList = null;      // the `heads` attribute: null, 'all' or indices
  #key = -1;             // focused key (right column), −1: none
  #keyText = null;       // key given as text before the tokens were known
  #threshold = DEFAULT_THRESHOLD;
  #hover = null;         // { side, index } under the pointer
  #loupe = null;         // { side, first, count }: the tokens the loupe lists
  #press = null;         // where the last press was (fractional pixels)
  #layout = null;
  #layers = null;        // { cacheKey, list: [{ head, color, weights }] }
  #all = null;           // { cacheKey, canvas } every line, drawn once
  #labels = null;        // { cacheKey, query: string[], key: string[] } fitted label texts
  #frame = 0;
  #reflecting = false;
  /** Drawing counters and timings (ms) of the last redraws. */
  renderStats = { all: 0, focus: 0, lines: 0, strokes: 0, allMs: 0, paintMs: 0 };

  setup(body) {
    this.legend = h('div', { class: 'legend', part: 'legend' });
    this.canvas = h('canvas', { 'aria-hidden': 'true' });
    this.plot = h('div', {
      class: 'plot', part: 'plot', tabindex: 0, role: 'application', 'aria-roledescription': 'attention lines',
    }, this.canvas);
    this.readout = h('p', { class: 'readout', 'aria-hidden': 'true' });
    // The loupe: for rows too thin to point at, the tokens around the pointer at a readable
    // size; hovering or tapping one of them picks exactly that token (the keyboard needs no loupe).
    this.loupe = h('div', { class: 'loupe', part: 'loupe', 'aria-hidden': 'true', hidden: true });
    this.plot.append(this.loupe);
    body.append(this.legend, this.plot, this.readout);

    this.plot.addEventListener('pointermove', (e) => {
      if (e.pointerType === 'touch' || this.loupe.contains(e.target)) return;
      const hit = this.#hit(e);
      this.#setHover(hit);
      this.#openLoupe(hit, e);
    });
    this.plot.addEventListener('pointerleave', (e) => {
      this.#setHover(null);
      if (e.pointerType !== 'touch') this.#openLoupe(null);  // a lifted finger leaves too: keep it for the next tap
    });
    // A click's coordinates are whole pixels, its press's are not: at 0.3 px rows the press says which row.
    this.plot.addEventListener('pointerdown', (e) => { this.#press = { clientX: e.clientX, clientY: e.clientY }; });
    this.plot.addEventListener('click', (e) => {
      const inLoupe = this.loupe.contains(e.target);
      const row = inLoupe && e.target.closest('.loupe-row');
      if (inLoupe && !row) return;
      const p = this.#press, precise = p && Math.abs(p.clientX - e.clientX) < 1 && Math.abs(p.clientY - e.clientY) < 1 ? p : e;
      this.#press = null;
      const hit = row ? { side: this.#loupe.side, index: Number(row.dataset.index) } : this.#hit(precise);
      if (!hit) return;
      const f = this.focused;
      const same = f && f.side === hit.side && f.index === hit.index;
      this.#focus(same ? null : hit, true);
      if (!row && e.pointerType === 'touch') this.#openLoupe(hit, precise);  // a tap opens it: the next tap picks exactly
      this.#markLoupe();
    });
    this.loupe.addEventListener('pointermove', (e) => {
      const row = e.pointerType !== 'touch' && e.target.closest('.loupe-row');
      if (row) this.#setHover({ side: this.#loupe.side, index: Number(row.dataset.index) });
    });
    this.plot.addEventListener('keydown', (e) => this.#keydown(e));
    this.legend.addEventListener('click', (e) => {
      const button = e.target.closest('button[data-head]');
      if (button) this.#toggleHead(Number(button.dataset.head));
    });
  }

  attributeChangedCallback(name, old, value) {
    if (this.#reflecting || old === value) return;
    try {
      if (name === 'heads') {
        this.#headList = parseHeadList(value);
        this.#repaint();
      } else if (name === 'key') {
        this.#setKey(value === null ? -1 : STATE.query.parse(value), { reflect: false });
      } else if (name === 'threshold') {
        this.#threshold = value === null ? DEFAULT_THRESHOLD : parseThreshold(value);
        this.#repaint();
      } else return super.attributeChangedCallback(name, old, value);
      this.attributeError(name, null);
    } catch (error) {
      this.attributeError(name, error);  // shown above the figure, and fired as `error`
    }
  }

  // ——— state of its own ———

  /** The heads drawn (indices, or the current `head` when no `heads` attribute is given). */
  get selectedHeads() {
    return this.result ? headsToDraw(this.#headList, this.result, this.head, this.layer) : this.#headList === 'all' ? [] : [...(this.#headList ?? [this.head])];
  }
  /** Heads to draw: 'all', a list of indices, or null (the current head). Reflects to `heads`. */
  set selectedHeads(value) {
    if (value === null || value === undefined) this.removeAttribute('heads');
    else this.setAttribute('heads', value === 'all' ? 'all' : parseHeadList(value).join(' '));
  }

  /** The focused key (right column) as an index, −1 when none; set an index or a key's text. */
  get key() { return this.#key; }
  set key(value) { this.#setKey(value === null || value === undefined ? -1 : STATE.query.parse(value)); }

  /** Lines with a smaller weight are not drawn (default 0.01). */
  get threshold() { return this.#threshold; }
  set threshold(value) {
    this.#threshold = parseThreshold(value);
    this.#reflect('threshold', String(this.#threshold));
    this.#repaint();
  }

  /** The focused token: { side: 'query' | 'key', index }, or null (every line is drawn). */
  get focused() {
    if (this.query >= 0) return { side: 'query', index: this.query };
    if (this.#key >= 0) return { side: 'key', index: this.#key };
    return null;
  }

  /** The canvas layout in CSS pixels (rows, columns, where lines start and end). */
  get layout() {
    return this.#layout && { ...this.#layout };
  }

  #reflect(name, text) {
    this.#reflecting = true;
    if (text === null) this.removeAttribute(name);
    else this.setAttribute(name, text);
    this.#reflecting = false;
  }

  #setKey(value, { user = false, reflect = true } = {}) {
    if (typeof value === 'string') {
      if (!this.result) { this.#keyText = value; return; }
      const found = shapeOf(this.result).keyTokens.findIndex((t) => t.trim() === value.trim());
      value = found;
    }
    this.#keyText = null;
    if (this.result) value = Math.min(value, shapeOf(this.result).nK - 1);
    value = Math.max(-1, value);
    if (reflect) this.#reflect('key', value < 0 ? null : String(value));
    if (value === this.#key) return;
    this.#key = value;
    const clearsQuery = value >= 0 && this.query >= 0;  // then the query's change redraws
    if (clearsQuery) {
      if (user) this.setState('query', -1);
      else this.query = -1;
    }
    this.dispatchEvent(new CustomEvent('change', { bubbles: true, detail: { name: 'key', value, user } }));
    if (!clearsQuery) this.#focusChanged();
  }

  // Focus a token as the reader did (null clears).
  #focus(target, user) {
    if (!target) {
      if (this.query >= 0) this.setState('query', -1);
      if (this.#key >= 0) this.#setKey(-1, { user });
    } else if (target.side === 'query') this.setState('query', target.index);
    else this.#setKey(target.index, { user });
  }

  stateChanged(name, value) {
    if (name !== 'query') return true;
    if (value >= 0 && this.#key >= 0) {
      this.#key = -1;
      this.#reflect('key', null);
      this.dispatchEvent(new CustomEvent('change', { bubbles: true, detail: { name: 'key', value: -1, user: false } }));
    }
    this.#focusChanged();
    return false;
  }

  #focusChanged() {
    if (!this.#layout) return;
    this.#paint();
    const f = this.focused;
    if (f) this.say(this.describe(f));
  }

  /** The spoken summary of a focused token (what the live region reads). */
  describe(focus = this.focused) {
    if (!focus || !this.#layers) return '';
    return describeFocus(this.result, this.#layers.list, focus, (i, j) => this.isMasked(i, j));
  }

  #toggleHead(head) {
    const now = this.selectedHeads;
    const next = now.includes(head) ? now.filter((x) => x !== head) : [...now, head].sort((a, b) => a - b);
    if (next.length === 0) return;
    this.selectedHeads = next;
    this.dispatchEvent(new CustomEvent('change', { bubbles: true, detail: { name: 'heads', value: next, user: true } }));
  }

  #repaint() {
    if (this.result && this.#layout) this.render(this.result);
  }

  // ——— drawing ———

  render(result) {
    const { nQ, nK, queryTokens, keyTokens } = shapeOf(result);
    if (this.#keyText !== null) this.#setKey(this.#keyText, { reflect: false });
    if (this.#key >= nK) this.#key = nK - 1;
    const theme = this.theme;
    const heads = headsToDraw(this.#headList, result, this.head, this.layer);
    const cacheKey = `${this.layer}|${heads.join(',')}|${this.colorScale}`;
    if (this.#layers?.result !== result || this.#layers.cacheKey !== cacheKey || this.#layers.theme !== theme)
      this.#layers = { result, cacheKey, theme, list: headLayers(result, this.layer, heads, theme, (l, hd) => selectedMatrix(this.lens, result, l, hd), this.colorScale) };
    if (this.#headList !== null) this.headLabel.hidden = true;
    this.#checkOwnRanges(result, nK);

    const ctx = this.canvas.getContext('2d');
    const width = this.body.clientWidth || 600;
    let labelWidth = 0;
    ctx.font = `700 12px ${theme.fontFamily}`;
    if (Math.max(nQ, nK) <= 133)
      for (const t of [...queryTokens, ...keyTokens]) labelWidth = Math.max(labelWidth, ctx.measureText(t.slice(0, CHARS)).width);
    const before = this.#layout;
    this.#layout = linesLayout({ nQ, nK, width, labelWidth });
    if (this.#loupe?.result !== result || before?.row !== this.#layout.row || before?.width !== this.#layout.width) {
      this.loupe.hidden = true;  // reopened by the pointer, on the new tokens or layout
      this.#loupe = null;
    }
    this.#drawLegend(result, heads, theme);
    const where = result.layers > 1 || result.heads > 1 ? `, layer ${typeof this.layer === 'number' ? this.layer + 1 : this.layer}, ${heads.map(headName).join(', ')}` : '';
    this.plot.setAttribute('aria-label',
      `Attention lines between ${nQ} queries (left) and ${nK} keys (right)${where}. ` +
      'Up and down arrows move the focused token, left and right switch side, Escape shows every line.');
    this.#paint();
  }

  // heads="7" with 4 heads, key="99" with 10 keys: drawn as the nearest that exists, and said so.
  #checkOwnRanges(result, nK) {
    const list = this.#headList, missing = Array.isArray(list) ? list.filter((x) => x >= result.heads) : [];
    const range = (name, error, mark) => {  // clears only a note of this kind, not a parse error
      const previous = this.attributeErrors.find((e) => e.name === name);
      if (error || previous?.message.startsWith(mark)) this.attributeError(name, error);
    };
    range('heads', missing.length ? new RangeError(`the data has ${result.heads} head${result.heads === 1 ? '' : 's'} ` +
      `(0 to ${result.heads - 1}): head${missing.length === 1 ? '' : 's'} ${missing.join(', ')} not drawn`) : null, 'the data has');
    const keyText = this.getAttribute('key');
    const key = keyText !== null && /^\s*\d+\s*$/.test(keyText) ? Number(keyText) : -1;
    range('key', key >= nK ? new RangeError(`past the last key: the data has ${nK} keys (0 to ${nK - 1}); showing key ${this.#key}`) : null, 'past');
  }

  #drawLegend(result, heads, theme) {
    const entries = [];
    const swatch = (color) => {
      const s = h('span', { class: 'swatch' });
      s.style.background = css(color);
      return s;
    };
    const { list } = this.#layers;
    const color = (head) => list.find((l) => l.head === head)?.color;
    if (result.heads > 1 && heads.every((x) => typeof x === 'number')) {
      for (let head = 0; head < result.heads; head++) {
        const on = heads.includes(head);
        entries.push(h('button', { type: 'button', 'data-head': head, 'aria-pressed': String(on), title: on ? 'Hide this head' : 'Show this head' },
          swatch(color(head) ?? theme.line), headName(head)));
      }
    } else for (const { head, color: c } of list) entries.push(h('span', { class: 'entry' }, swatch(c), headName(head)));
    entries.push(h('span', { class: 'hint' }, `line opacity = ${this.colorScale === 'linear' ? 'weight' : `weight on the ${this.colorScale} scale`} (${weightNote(this.layer, heads)}); under ${this.#threshold} not drawn`));
    this.legend.replaceChildren(...entries);
  }

  #paint() {
    cancelAnimationFrame(this.#frame);
    this.#frame = 0;
    const l = this.#layout;
    if (!l || !this.#layers) return;
    const start = performance.now();
    const theme = this.theme, ratio = globalThis.devicePixelRatio || 1;
    const ctx = sizeCanvas(this.canvas, l.width, l.height, ratio);
    ctx.fillStyle = css(theme.bg);
    ctx.fillRect(0, 0, l.width, l.height);
    const focus = this.#hover ?? this.focused;
    if (focus) {
      this.#drawBoxes(ctx, focus);
      const { lines, strokes } = this.#stroke(ctx, focus);
      Object.assign(this.renderStats, { lines, strokes });
      this.renderStats.focus++;
    } else ctx.drawImage(this.#allLines(ratio), 0, 0, l.width, l.height);
    this.#drawLabels(ctx, focus, theme);
    this.renderStats.paintMs = performance.now() - start;
    this.readout.textContent = focus ? this.describe(focus)
      : 'Hover, tap or use the arrow keys to see one token’s lines; tap a token on the right to see who looks at it.';
  }

  // Every line above the threshold: [lines, strokes]; one Path2D per head and opacity bucket.
  #stroke(ctx, focus) {
    const l = this.#layout;
    let lines = 0, strokes = 0;
    for (const { color, weights, positions } of this.#layers.list) {
      const paths = new Array(BUCKETS);
      eachLine(weights, l.nQ, l.nK, focus, this.#threshold, (i, j, w, b) => {
        const path = (paths[b] ??= new Path2D());
        path.moveTo(l.x0, rowY(l, i));
        path.lineTo(l.x1, rowY(l, j));
        lines++;
      }, positions);
      ctx.strokeStyle = css(color);
      for (let b = 0; b < BUCKETS; b++) {
        if (!paths[b]) continue;
        const alpha = bucketAlpha(b);
        ctx.globalAlpha = alpha;
        ctx.lineWidth = lineWidth(alpha, l.row);
        ctx.stroke(paths[b]);
        strokes++;
      }
    }
    ctx.globalAlpha = 1;
    return { lines, strokes };
  }

  // The picture with every line, drawn once per data, heads, theme, size and threshold.
  #allLines(ratio) {
    const l = this.#layout;
    const cacheKey = `${l.width}x${l.height}@${ratio}|${this.#threshold}`;
    if (this.#all?.layers === this.#layers && this.#all.cacheKey === cacheKey) return this.#all.canvas;
    const start = performance.now();
    const canvas = this.#all?.canvas ?? document.createElement('canvas');
    canvas.width = Math.max(1, Math.round(l.width * ratio));
    canvas.height = Math.max(1, Math.round(l.height * ratio));
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    const { lines, strokes } = this.#stroke(ctx, null);
    this.#all = { layers: this.#layers, cacheKey, canvas };
    Object.assign(this.renderStats, { lines, strokes, allMs: performance.now() - start });
    this.renderStats.all++;
    return canvas;
  }

  // Boxes beside the other column's tokens, as opaque as the focused token's weight to each.
  #drawBoxes(ctx, focus) {
    const l = this.#layout;
    const list = this.#layers.list;
    const x = focus.side === 'query' ? l.x1 + l.gap : 0;
    const stripe = l.label / list.length;
    for (const [k, { color, weights, positions }] of list.entries()) {
      const values = focusWeights(weights, l.nQ, l.nK, focus), opacity = focusWeights(positions, l.nQ, l.nK, focus);
      ctx.fillStyle = css(color);
      for (let t = 0; t < values.length; t++) {
        if (!(values[t] > 0)) continue;
        ctx.globalAlpha = Math.min(1, opacity[t]);
        ctx.fillRect(x + k * stripe, l.top + t * l.row, stripe, l.row);
      }
    }
    ctx.globalAlpha = 1;
  }

  #drawLabels(ctx, focus, theme) {
    const l = this.#layout;
    const own = focus && (focus.side === 'query' ? { x: 0 } : { x: l.x1 + l.gap });
    if (focus) {  // the focused token: a bar in the focus colour beside its label
      const y = l.top + focus.index * l.row;
      ctx.fillStyle = css(theme.focus);
      ctx.fillRect(focus.side === 'query' ? l.label + 1 : l.x1 + l.gap - 4, y, 3, Math.max(l.row, 1));
      if (!l.labels) {
        ctx.fillStyle = css(theme.surface);
        ctx.fillRect(own.x, y, l.label, Math.max(l.row, 1));
      }
    }
    if (!l.labels) return;
    const { result } = this.#layers;
    const fitted = this.#fitLabels(ctx, result, theme);
    ctx.textBaseline = 'middle';
    ctx.lineJoin = 'round';
    const draw = (texts, side, x, align) => {
      ctx.textAlign = align;
      for (let i = 0; i < texts.length; i++) {
        const focused = focus && focus.side === side && focus.index === i;
        ctx.font = `${focused ? '700 ' : ''}${l.font}px ${theme.fontFamily}`;
        const y = rowY(l, i);
        if (focus && focus.side !== side) {  // a halo keeps text readable on the weight boxes
          ctx.strokeStyle = css(theme.bg);
          ctx.lineWidth = 3;
          ctx.strokeText(texts[i], x, y);
        }
        ctx.fillStyle = css(focused ? theme.accent : theme.fg);
        ctx.fillText(texts[i], x, y);
      }
    };
    draw(fitted.query, 'query', l.label - 4, 'right');
    draw(fitted.key, 'key', l.x1 + l.gap + 4, 'left');
  }

  // Labels cut with an ellipsis to fit their column (measured once per layout and theme).
  #fitLabels(ctx, result, theme) {
    const l = this.#layout;
    const cacheKey = `${l.font}|${l.label}|${theme.fontFamily}`;
    if (this.#labels?.result === result && this.#labels.cacheKey === cacheKey) return this.#labels;
    ctx.font = `700 ${l.font}px ${theme.fontFamily}`;
    const room = l.label - 6;
    const fit = (t) => {
      let s = t.length > CHARS ? `${t.slice(0, CHARS - 1)}…` : t;
      while (s.length > 1 && ctx.measureText(s).width > room) s = `${s.slice(0, s.endsWith('…') ? -2 : -1)}…`;
      return s;
    };
    const { queryTokens, keyTokens } = shapeOf(result);
    const query = queryTokens.map(fit);
    this.#labels = { result, cacheKey, query, key: keyTokens === queryTokens ? query : keyTokens.map(fit) };
    return this.#labels;
  }

  // ——— interaction ———

  #hit(event) {
    const l = this.#layout;
    if (!l) return null;
    const rect = this.canvas.getBoundingClientRect();
    const scale = rect.width / l.width || 1;
    return hitTest(l, (event.clientX - rect.left) / scale, (event.clientY - rect.top) / scale);
  }

  #setHover(hit) {
    const same = hit && this.#hover && hit.side === this.#hover.side && hit.index === this.#hover.index;
    if (same || (!hit && !this.#hover)) return;
    this.#hover = hit;
    this.#markLoupe();
    this.#frame ||= requestAnimationFrame(() => this.#paint());  // one redraw per frame
  }

  /** The loupe's tokens when it is open: { side, first, count } (indices of the tokens shown), or null. */
  get magnifier() {
    if (!this.#loupe || this.loupe.hidden) return null;
    const { side, first, count } = this.#loupe;
    return { side, first, count };
  }

  // Opens the loupe on the tokens around `hit` beside its column (rows thinner than LOUPE_BELOW
  // px only), or closes it (null).
  #openLoupe(hit, event) {
    const l = this.#layout;
    if (!hit || !l || l.row >= LOUPE_BELOW) {
      this.loupe.hidden = true;
      return;
    }
    const count = Math.min(LOUPE_ROWS, hit.side === 'query' ? l.nQ : l.nK);
    const total = hit.side === 'query' ? l.nQ : l.nK;
    const first = Math.max(0, Math.min(total - count, hit.index - (count >> 1)));
    const opening = !this.#loupe || this.#loupe.side !== hit.side || this.loupe.hidden;
    const moved = opening || this.#loupe.first !== first;
    this.#loupe = { side: hit.side, first, count, result: this.result, left: opening ? null : this.#loupe.left };
    if (moved) {
      const { queryTokens, keyTokens } = shapeOf(this.result);
      const tokens = hit.side === 'query' ? queryTokens : keyTokens;
      this.loupe.replaceChildren(...Array.from({ length: count }, (_, k) => h('div', { class: 'loupe-row', 'data-index': first + k },
        h('span', { class: 'index' }, String(first + k)), h('span', { class: 'text' }, tokens[first + k].slice(0, 40)))));
    }
    // Beside the pointer (never under it: a click there still picks from the plot), towards the
    // middle of the plot; vertically centred on it, inside the plot.
    const rect = this.canvas.getBoundingClientRect(), scale = rect.width / l.width || 1;
    const height = count * LOUPE_ROW_PX + 6, plotHeight = rect.height;
    const y = event ? event.clientY - rect.top : (l.top + (hit.index + 0.5) * l.row) * scale;
    const x = event ? event.clientX - rect.left : (hit.side === 'query' ? l.x0 : l.x1) * scale;
    this.loupe.style.top = `${Math.max(0, Math.min(plotHeight - height, y - height / 2))}px`;
    this.loupe.hidden = false;
    // Placed when it opens, then it only follows vertically (so the pointer can reach it), unless
    // that would bring it under the pointer.
    const width = this.loupe.offsetWidth;
    if (this.#loupe.left === null || (x >= this.#loupe.left && x <= this.#loupe.left + width)) {
      const gap = 16;
      const right = x + gap + width <= rect.width, left = x - gap - width >= 0;
      const toRight = hit.side === 'query' ? right || !left : !left && right;
      this.#loupe.left = toRight ? x + gap : Math.max(0, x - gap - width);
    }
    this.loupe.style.left = `${this.#loupe.left}px`;
    this.#markLoupe();
  }

  // Highlights the loupe's row of the hovered (or focused) token.
  #markLoupe() {
    if (!this.#loupe || this.loupe.hidden) return;
    const f = this.#hover ?? this.focused;
    for (const row of this.loupe.children)
      row.classList.toggle('on', Boolean(f && f.side === this.#loupe.side && f.index === Number(row.dataset.index)));
  }

  #keydown(event) {
    if (!this.result) return;
    const { nQ, nK } = shapeOf(this.result);
    const f = this.focused ?? { side: 'query', index: -1 };
    let { side, index } = f;
    const count = () => (side === 'query' ? nQ : nK);
    switch (event.key) {
      case 'ArrowDown': index++; break;
      case 'ArrowUp': index = index < 0 ? 0 : index - 1; break;
      case 'PageDown': index += 10; break;
      case 'PageUp': index -= 10; break;
      case 'ArrowLeft': side = 'query'; break;
      case 'ArrowRight': side = 'key'; break;
      case 'Home': index = 0; break;
      case 'End': index = count() - 1; break;
      case 'Escape':
        if (!this.focused) return;
        event.preventDefault();
        this.#focus(null, true);
        this.say('Every line shown.');
        return;
      default:
        if (isActivation(event) && this.focused) {
          event.preventDefault();
          this.say(this.describe());
        }
        return;
    }
    event.preventDefault();
    index = Math.max(0, Math.min(count() - 1, index));
    this.#hover = null;
    this.#focus({ side, index }, true);
  }

  // ——— export ———

  svg(result, theme, options) {
    const heads = headsToDraw(this.#headList, result, this.head, this.layer);
    return linesSVG(result, theme, {
      layer: this.layer, heads, focus: this.focused, threshold: this.#threshold,
      weights: heads.map((hd) => selectedMatrix(this.lens, result, this.layer, hd)), 'color-scale': this.colorScale,
    }, options);
  }
}

export function parseThreshold(value) {
  const x = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof x !== 'number' || !Number.isFinite(x) || x < 0 || x >= 1)
    throw new RangeError(`threshold must be a number from 0 up to (not including) 1 (got ${JSON.stringify(value)})`);
  return x;
}

if (globalThis.customElements && !customElements.get('attn-lines')) customElements.define('attn-lines', AttnLines);
