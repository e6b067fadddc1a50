// What every figure shares: the shadow root and its styles, the data life cycle (read source →
// check → compute with the engine → hide tokens → draw), the state (layer, head, query, step,
// scale, temperature, mask, hide, renormalize) as attributes and properties with `change`
// events, the error state, the layer/head pickers and the SVG/PNG/HTML export. Subclasses
// implement setup(), render() and svg().
import { init } from '../../attnlens.js';
import { announce } from './a11y.js';
import { BufferPool } from './buffers.js';
import { computeWeights, isAggregate, isMasked, runModel, selectedMatrix } from './compute.js';
import { DataError, MAX_TOKENS, parseData, parseTokens } from './data.js';
import { h } from './dom.js';
import { downloadFigure, svgToPNG } from './export.js';
import { applyFilter, hiddenNote } from './filter.js';
import { baseCSS, sheet } from './styles.js';
import { SOURCE_ATTRIBUTES, readSource } from './source.js';
import { DEFAULTS, HEAD_AGGREGATES, LAYER_AGGREGATES, STATE, STEPS } from './state.js';
import { readTheme, watchColorScheme } from './theme.js';

export { STEPS };

const clipValue = (value) => (value === null ? '' : value.length > 40 ? `${value.slice(0, 39)}…` : value);

// Importing in Node (types, server rendering of the page around it) must not throw.
const HTMLElementBase = globalThis.HTMLElement ?? class {};

let engine = null;
/** The engine, loaded once for every figure on the page. */
export const loadEngine = () => (engine ??= init().catch((error) => { engine = null; throw error; }));

const LOAD = 2, COMPUTE = 1, VIEW = 0, NOTHING = -1;

export class AttnElement extends HTMLElementBase {
  /** The most tokens this figure shows. */
  static maxTokens = MAX_TOKENS;
  /** The most tokens with precomputed weights, when more than maxTokens (the heatmap: 8192). */
  static maxPrecomputedTokens = null;
  /** Per-figure state defaults (e.g. the heatmap starts with no pinned row: query −1). */
  static defaults = {};
  /** Whether the toolbar offers layer/head pickers when the data has several. */
  static pickers = true;
  /** Whether head may be 'mean'/'max' and layer 'rollout' (the pickers then offer them). */
  static aggregates = true;
  /** States whose change means computing again, beyond scale/temperature/mask. */
  static recomputeOn = [];

  static get observedAttributes() {
    return [...Object.keys(STATE), ...SOURCE_ATTRIBUTES, 'theme'];
  }

