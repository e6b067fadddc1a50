// <attn-generate>: a causal language model (stories260K by default) writes token by token and
// the reader watches where each new token looked. The steps are generated up front with
// lm.generate (the model is tiny), then played back: the text grows, each earlier token is tinted
// by the weight the newest one gave it, bars list where it looked most, the next-token candidates
// show with their probabilities, and the causal heatmap of the whole text fills in row by row.
// Its data model (a prompt and sampling options, not tokens with Q/K/V) differs from the other
// figures', so it has its own small life cycle but the same theme, DOM, a11y and export helpers.
import { announce, fmt, isActivation, quote, reducedMotion, strongest } from './lib/a11y.js';
import { loadEngine } from './lib/base.js';
import { css } from './lib/color.js';
import { h, sizeCanvas } from './lib/dom.js';
import { clip, downloadFigure, svgToPNG } from './lib/export.js';
import { GenerationView, OPTIONS } from './lib/generation.js';
import { cellsLayer, drawMatrix, maskLayer } from './lib/matrix-canvas.js';
import { baseCSS, sheet } from './lib/styles.js';
import { readTheme, watchColorScheme } from './lib/theme.js';
import { tokenLabel } from './lib/tokens.js';
import { generateSVG } from './svg/generate.js';

const HTMLElementBase = globalThis.HTMLElement ?? class {};
const STEP_MS = 450, TOP_LOOKS = 6, MAX_PLOT = 420;

const STOPPED = { eos: 'The model ended the story here.', context: 'The context (all the tokens the model can read) is full.' };

const models = new Map();
/** A language model, loaded once per name for every figure on the page. */
function loadLM(name) {
  if (!models.has(name)) {
    const loading = loadEngine().then((lens) => {
      if (typeof lens.loadModel !== 'function') throw new Error('this build has no language-model support (lens.loadModel)');
      return lens.loadModel(name);
    });
    loading.catch(() => models.delete(name));
    models.set(name, loading);
  }
  return models.get(name);
}

const STYLE = `
.prompt-row { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin-bottom: 6px; }
.prompt-row label { flex: 1 1 200px; display: flex; gap: 6px; align-items: center; min-width: 0; color: var(--attn-muted); }
.prompt-row input {
  flex: 1 1 auto; min-width: 0; min-height: 28px; padding: 2px 6px; background: var(--attn-bg);
  border: 1px solid var(--attn-line); border-radius: 4px;
}
.player { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin-bottom: 6px; }
.player .progress, .player .stopped { color: var(--attn-muted); }
.text {
  position: relative; white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.9; margin: 0 0 8px; padding: 6px;
  border: 1px solid var(--attn-line); border-radius: 4px; max-height: 14em; overflow-y: auto;
}
.text span { border-radius: 3px; padding: 1px 0; }
.text .prompt { color: var(--attn-muted); }
.text .bos { font-size: 0.8em; color: var(--attn-muted); border: 1px solid var(--attn-line); padding: 0 2px; margin-right: 2px; }
.text .new { outline: 2px solid var(--attn-accent); outline-offset: 1px; font-weight: 600; }
.panels { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 240px), 1fr)); gap: 8px 16px; margin-bottom: 8px; }
.panels h3 { font-size: 1em; margin: 0 0 4px; font-weight: 600; overflow-wrap: anywhere; }
.panels ol { list-style: none; margin: 0; padding: 0; }
.panels li {
  display: grid; grid-template-columns: minmax(3ch, 9ch) minmax(30px, 1fr) 3.4em; gap: 6px; align-items: center;
  min-height: 20px;
}
.panels .label { text-align: right; overflow: hidden; text-overflow: ellipsis; white-space: pre; }
.panels .track { display: block; height: 12px; background: var(--attn-low); border-radius: 2px; overflow: hidden; }
.panels .fill { display: block; height: 100%; width: 100%; background: var(--attn-accent); transform-origin: left center; transform: scaleX(0); transition: transform 0.25s ease; }
.panels .chosen .label { font-weight: 700; }
.panels .chosen .label::before { content: "✓ "; color: var(--attn-accent); }
.panels .value { text-align: right; color: var(--attn-muted); }
.plot { position: relative; width: max-content; max-width: 100%; }
.plot canvas { display: block; max-width: 100%; }
.caption, .readout { color: var(--attn-muted); margin: 4px 0 0; overflow-wrap: anywhere; }
.readout { min-height: 1.4em; }
`;

export class AttnGenerate extends HTMLElementBase {
  static get observedAttributes() {
    return [...Object.values(OPTIONS).map((o, i) => o.attribute ?? Object.keys(OPTIONS)[i]), 'theme'];
  }

  #options = {};          // values set by property or attribute (the rest are defaults)
  #lm = null;             // a model given as an object (languageModel)
  #view = null;           // GenerationView of the current generation
  #current = -1;          // the step shown (−1: only the prompt)
  #timer = 0;
  #work = null;           // the running generation (a promise)
  #pending = false;
  #error = null;
  #ticket = 0;
  #theme = null;
  #cleanup = [];
  #layout = null;
  #reflecting = false;

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    root.adoptedStyleSheets = [sheet(baseCSS), sheet(STYLE)];
    const button = (cls, label, text, onclick) => h('button', { type: 'button', class: cls, 'aria-label': label, onclick }, text);
    this.input = h('input', { type: 'text', class: 'prompt', spellcheck: 'false', autocomplete: 'off' });
    this.input.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); this.#write(); } });
    this.writeButton = button('write', 'Write from this prompt', 'Write', () => this.#write());
    this.playButton = h('button', { type: 'button', class: 'play', 'aria-pressed': 'false', onclick: () => this.toggle() }, '▶ Play');
    this.backButton = button('back', 'Step back', '◀', () => this.#user(() => this.stepBack()));
    this.forwardButton = button('forward', 'Step forward', '▶', () => this.#user(() => this.stepForward()));
    this.progress = h('span', { class: 'progress num', 'aria-hidden': 'true' });
    this.stopped = h('span', { class: 'stopped' });
    this.layerPicker = h('select', { 'aria-label': 'Layer' });
    this.headPicker = h('select', { 'aria-label': 'Head' });
    this.layerPicker.addEventListener('change', () => this.#pick('layer', Number(this.layerPicker.value)));
    this.headPicker.addEventListener('change', () =>
      this.#pick('head', this.headPicker.value === 'mean' ? 'mean' : Number(this.headPicker.value)));
    const exportButton = (kind) => button(`export-${kind}`, `Download the figure as ${kind.toUpperCase()}`,
      kind.toUpperCase(), () => downloadFigure(this, kind));
    this.toolbar = h('div', { class: 'toolbar', part: 'toolbar' },
      h('label', {}, 'Layer', this.layerPicker), h('label', {}, 'Head', this.headPicker),
      h('span', { class: 'spacer' }), exportButton('svg'), exportButton('png'));
    this.text = h('p', { class: 'text', part: 'text', tabindex: 0, role: 'group' });
    this.looksTitle = h('h3', {});
    this.looks = h('ol', { class: 'looks', part: 'looks' });
    this.candidatesTitle = h('h3', {}, 'Next-token candidates');
    this.candidates = h('ol', { class: 'candidates', part: 'candidates' });
    this.canvas = h('canvas', { class: 'cells', 'aria-hidden': 'true' });
    this.plot = h('div', { class: 'plot', part: 'plot', role: 'img' }, this.canvas);
    this.caption = h('p', { class: 'caption' });
    this.readout = h('p', { class: 'readout', 'aria-hidden': 'true' });
    this.plot.addEventListener('pointermove', (e) => this.#hover(e));
    this.plot.addEventListener('pointerleave', () => this.readout.replaceChildren());
    this.statusBox = h('div', { class: 'status', role: 'status' }, 'Loading…');
    this.errorBox = h('div', { class: 'error', role: 'alert', part: 'error', hidden: true });
    this.body = h('div', { class: 'body', part: 'body', hidden: true },
      h('div', { class: 'player' }, this.playButton, this.backButton, this.forwardButton, this.progress, this.stopped),
      this.text,
      h('div', { class: 'panels' },
        h('section', {}, this.looksTitle, this.looks),
        h('section', {}, this.candidatesTitle, this.candidates)),
      this.plot, this.readout, this.caption);
    this.live = h('div', { class: 'sr-only', 'aria-live': 'polite', 'aria-atomic': 'true' });
    root.append(h('div', { class: 'frame', part: 'frame' },
      h('div', { class: 'prompt-row' }, h('label', {}, 'Prompt', this.input), this.writeButton),
      this.toolbar, this.statusBox, this.errorBox, this.body, this.live));
    this.body.addEventListener('keydown', (e) => this.#key(e));
  }

  // ——— life cycle ———

  connectedCallback() {
    this.#cleanup.push(watchColorScheme(() => this.redraw()));
    const resize = new ResizeObserver(() => this.#view && this.#draw());
    resize.observe(this);
    this.#cleanup.push(() => resize.disconnect());
    this.input.value = this.prompt;
    this.#regenerate();
  }

  disconnectedCallback() {
    this.pause();
    for (const stop of this.#cleanup.splice(0)) stop();
  }

  attributeChangedCallback(name, old, value) {
    if (this.#reflecting || old === value) return;
    if (name === 'theme') return this.redraw();
    const key = Object.keys(OPTIONS).find((k) => (OPTIONS[k].attribute ?? k) === name);
    this.#setOption(key, value === null ? undefined : value);
  }

  #setOption(key, value) {
    try {
      if (value === undefined) delete this.#options[key];
      else this.#options[key] = OPTIONS[key].parse(value);
    } catch (error) {
      delete this.#options[key];
      this.#fail(error);
      return;
    }
    if (key === 'prompt') this.input.value = this.prompt;
    if (key === 'layer' || key === 'head') {
      if (this.#view) this.#checkView() && this.#draw();
      return;
    }
    if (this.isConnected) this.#regenerate();
  }

  /** Resolves (to true, or false when the figure shows an error) once the generation is drawn. */
  get updateComplete() {
    return (async () => {
      while (this.#work) await this.#work;
      return this.#error === null;
    })();
  }

  #regenerate() {
    this.pause();
    this.#pending = true;
    this.#work ??= this.#generateLoop().finally(() => { this.#work = null; });
  }

  async #generateLoop() {
    await null;  // coalesce attribute changes made in the same task
    while (this.#pending) {
      this.#pending = false;
      const ticket = ++this.#ticket;
      try {
        this.#mode('status', `Loading ${this.model}…`);
        const lm = this.#lm ?? await loadLM(this.model);
        if (this.#pending) continue;
        this.#mode('status', 'Writing…');
        const options = { steps: this.steps, temperature: this.temperature, topP: this.topP, seed: this.seed };
        // A prompt longer than the context: say so in the reader's terms, before running.
        const promptTokens = lm.tokenize?.(this.prompt).ids.length ?? 0, context = lm.config?.seqLen;
        if (context && promptTokens > context)
          throw new RangeError(`the prompt is ${promptTokens} tokens long (the start token included), but ` +
            `${this.model} reads at most ${context}: shorten it`);
        const run = await lm.run(this.prompt);
        const generation = await lm.generate(this.prompt, options);
        if (this.#pending || ticket !== this.#ticket) continue;
        this.#view = new GenerationView(run, generation);
        this.#current = -1;
        if (!this.#checkView()) continue;
        this.#mode('figure');
        this.#fillPickers();
        this.#draw();
        this.stopped.textContent = STOPPED[generation.stopped] ?? '';
        announce(this.live, `${this.model} wrote ${generation.steps.length} tokens. ${STOPPED[generation.stopped] ?? ''} ` +
          'Press play, or focus the text and use the arrow keys.');
        this.dispatchEvent(new CustomEvent('generate', { bubbles: true, detail: { generation, run } }));
        if (this.hasAttribute('autoplay') && !reducedMotion()) this.play();
      } catch (error) {
        this.#view = null;
        this.#fail(error);
      }
    }
  }

  // The layer and head must exist in the model.
  #checkView() {
    const v = this.#view;
    try {
      if (this.layer >= v.layers) throw new RangeError(`layer must be below ${v.layers}, the model's layers (got ${this.layer})`);
      if (this.head !== 'mean' && this.head >= v.heads)
        throw new RangeError(`head must be 'mean' or below ${v.heads}, the model's heads (got ${this.head})`);
      return true;
    } catch (error) {
      this.#fail(error);
      return false;
    }
  }

  // One of three views: a status line, the error box, or the figure.
  #mode(mode, message = '') {
    this.statusBox.hidden = mode !== 'status';
    this.errorBox.hidden = mode !== 'error';
    this.body.hidden = this.toolbar.hidden = mode !== 'figure';
    if (mode === 'status') this.statusBox.textContent = message;
    if (mode === 'error') this.errorBox.textContent = `${this.localName}: ${message}`;
    this.#error = mode === 'error' ? message : null;
  }

  #fail(error) {
    this.pause();
    this.#mode('error', error?.message ?? String(error));
    this.dispatchEvent(new CustomEvent('error', { bubbles: true, detail: { message: this.#error, error } }));
  }

  // ——— playback ———

  /**
   * A language model object to use instead of loading `model` (e.g. one from
   * lens.loadModel(bytes, { tokenizer })); null: load `model`.
   */
  get languageModel() { return this.#lm; }
  set languageModel(lm) {
    if (lm !== null && lm !== undefined && (typeof lm.run !== 'function' || typeof lm.generate !== 'function'))
      throw new TypeError('languageModel must be a language model from lens.loadModel (with run and generate), or null');
    this.#lm = lm ?? null;
    if (this.isConnected) this.#regenerate();
  }

  /** The lm.generate result being shown (null before the first). */
  get generation() { return this.#view?.generation ?? null; }
  /** lm.run of the prompt (its causal attention). */
  get promptRun() { return this.#view?.run ?? null; }
  /** Every token's text: the prompt's (BOS first), then the generated ones. */
  get tokens() { return this.#view?.pieces ?? null; }
  /** The message shown in the error state, or null. */
  get error() { return this.#error; }
  /** Whether playback is running. */
  get playing() { return this.#timer !== 0; }

  /** The step shown: 0 … steps − 1, or −1 when only the prompt is shown. */
  get current() { return this.#current; }
  set current(value) {
    const v = this.#view;
    if (!v) throw new Error('current can be set once the figure has generated (await updateComplete)');
    const n = typeof value === 'number' ? value : Number(value);
    if (!Number.isInteger(n) || n < -1 || n >= v.steps.length)
      throw new RangeError(`current must be a whole number from -1 to ${v.steps.length - 1} (got ${JSON.stringify(value)})`);
    this.#goto(n, false);
  }

  #goto(k, user) {
    if (k === this.#current) return;
    this.#current = k;
    this.#draw();
    this.#announce();
    this.dispatchEvent(new CustomEvent('change', { bubbles: true, detail: { name: 'current', value: k, user } }));
  }

  // Runs an action as the reader's (change events say user: true); the reader stepping pauses.
  #user(action) {
    this.pause();
    this.#byUser = true;
    try { action(); } finally { this.#byUser = false; }
  }
  #byUser = false;

  stepForward() {
    if (this.#view && this.#current < this.#view.steps.length - 1) this.#goto(this.#current + 1, this.#byUser);
  }

  stepBack() {
    if (this.#view && this.#current > -1) this.#goto(this.#current - 1, this.#byUser);
  }

  play() {
    const v = this.#view;
    if (this.#timer || !v || v.steps.length === 0) return;
    if (this.#current >= v.steps.length - 1) this.#goto(-1, this.#byUser);
    // Reduced motion: Play writes the next token and stops there (nothing moves on its own).
    if (reducedMotion()) { this.stepForward(); return; }
    this.#timer = setInterval(() => {
      this.stepForward();
      if (this.#current >= this.#view.steps.length - 1) this.pause();
    }, STEP_MS);
    this.#syncPlay();
  }

  pause() {
    clearInterval(this.#timer);
    this.#timer = 0;
    this.#syncPlay();
  }

  toggle() {
    if (this.#timer) this.pause();
    else if (this.input.value !== this.prompt) this.#write();
    else this.#user(() => this.play());
  }

  #syncPlay() {
    this.playButton.setAttribute('aria-pressed', String(this.#timer !== 0));
    this.playButton.textContent = this.#timer ? '❚❚ Pause' : '▶ Play';
    this.playButton.setAttribute('aria-label', this.#timer ? 'Pause' : 'Play: write token by token');
  }

  // The prompt typed in the box: generate from it and play.
  #write() {
    this.prompt = this.input.value;
    this.updateComplete.then((ok) => ok && !reducedMotion() && this.play());
  }

  #key(event) {
    const on = event.target.closest?.('input, select, button');
    if (!this.#view || on?.localName === 'input' || on?.localName === 'select' || (on && isActivation(event))) return;
    const last = this.#view.steps.length - 1;
    const to = { ArrowRight: this.#current + 1, ArrowDown: this.#current + 1, ArrowLeft: this.#current - 1,
      ArrowUp: this.#current - 1, Home: -1, End: last }[event.key];
    if (to !== undefined) {
      event.preventDefault();
      this.pause();
      this.#goto(Math.max(-1, Math.min(last, to)), true);
    } else if (isActivation(event) || event.key === 'k') {
      event.preventDefault();
      this.toggle();
    }
  }

  #pick(name, value) {
    this.#options[name] = value;
    this.#reflecting = true;
    this.setAttribute(name, String(value));
    this.#reflecting = false;
    this.#draw();
    this.dispatchEvent(new CustomEvent('change', { bubbles: true, detail: { name, value, user: true } }));
  }

  #fillPickers() {
    const v = this.#view;
    this.layerPicker.replaceChildren(...Array.from({ length: v.layers }, (_, i) => h('option', { value: i }, `Layer ${i + 1}`)));
    this.headPicker.replaceChildren(h('option', { value: 'mean' }, 'Mean of heads'),
      ...Array.from({ length: v.heads }, (_, i) => h('option', { value: i }, `Head ${i + 1}`)));
  }

  // ——— drawing ———

  redraw() {
    this.#theme = null;
    if (this.#view) this.#draw();
  }

  get theme() { return (this.#theme ??= readTheme(this)); }

  /** What the figure shows now: { tokens, newest, looked (row or null), candidates, filledRows, … }. */
  get frame() {
    const v = this.#view;
    if (!v) return null;
    const k = this.#current, step = k >= 0 ? v.steps[k] : null;
    return {
      current: k, steps: v.steps.length, layer: this.layer, head: this.head,
      shown: v.promptLength + k + 1, promptLength: v.promptLength, newest: step ? v.promptLength + k : -1,
      token: step?.token ?? null, looked: step ? v.looked(k, this.layer, this.head) : null,
      candidates: step?.candidates ?? [], chosen: step?.id ?? null, filledRows: v.filledRows(k), size: v.size,
    };
  }

  /** The heatmap layout in CSS pixels: { gutter, cell, plot, n }. */
  get layout() { return this.#layout && { ...this.#layout }; }

  #draw() {
    const v = this.#view, f = this.frame, theme = this.theme;
    this.layerPicker.value = String(this.layer);
    this.headPicker.value = String(this.head);
    const where = this.#where();
    this.progress.textContent = `${f.current + 1} / ${f.steps}`;
    this.backButton.disabled = f.current < 0;
    this.forwardButton.disabled = f.current >= f.steps - 1;
    this.#drawText(v, f, theme);
    this.#drawLooks(v, f, where);
    this.#drawCandidates(f);
    this.#drawHeatmap(v, f, theme, where);
    this.dispatchEvent(new Event('render'));
  }

  #where() {
    return `layer ${this.layer + 1}, ${this.head === 'mean' ? 'mean of heads' : `head ${this.head + 1}`}`;
  }

  #drawText(v, f, theme) {
    const spans = v.pieces.slice(0, f.shown).map((piece, j) => {
      const cls = j === 0 && piece === '<s>' ? 'bos' : j < v.promptLength ? 'prompt' : 'gen';
      const span = h('span', { class: `${cls}${j === f.newest ? ' new' : ''}`, 'data-index': j }, piece);
      if (f.looked && j < f.looked.length) {
        span.dataset.weight = String(f.looked[j]);
        span.style.backgroundColor = theme.scale.css(f.looked[j]);
        span.style.color = f.looked[j] > 0.5 ? css(theme.bg) : '';
      }
      return span;
    });
    this.text.replaceChildren(...spans);
    this.text.setAttribute('aria-label', f.newest >= 0
      ? `The text so far; the newest token is ${quote(v.labels[f.newest])}. Arrow keys step, space plays or pauses.`
      : 'The prompt. Press play or the right arrow key to write.');
    // Keep the newest token in view inside the text box (never scroll the page).
    const newest = spans[f.newest];
    if (newest && newest.offsetTop + newest.offsetHeight > this.text.scrollTop + this.text.clientHeight)
      this.text.scrollTop = newest.offsetTop + newest.offsetHeight - this.text.clientHeight + 4;
  }

  #drawLooks(v, f, where) {
    if (!f.looked) {
      this.looksTitle.textContent = 'Where the new token looked';
      this.looks.replaceChildren(h('li', { class: 'empty' }, 'Press play to write.'));
      return;
    }
    this.looksTitle.textContent = `To write ${quote(v.labels[f.newest])}, ${quote(v.labels[f.newest - 1])} looked at (${where})`;
    this.looks.replaceChildren(...strongest(f.looked, TOP_LOOKS).map(({ index, value }) =>
      this.#bar(v.labels[index], value, { 'data-index': index })));
  }

  #drawCandidates(f) {
    this.candidates.replaceChildren(...f.candidates.map((c) =>
      this.#bar(tokenLabel(c.token), c.p, { 'data-id': c.id, class: c.id === f.chosen ? 'chosen' : undefined })));
    this.candidatesTitle.textContent = f.candidates.length ? 'Next-token candidates (probability)' : 'Next-token candidates';
  }

  #bar(label, value, attrs) {
    const fill = h('span', { class: 'fill' });
    fill.style.transform = `scaleX(${value})`;
    return h('li', { ...attrs, 'data-value': value, 'aria-label': `${quote(label)} ${fmt(value)}` },
      h('span', { class: 'label', title: label }, clip(label, 16)), h('span', { class: 'track' }, fill),
      h('span', { class: 'value num' }, fmt(value)));
  }

  #drawHeatmap(v, f, theme, where) {
    const n = v.size;
    this.plot.hidden = n === 0;
    if (n === 0) return;
    const width = Math.min(MAX_PLOT, (this.body.clientWidth || MAX_PLOT) - 2);
    let cell = Math.min(24, width / n);
    if (cell >= 4) cell = Math.floor(cell);
    const plot = cell * n, ratio = globalThis.devicePixelRatio || 1;
    this.#layout = { gutter: 0, cell, plot, n };
    const ctx = sizeCanvas(this.canvas, plot, plot, ratio);
    ctx.fillStyle = css(theme.bg);
    ctx.fillRect(0, 0, plot, plot);
    const key = `${this.layer}/${this.head}/${theme.scale.css(1)}`;
    if (this.cellsKey !== key || this.cellsView !== v) {
      const masked = new Uint8Array(n * n);
      for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) masked[i * n + j] = 1;
      this.cells = { cells: cellsLayer(v.matrix(this.layer, this.head), n, theme.scale, masked), mask: maskLayer(masked, n) };
      this.cellsKey = key;
      this.cellsView = v;
    }
    drawMatrix(ctx, { ...this.cells, x: 0, y: 0, size: plot, theme, ratio });
    // Rows not written yet stay blank: the matrix fills in row by row.
    ctx.fillStyle = css(theme.bg);
    ctx.fillRect(0, f.filledRows * cell, plot, plot - f.filledRows * cell);
    if (f.newest > 0) {
      ctx.strokeStyle = css(theme.focus);
      ctx.lineWidth = 2;
      ctx.strokeRect(1, (f.newest - 1) * cell, plot - 2, Math.max(cell, 2));
    }
    this.plot.setAttribute('aria-label', `Causal attention of the text, ${where}: ${f.filledRows} of ${n} rows written; ` +
      'row i is what token i looked at to write token i + 1.');
    this.caption.textContent = `Heatmap: rows are the tokens read (queries), columns the tokens before them (keys); ` +
      `hatched cells are the future, hidden by the causal mask. ${where}.`;
  }

  // The cell under the pointer, as text (rows not written yet and the masked future say so).
  #hover(event) {
    const l = this.#layout, v = this.#view;
    if (!l || !v) return;
    const box = this.canvas.getBoundingClientRect();
    const i = Math.floor((event.clientY - box.top) / l.cell), j = Math.floor((event.clientX - box.left) / l.cell);
    if (i < 0 || j < 0 || i >= l.n || j >= l.n) return;
    const f = this.frame;
    const value = i >= f.filledRows ? 'not written yet' : j > i ? 'masked (the future)'
      : fmt(v.matrix(this.layer, this.head)[i * l.n + j], 4);
    this.readout.replaceChildren(h('span', { class: 'tok' }, quote(v.labels[i])), ' → ',
      h('span', { class: 'tok' }, quote(v.labels[j])), `: ${value}`);
  }

  #announce() {
    const f = this.frame, v = this.#view;
    if (!f.looked) { announce(this.live, 'Back to the prompt.'); return; }
    const top = strongest(f.looked, 2).map(({ index, value }) => `${quote(v.labels[index])} ${fmt(value)}`).join(' and ');
    const p = f.candidates.find((c) => c.id === f.chosen)?.p;
    announce(this.live, `Token ${f.current + 1} of ${f.steps}: ${quote(v.labels[f.newest])}` +
      `${p === undefined ? '' : ` (probability ${fmt(p)})`}. It looked most at ${top}.`);
  }

  // ——— export ———

  /** The figure now as a standalone SVG document (a string); `width` sets the size it shows at. */
  toSVG(options) {
    if (!this.#view) throw new Error(this.#error ?? 'the figure has nothing to export yet');
    const f = this.frame, v = this.#view;
    return generateSVG({ ...f, labels: v.labels, matrix: v.matrix(this.layer, this.head), model: this.model, where: this.#where() },
      readTheme(this), options);
  }

  /** The figure now as a PNG image (rasterised from the SVG). */
  async toPNG(options) {
    return svgToPNG(this.toSVG(), options);
  }

  // model, prompt, steps, temperature, topP, seed, layer, head as properties (setting one reflects it).
  static {
    for (const [name, option] of Object.entries(OPTIONS)) {
      const attribute = option.attribute ?? name;
      Object.defineProperty(this.prototype, name, {
        configurable: true, enumerable: true,
        get() { return this.#options[name] ?? option.default; },
        set(value) {
          if (value === undefined || value === null) {
            this.removeAttribute(attribute);
            return;
          }
          const parsed = option.parse(value);
          this.#reflecting = true;
          this.setAttribute(attribute, String(parsed));
          this.#reflecting = false;
          this.#setOption(name, parsed);
        },
      });
    }
  }
}

if (globalThis.customElements && !customElements.get('attn-generate')) customElements.define('attn-generate', AttnGenerate);