  #state = {};
  #queryText = null;     // query given as a token's text, resolved when the tokens are known
  #dataProperty;         // what was assigned to .data (undefined: read the source from the DOM)
  #data = null;          // checked data
  #raw = null;           // the data as read (for toHTML)
  #result = null;        // computed attention
  #error = null;
  #lens = null;
  #need = NOTHING;
  #loop = null;
  #reflecting = false;
  #connected = false;
  #abort = null;
  #theme = null;
  #cleanup = [];
  #width = 0;
  #badAttributes = new Map();  // attribute name → its error (shown in attributeNote)
  #buffers = new BufferPool();  // result arrays reused by every recomputation (compute())

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    root.adoptedStyleSheets = [sheet(baseCSS), ...this.constructor.styles.map(sheet)];
    this.controls = h('span', { class: 'controls' });
    this.layerPicker = h('select', { 'aria-label': 'Layer' });
    this.headPicker = h('select', { 'aria-label': 'Head' });
    this.layerPicker.addEventListener('change', () => this.#userSet('layer', STATE.layer.parse(this.layerPicker.value)));
    this.headPicker.addEventListener('change', () => this.#userSet('head', STATE.head.parse(this.headPicker.value)));
    this.layerLabel = h('label', { hidden: true }, 'Layer', this.layerPicker);
    this.headLabel = h('label', { hidden: true }, 'Head', this.headPicker);
    const exportButton = (kind) => h('button', {
      type: 'button', class: `export-${kind}`, 'aria-label': `Download the figure as ${kind.toUpperCase()}`,
      onclick: () => this.#download(kind),
    }, kind.toUpperCase());
    this.hiddenNote = h('span', { class: 'hidden-note', part: 'hidden-note', hidden: true });
    this.toolbar = h('div', { class: 'toolbar', part: 'toolbar' },
      this.controls, this.layerLabel, this.headLabel, this.hiddenNote, h('span', { class: 'spacer' }),
      h('span', { class: 'exports' }, exportButton('svg'), exportButton('png'), exportButton('html')));
    this.statusBox = h('div', { class: 'status', role: 'status' }, 'Loading…');
    this.errorBox = h('div', { class: 'error', role: 'alert', part: 'error', hidden: true });
    // Bad attribute values (head="-1", threshold="2", head="9" of 4 heads): said here, above a
    // figure that keeps drawing the last good state.
    // (Read out through the live region: the figure keeps one role="alert", its error state.)
    this.attributeNote = h('div', { class: 'error attribute-error', part: 'attribute-error', hidden: true });
    this.body = h('div', { class: 'body', part: 'body', hidden: true });
    this.live = h('div', { class: 'sr-only', 'aria-live': 'polite', 'aria-atomic': 'true' });
    root.append(h('div', { class: 'frame', part: 'frame' },
      this.toolbar, this.statusBox, this.errorBox, this.attributeNote, this.body, this.live));
    this.setup(this.body);
  }

  // ——— life cycle ———

  connectedCallback() {
    this.#connected = true;
    this.#cleanup.push(watchColorScheme(() => this.redraw()));
    const resize = new ResizeObserver(() => {
      const width = this.body.clientWidth || this.clientWidth;
      if (Math.abs(width - this.#width) >= 1 && this.#result) requestAnimationFrame(() => this.#request(VIEW));
    });
    resize.observe(this);
    const children = new MutationObserver(() => this.#dataProperty === undefined && this.#request(LOAD));
    children.observe(this, { childList: true, subtree: true, characterData: true });
    this.#cleanup.push(() => resize.disconnect(), () => children.disconnect());
    this.#request(this.#data ? COMPUTE : LOAD);
  }

  disconnectedCallback() {
    this.#connected = false;
    for (const stop of this.#cleanup.splice(0)) stop();
    this.stop?.();
  }

  attributeChangedCallback(name, old, value) {
    if (this.#reflecting || old === value) return;
    if (name === 'theme') return this.redraw();
    if (name in STATE) {
      try {
        this.#set(name, value === null ? undefined : STATE[name].parse(value));
        this.attributeError(name, null);
        if (this.#result) this.#checkRanges();
      } catch (error) {
        this.attributeError(name, error);
      }
      return;
    }
    if (this.#dataProperty === undefined) this.#request(LOAD);
  }

  /**
   * For subclasses too: `error` (an Error) says attribute `name` has a bad value: shown above the
   * figure (which keeps its last good state) and fired as `error`; null clears it.
   */
  attributeError(name, error) {
    if (error) {
      this.#badAttributes.set(name, error);
      this.#reportError(error);
      announce(this.live, `${name}="${clipValue(this.getAttribute(name))}": ${error.message}`);
    } else if (!this.#badAttributes.delete(name)) return;
    this.attributeNote.replaceChildren(...[...this.#badAttributes].map(([attr, e]) =>
      h('div', {}, `${attr}="${clipValue(this.getAttribute(attr))}": ${e.message}`)));
    this.attributeNote.hidden = this.#badAttributes.size === 0;
  }

  /** The bad attribute values shown above the figure: [{ name, message, error }]. */
  get attributeErrors() {
    return [...this.#badAttributes].map(([name, error]) => ({ name, message: error.message, error }));
  }

  // Indices given by attribute that the data does not have (head="9" with 4 heads) are clamped
  // to the last one, and said so.
  #checkRanges() {
    const r = this.#result;
    for (const [name, count, what] of [['layer', r.layers, 'layer'], ['head', r.heads, 'head'], ['query', r.nQ ?? r.n, 'token']]) {
      const text = this.getAttribute(name);
      const given = text !== null && /^\s*\d+\s*$/.test(text) ? Number(text) : null;
      const previous = this.#badAttributes.get(name);
      if (given !== null && given >= count && this.#get(name) !== given) {
        const message = `past the last ${what}: the data has ${count} ${what}${count === 1 ? '' : 's'} (0 to ${count - 1}); ` +
          `showing ${what} ${this.#get(name)}`;
        if (previous?.message !== message) this.attributeError(name, new RangeError(message));  // once, not at every redraw
      } else if (previous?.message.startsWith('past')) this.attributeError(name, null);
    }
  }

  // ——— data ———

  /** The data as given (property, or read from src/JSON/attributes); set it to replace the source. */
  get data() {
    return this.#dataProperty;
  }
  set data(value) {
    this.#dataProperty = value === null ? undefined : value;
    this.#request(LOAD);
  }

  /** Resolves (to true, or false when the figure shows an error) once everything asked is drawn. */
  get updateComplete() {
    return (async () => {
      while (this.#loop) await this.#loop;
      return this.#error === null;
    })();
  }

  /** The engine in use (null until a figure with vectors has loaded it). */
  get lens() { return this.#lens; }
  /** The tokens shown, or null. */
  get tokens() { return this.#result?.tokens ?? null; }
  /** Layers and heads in the data (0 before data). */
  get layers() { return this.#result?.layers ?? 0; }
  get heads() { return this.#result?.heads ?? 0; }
  /** The message shown in the error state, or null. */
  get error() { return this.#error; }
  /** The computed result (see compute.js): tokens, n, weights per layer, masks, scale… */
  get result() { return this.#result; }

  /**
   * The current layer and head's nQ×nK weights (rows = queries), or null: with head 'mean'/'max'
   * the element-wise mean/max over the layer's heads, with layer 'rollout' the attention rollout.
   */
  get weights() {
    const r = this.#result;
    return r?.weights ? selectedMatrix(this.#lens, r, this.layer, this.head) : null;
  }

  /** Whether cell (query i, key j) is masked out in the current picture. */
  isMasked(i, j) {
    return this.#result ? isMasked(this.#result.masks, i, j) : false;
  }

  /** The effective scale the softmax used (scale/temperature), or null for precomputed weights. */
  get effectiveScale() { return this.#result?.scale ?? null; }

  /** Redraws (e.g. after the page changed the --attn-* custom properties). */
  redraw() {
    this.#theme = null;
    if (this.#result) this.#request(VIEW);
  }

  get theme() {
    return (this.#theme ??= readTheme(this));
  }

  // ——— state ———

  get state() {
    return Object.fromEntries(Object.keys(STATE).map((k) => [k, this.#get(k)]));
  }

  #default(name) {
    if (name === 'mask') {
      const d = this.#data;
      if (!d) return 'none';
      return [d.causal && 'causal', d.keyMask && 'padding'].filter(Boolean).join(' ') || 'none';
    }
    return this.constructor.defaults[name] ?? DEFAULTS[name];
  }

  #get(name) {
    return this.#state[name] ?? this.#default(name);
  }

  // Keeps a state value inside what the data has (after data or layer changes).
  #clamp(name, value) {
    const r = this.#result;
    if (!r) return value;
    if (typeof value === 'string' && (name === 'layer' || name === 'head')) return value;  // an aggregate
    if (name === 'layer') return Math.min(value, r.layers - 1);
    if (name === 'head') return Math.min(value, r.heads - 1);
    if (name === 'query') return Math.max(this.constructor.defaults.query === -1 ? -1 : 0, Math.min(value, r.n - 1));
    return value;
  }

  // The index of the first token with this text (or the default when none has it).
  #findToken(text) {
    const found = this.#result.tokens.findIndex((t) => t.trim() === text.trim());
    return found >= 0 ? found : this.#default('query');
  }

  // A query given as text before the tokens were known.
  #resolveQuery() {
    if (this.#queryText === null || !this.#result) return;
    this.#state.query = this.#findToken(this.#queryText);
    const missing = !this.#result.tokens.some((t) => t.trim() === this.#queryText.trim());
    if (missing && this.getAttribute('query') === this.#queryText)
      this.attributeError('query', new RangeError(`no token has this text; showing ${this.#state.query < 0 ? 'no query' : `token ${this.#state.query}`}`));
    this.#queryText = null;
  }

  // Sets a state value (undefined = back to the default); redraws, reflects and fires `change`.
  #set(name, value, { reflect = false, user = false } = {}) {
    if (name === 'query') {
      this.#queryText = null;
      if (typeof value === 'string') {
        if (!this.#result) {
          this.#queryText = value;
          return;
        }
        value = this.#findToken(value);
      }
    }
    const before = this.#get(name);
    if (value === undefined) delete this.#state[name];
    else this.#state[name] = this.#clamp(name, value);
    const after = this.#get(name);
    if (reflect) {
      this.attributeError(name, null);  // a good value replaces a bad one
      this.#reflecting = true;
      const text = value === undefined ? null : STATE[name].format ? STATE[name].format(after) : String(after);
      if (text === null) this.removeAttribute(name);
      else this.setAttribute(name, text);
      this.#reflecting = false;
    }
    if (before === after || (STATE[name].format && STATE[name].format(before) === STATE[name].format(after))) return;
    const recompute = STATE[name].recompute || this.constructor.recomputeOn.includes(name);
    if (this.#result) {
      if (recompute) this.#request(COMPUTE);
      else this.stateChanged(name, after, before) === false || this.#request(VIEW);
    } else if (recompute && this.#data) this.#request(COMPUTE);  // e.g. out of an error a bad `hide` caused
    if (this.#connected)
      this.dispatchEvent(new CustomEvent('change', { bubbles: true, detail: { name, value: after, user } }));
  }

  /** Sets state from the user's interaction (reflects to the attribute). */
  #userSet(name, value) {
    this.#set(name, value, { reflect: true, user: true });
  }

  /** For subclasses: change state as the user did (click, key). */
  setState(name, value) {
    this.#userSet(name, value);
  }

  // ——— the update loop: load → compute → render, coalesced ———

  #request(level) {
    this.#need = Math.max(this.#need, level);
    this.#loop ??= this.#run().finally(() => {
      this.#loop = null;
      // Asked for after #run's last look at #need but before this callback (e.g. by a `render`
      // listener's continuation): without a new run it would be dropped, updateComplete resolving
      // with nothing drawn and no `render` event.
      if (this.#need !== NOTHING) this.#request(NOTHING);
    });
  }

  async #run() {
    await null;  // batch what the caller sets in the same task
    while (this.#need !== NOTHING) {
      if (!this.#connected) { this.#need = NOTHING; break; }
      const level = this.#need;
      this.#need = NOTHING;
      try {
        if (level >= LOAD && !(await this.#load())) continue;
        if (!this.#data) continue;
        if (isAggregate(this.layer, this.head) && !this.constructor.aggregates)
          throw new RangeError(`${this.localName} shows one head at a time: layer and head must be indices ` +
            `(got layer ${JSON.stringify(this.layer)}, head ${JSON.stringify(this.head)})`);
        if (level >= COMPUTE) {
          if (this.#data.kind !== 'attention') this.#lens ??= await loadEngine();
          if (this.#need >= LOAD) continue;
          this.#result = applyFilter(this.compute(this.#lens, this.#data, this.state), this.state, this.#buffers);
          for (const name of ['layer', 'head', 'query']) if (name in this.#state) this.#state[name] = this.#clamp(name, this.#state[name]);
          this.#resolveQuery();
          this.#checkRanges();
        }
        if (!this.#result) continue;
        if (isAggregate(this.layer, this.head) && !this.#lens) {
          this.#lens = await loadEngine();  // precomputed weights: the engine aggregates
          if (this.#need >= COMPUTE) continue;
        }
        this.#showBody();
        this.#width = this.body.clientWidth;
        this.#renderPickers();
        this.render(this.#result);
        this.#showHidden();
        this.dispatchEvent(new Event('render'));
      } catch (error) {
        if (error?.name === 'AbortError') continue;
        this.#result = null;
        this.#fail(error);
      }
    }
  }

  // Reads and checks the data; false when superseded or empty.
  async #load() {
    this.#abort?.abort();
    const abort = (this.#abort = new AbortController());
    this.#data = null;
    this.#result = null;
    this.#buffers.clear();
    this.#status('Loading…');
    const raw = await this.readData(this.#dataProperty, abort.signal);
    if (abort.signal.aborted || this.#need >= LOAD) return false;
    if (raw === null || raw === undefined) {
      this.#status('No data yet: give tokens with Q, K, V, or precomputed attention.');
      return false;
    }
    const data = await this.checkData(raw);
    if (abort.signal.aborted || this.#need >= LOAD) return false;
    this.#raw = raw;
    this.#data = data;
    // No further request: the iteration that loaded goes on to compute and draw (asking for
    // COMPUTE here computed and drew every new data twice: 2× the first draw of 8192 tokens).
    return true;
  }

  /** For subclasses: the raw data (the property, or src, a child JSON script, model, attributes). */
  readData(property, signal) {
    return readSource(this, property, signal);
  }

  /** For subclasses: raw data → checked data (a model named by the data is run here). */
  async checkData(raw) {
    const maxTokens = this.constructor.maxTokens;
    let data = parseData(raw, { maxTokens, maxPrecomputedTokens: this.constructor.maxPrecomputedTokens ?? maxTokens });
    if (data.kind === 'model') {
      this.#lens ??= await loadEngine();
      data = await runModel(this.#lens, data, (tokens) => parseTokens(tokens, maxTokens));
    }
    return data;
  }

  #status(text) {
    this.statusBox.textContent = text;
    this.statusBox.hidden = false;
    this.body.hidden = true;
    this.toolbar.hidden = true;
    this.errorBox.hidden = true;
    this.#error = null;
  }

  #showBody() {
    this.statusBox.hidden = true;
    this.errorBox.hidden = true;
    this.body.hidden = false;
    this.toolbar.hidden = false;
    this.#error = null;
  }

  #fail(error) {
    const message = error instanceof DataError || error instanceof RangeError || error instanceof TypeError
      ? error.message : `${error?.message ?? error}`;
    this.#error = message;
    this.errorBox.textContent = `${this.localName}: ${message}`;
    this.errorBox.hidden = false;
    this.statusBox.hidden = true;
    this.body.hidden = true;
    this.toolbar.hidden = true;
    this.stop?.();
    this.#reportError(error, message);
  }

  #reportError(error, message = error.message) {
    this.dispatchEvent(new CustomEvent('error', { bubbles: true, detail: { message, error } }));
  }

  #renderPickers() {
    const r = this.#result;
    const aggregates = this.constructor.aggregates;
    const fill = (select, label, count, value, name, extra) => {
      const show = this.constructor.pickers && count > 1;
      label.hidden = !show;
      if (!show) return;
      const key = `${count}/${extra}`;
      if (select.dataset.options !== key) {
        select.dataset.options = key;
        select.replaceChildren(...Array.from({ length: count }, (_, i) => h('option', { value: i }, `${name} ${i + 1}`)),
          ...extra.map((word) => h('option', { value: word }, word[0].toUpperCase() + word.slice(1))));
      }
      select.value = String(value);
    };
    // Rollout multiplies n×n layers: self-attention only.
    const layerExtra = aggregates && r.layers > 1 && (r.nK ?? r.n) === r.n ? LAYER_AGGREGATES : [];
    fill(this.layerPicker, this.layerLabel, r.layers, this.layer, 'Layer', layerExtra);
    fill(this.headPicker, this.headLabel, r.heads, this.head, 'Head', aggregates ? HEAD_AGGREGATES : []);
    // Rollout averages the heads itself: the head picker has no say.
    this.headPicker.disabled = this.layer === 'rollout';
  }

  /** Tells screen readers (polite live region), with how many tokens are hidden. */
  say(text) {
    const note = hiddenNote(this.#result?.hidden);
    announce(this.live, note ? `${text} (${note}.)` : text);
  }

  // "2 tokens hidden" in the toolbar when `hide` removed some (filter.js).
  #showHidden() {
    const note = hiddenNote(this.#result?.hidden);
    this.hiddenNote.textContent = note;
    this.hiddenNote.hidden = !note;
  }

  // ——— export ———

  /** The current figure as a standalone SVG document (a string); `width`: the size it shows at. */
  toSVG(options) {
    if (!this.#result) throw new Error(this.#error ?? 'the figure has nothing to export yet');
    return this.svg(this.#result, readTheme(this), options);
  }

  /** The current figure as a PNG image (rasterised from the SVG). */
  async toPNG(options) {
    return svgToPNG(this.toSVG(), options);
  }

  /**
   * The figure as one self-contained HTML file (a string): engine, elements, data and the current
   * state inlined; opens offline from file:// and stays interactive. `theme`: 'light' or 'dark'
   * to force one (default: the figure's theme attribute, else the reader's colour scheme);
   * `width`: the figure's width in CSS pixels in that file (default: the page's width).
   */
  async toHTML({ theme = this.getAttribute('theme') ?? undefined, title, width } = {}) {
    if (!this.#result) throw new Error(this.#error ?? 'the figure has nothing to export yet');
    // Loaded on first use: most pages never export a standalone file.
    const [{ exportableData, standaloneHTML, stateAttributes }, { singleBundle }] = await Promise.all([import('./standalone.js'), import('./bundle.js')]);
    // The data goes in as the JSON child, which wins over data attributes (source.js); `src` and
    // `model` would win over it. Data read from attributes is not written twice.
    const source = (name) => /^(src|model|text)(-|$)/.test(name);  // also attn-compare's src-a, model-b…
    const fromAttributes = this.#dataProperty === undefined && ![...this.attributes].some((a) => source(a.name))
      && !this.querySelector(':scope > script[type="application/json"]');
    const skip = new Set([...(fromAttributes ? SOURCE_ATTRIBUTES : []), ...Object.keys(STATE), 'theme', 'style']);
    const attributes = [...stateAttributes(this.state),
      ...[...this.attributes].filter((a) => !skip.has(a.name) && !source(a.name)).map((a) => [a.name, a.value]).sort((a, b) => (a[0] < b[0] ? -1 : 1))];
    return standaloneHTML({
      tag: this.localName, attributes, data: exportableData(this.#raw, this.#data), bundle: await singleBundle(),
      theme: theme === 'light' || theme === 'dark' ? theme : undefined, title, width,
    });
  }

  #download(kind) {
    return downloadFigure(this, kind);
  }

  // ——— for subclasses ———

  static styles = [];
  /** Builds the figure's DOM inside `body` (once). */
  setup() {}
  /** Computes what the figure draws (default: weights for every layer/head). */
  compute(lens, data, state) {
    // Called on the prototype too (the command line renders without an element): fresh arrays.
    return computeWeights(lens, data, state, #buffers in this ? this.#buffers : null);
  }
  /** Draws `result` with the current state. */
  render() {}
  /** A state changed that needs no recomputation; return false to skip the full render. */
  stateChanged() {}
  /** The figure as SVG text. */
  svg() { return ''; }

  // layer, head, query, step, scale, temperature, mask… as properties (setting one reflects it;
  // color-scale is the property colorScale).
  static {
    for (const name of Object.keys(STATE)) {
      Object.defineProperty(this.prototype, STATE[name].property ?? name, {
        configurable: true, enumerable: true,
        get() { return this.#get(name); },
        set(value) {
          this.#set(name, value === undefined || value === null && name !== 'query' ? undefined : STATE[name].parse(value),
            { reflect: true });
        },
      });
    }
  }
}
